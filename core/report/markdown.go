package report

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/diffgate/diffgate/core/diff"
)

// markdownDiffBudget bounds the text diffs one Markdown report carries, so
// it stays pasteable into a pull request comment (GitHub allows 65536
// characters); a diff that does not fit is named but left out.
const markdownDiffBudget = 40 << 10

// WriteMarkdown writes the report as GitHub-flavoured Markdown for a pull
// request: the verdict and its reasons, a summary table of the run, tables
// of violations and allowed changes, text diffs in collapsible sections and
// the script's output. Paths are shown as code; one with a newline or
// invalid UTF-8 is quoted as the CLI prints it.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m := &mdWriter{w: bw}
	r.markdown(m)
	return bw.Flush()
}

type mdWriter struct{ w *bufio.Writer }

func (m *mdWriter) line(parts ...string) {
	for _, p := range parts {
		m.w.WriteString(p)
	}
	m.w.WriteByte('\n')
}

func (m *mdWriter) linef(format string, args ...any) { m.line(fmt.Sprintf(format, args...)) }

func (r *Report) markdown(m *mdWriter) {
	if r.Verdict == Pass {
		m.line("## ✅ diffgate: PASS")
	} else {
		m.line("## ❌ diffgate: FAIL")
	}
	m.line()
	if len(r.Reasons) > 0 {
		for _, reason := range r.Reasons {
			m.line("- ", mdText(reason))
		}
	} else if r.Verdict == Pass {
		m.line("No unexpected change; the script exited cleanly.")
	}
	m.line()

	// Summary table.
	n := r.Count()
	m.line("| | |")
	m.line("|---|---|")
	row := func(k, v string) { m.line("| ", k, " | ", v, " |") }
	row("Workspace", mdCode(r.Workspace, true))
	row("Script", mdCode(r.Script.Path, true))
	row("Script SHA-256", orDash(mdCode(r.Script.SHA256, true), r.Script.SHA256))
	row("Arguments", mdList(r.Script.Args, "none"))
	row("Allowlist", mdList(r.Allowlist, "*empty: nothing is allowed*"))
	row("Started", mdText(fmtTime(r.StartedAt)))
	fin := fmtTime(r.FinishedAt)
	if d := r.duration(); d != "" {
		fin += " (" + d + ")"
	}
	row("Finished", mdText(fin))
	status := mdText(ProcessStatus(&r.Process))
	if processOK(&r.Process) {
		status = "✅ " + status
	} else {
		status = "❌ **" + status + "**"
	}
	row("Process", status)
	if len(r.Process.Leftovers) == 0 {
		row("Leftovers", "none")
	} else {
		var ls []string
		for _, l := range r.Process.Leftovers {
			ls = append(ls, fmt.Sprintf("❌ pid %d %s", l.PID, mdCode(l.Cmd, true)))
		}
		row("Leftovers", strings.Join(ls, "<br>"))
	}
	row("Changes", fmt.Sprintf("%d added, %d removed, %d changed: **%d %s**, %d allowed",
		n.Added, n.Removed, n.Changed, n.Violations, pluralWord(n.Violations, "violation"), n.Allowed))
	m.line()

	if rv := r.Review; rv != nil {
		m.line("### Review (the reviewer's draft, not the run's)")
		m.line()
		m.line("| | |")
		m.line("|---|---|")
		row("Decision", orDash(mdText(rv.Decision), rv.Decision))
		row("Draft allowlist", mdList(rv.Allowlist, "*empty: nothing is allowed*"))
		verdict := "✅ PASS"
		if rv.Verdict != Pass {
			verdict = "❌ FAIL"
		}
		for i, reason := range rv.Reasons {
			if i == 0 {
				verdict += ": "
			} else {
				verdict += "; "
			}
			verdict += mdText(reason)
		}
		row("Re-evaluated verdict", verdict)
		row("Note", orDash(mdText(rv.Note), rv.Note))
		m.line()
	}

	violations, allowed := r.splitChanges()
	changeTable(m, fmt.Sprintf("### Violations (%d)", len(violations)), violations, "No violations.")
	if len(r.Unreadable) > 0 {
		m.linef("### Unreadable (%d)", len(r.Unreadable))
		m.line()
		m.line("The gate could not read these entries: it cannot vouch for them, or for anything below them.")
		m.line()
		for _, u := range r.Unreadable {
			m.linef("- %s (%s): %s", mdCode(u.Path, false), u.When, mdText(u.Reason))
		}
		m.line()
	}
	changeTable(m, fmt.Sprintf("### Allowed changes (%d)", len(allowed)), allowed, "No allowed changes.")

	// Text diffs, violations first.
	var withDiff []*diff.Change
	for _, c := range append(violations, allowed...) {
		if c.TextDiff != "" || c.DiffNote != "" {
			withDiff = append(withDiff, c)
		}
	}
	if len(withDiff) > 0 {
		m.line("### Text diffs")
		m.line()
		budget := markdownDiffBudget
		for _, c := range withDiff {
			status := "violation"
			if c.Allowed {
				status = "allowed"
			}
			if c.TextDiff == "" {
				m.linef("- %s (%s, %s): %s.", mdCode(c.Path, false), c.Kind, status, DiffNoteText(c.DiffNote))
				m.line()
				continue
			}
			text := cleanText(c.TextDiff)
			if len(text) > budget {
				m.linef("- %s (%s, %s): diff left out to keep this comment short; see the HTML or JSON report.",
					mdCode(c.Path, false), c.Kind, status)
				m.line()
				continue
			}
			budget -= len(text)
			open := ""
			if !c.Allowed {
				open = " open"
			}
			m.linef("<details%s><summary><code>%s</code> (%s, %s)</summary>", open, html.EscapeString(displayPath(c.Path)), c.Kind, status)
			m.line()
			fenced(m, "diff", text)
			m.line()
			m.line("</details>")
			m.line()
		}
	}

	// Output.
	p := &r.Process
	out, errOut := outputText(p.StdoutHead, p.StdoutTail), outputText(p.StderrHead, p.StderrTail)
	if out != "" || errOut != "" {
		m.line("### Output")
		m.line()
		for _, s := range []struct{ name, text string }{{"stdout", out}, {"stderr", errOut}} {
			if s.text == "" {
				m.linef("%s: *empty*", s.name)
				m.line()
				continue
			}
			m.linef("<details><summary>%s (%d %s)</summary>", s.name, lineCount(s.text), pluralWord(lineCount(s.text), "line"))
			m.line()
			fenced(m, "text", s.text)
			m.line()
			m.line("</details>")
			m.line()
		}
	}
	m.line("<sub>diffgate report · schema ", Schema, "</sub>")
}

// changeTable writes a heading and a table of changes (or the empty text).
func changeTable(m *mdWriter, heading string, cs []*diff.Change, empty string) {
	m.line(heading)
	m.line()
	if len(cs) == 0 {
		m.line(empty)
		m.line()
		return
	}
	m.line("| Kind | Path | Detail | Rule | Risk |")
	m.line("|---|---|---|---|---|")
	for _, c := range cs {
		detail := changeDetail(c)
		risk := ""
		if c.Risk != diff.NoRisk {
			risk = "⚠️ **" + mdText(string(c.Risk)) + "**"
		}
		rule := ""
		if c.Rule != "" {
			rule = mdCode(c.Rule, true)
		}
		m.line("| ", kindEmoji(c.Kind), " ", string(c.Kind), " | ", mdCode(c.Path, true), " | ",
			orDash(mdCode(detail, true), detail), " | ", rule, " | ", risk, " |")
	}
	m.line()
}

func kindEmoji(k diff.Kind) string {
	switch k {
	case diff.Added:
		return "🟢"
	case diff.Removed:
		return "🔴"
	}
	return "🟡"
}

// orDash returns s, or "—" when raw is empty.
func orDash(s, raw string) string {
	if raw == "" {
		return "—"
	}
	return s
}

// mdList renders items as code spans, or none when there are none.
func mdList(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = mdCode(it, true)
	}
	return strings.Join(out, " ")
}

// mdCode renders s (a path or other untrusted text) as a code span. The
// fence is longer than any run of backticks in s; a space pads s when it
// starts or ends with a backtick or a space (CommonMark strips one on each
// side). In a table cell a | is escaped as \|, which GFM reads back as |
// even inside code spans. s is first made one safe line by displayPath.
func mdCode(s string, inTable bool) string {
	s = displayPath(s)
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' || s[len(s)-1] == ' ' {
		s = " " + s + " "
	}
	if inTable {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	return fence + s + fence
}

// mdText escapes s as inline Markdown text, in a table cell or not: the
// characters that could start markup are backslash-escaped (| as \|, which
// a GFM table reads back as |) and line breaks become spaces.
func mdText(s string) string {
	s = cleanText(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '&', '~', '#', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '|':
			b.WriteString(`\|`)
		case '\n', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fenced writes text as a fenced code block whose fence is longer than any
// run of backticks at the start of one of its lines.
func fenced(m *mdWriter, lang, text string) {
	longest := 2
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimLeft(l, " ")
		n := len(t) - len(strings.TrimLeft(t, "`"))
		longest = max(longest, n)
	}
	fence := strings.Repeat("`", longest+1)
	m.line(fence, lang)
	m.w.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		m.w.WriteByte('\n')
	}
	m.line(fence)
}

func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func pluralWord(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}
