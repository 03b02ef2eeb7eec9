package report

import (
	"fmt"
	"html"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// MaxMarkdown is the most a Markdown report holds, in bytes (so in
// characters too): GitHub takes a pull-request comment of up to 65,536
// characters. A run too large for it is summed up: violations first with
// their diffs (each cut to mdDiffMax), then the allowed changes rolled up
// per folder, then a line saying what was left out.
const MaxMarkdown = 65536

const (
	mdDiffMax     = 8 << 10  // one diff in the Markdown, at most (textdiff.Cut)
	mdTailReserve = 10 << 10 // room kept for the output, the left-out line and the footer
	mdOutputMax   = 3 << 10  // each output stream, at most (its end is kept)
	mdListMax     = 40       // allowlist entries, arguments, reasons or leftovers listed
	mdTableMax    = 100      // allowed changes listed one by one; more are rolled up
)

// WriteMarkdown writes the report as GitHub-flavoured Markdown for a pull
// request, at most MaxMarkdown bytes whatever the run: the verdict and its
// reasons, a summary table of the run, the reviewer's review (if any), the
// blocked actions and changes outside the workspace, the violations and
// their text diffs, the allowed changes (long lists with folders rolled up:
// RollUpList), the script's output and a line naming what was left out. Paths are shown as code; one with a newline or invalid UTF-8 is
// quoted as the CLI prints it.
func (r *Report) WriteMarkdown(w io.Writer) error {
	m := &mdWriter{}
	r.markdown(m)
	_, err := io.WriteString(w, m.b.String())
	return err
}

type mdWriter struct{ b strings.Builder }

func (m *mdWriter) line(parts ...string) {
	for _, p := range parts {
		m.b.WriteString(p)
	}
	m.b.WriteByte('\n')
}

func (m *mdWriter) linef(format string, args ...any) { m.line(fmt.Sprintf(format, args...)) }

// len is the bytes written so far.
func (m *mdWriter) len() int { return m.b.Len() }

// leftOut counts what a Markdown report had no room for.
type leftOut struct {
	violations, unreadable, blocked, outside, network, allowed, diffs, cutDiffs int
}

func (l leftOut) String() string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, count.Of(n, what))
		}
	}
	add(l.violations, "violation")
	add(l.unreadable, "unreadable entry")
	add(l.blocked, "blocked action")
	add(l.outside, "change outside the workspace")
	add(l.network, "network request")
	add(l.allowed, "allowed row")
	add(l.diffs, "text diff")
	if len(parts) == 0 && l.cutDiffs == 0 {
		return ""
	}
	s := "Left out to fit a pull-request comment: "
	if len(parts) > 0 {
		s += strings.Join(parts, ", ")
	}
	if l.cutDiffs > 0 {
		if len(parts) > 0 {
			s += "; "
		}
		s += count.Of(l.cutDiffs, "diff") + " cut short"
	}
	return s + ". The HTML and JSON reports have everything."
}

// markdown writes the document, one section after another.
func (r *Report) markdown(m *mdWriter) {
	r.mdVerdict(m)
	r.mdSummary(m)
	r.mdReview(m)

	var left leftOut
	violations, allowed := r.splitChanges()
	notes := r.renameNotes()
	vrows, arows := RollUpList(violations), RollUpList(allowed)
	// Room kept for the allowed changes' rows, bounded.
	allowedReserve := min(300+200*len(arows), 12<<10)
	limit := MaxMarkdown - mdTailReserve

	// The blocked actions and the changes outside the workspace come
	// first, as in the app; then the violations: rows while they fit in
	// half of what is left, then diffs.
	r.mdBlocked(m, limit-allowedReserve, &left)
	r.mdOutside(m, limit-allowedReserve, &left)
	r.mdNetwork(m, limit-allowedReserve, &left)
	mdViolations(m, len(violations), vrows, limit-allowedReserve, &left, notes)
	r.mdUnreadable(m, limit-allowedReserve, &left)
	mdDiffs(m, vrows, limit-allowedReserve, &left, true, notes)
	mdAllowed(m, len(allowed), arows, limit, &left, notes)
	r.mdOutput(m)
	if l := left.String(); l != "" {
		m.line("*", mdText(l), "*")
		m.line()
	}
	m.line("<sub>diffgate report · schema ", Schema, "</sub>")
}

// row writes one row of a two-column table.
func (m *mdWriter) row(k, v string) { m.line("| ", k, " | ", v, " |") }

// mdVerdict writes the heading (PASS or FAIL) and the verdict's reasons.
func (r *Report) mdVerdict(m *mdWriter) {
	if r.Verdict == Pass {
		m.line("## ✅ diffgate: PASS")
	} else {
		m.line("## ❌ diffgate: FAIL")
	}
	m.line()
	if len(r.Reasons) > 0 {
		for i, reason := range r.Reasons {
			if i == mdListMax {
				m.linef("- … and %d more", len(r.Reasons)-i)
				break
			}
			m.line("- ", mdText(reason))
		}
	} else if r.Verdict == Pass {
		m.line("No unexpected change; the script exited cleanly.")
	}
	m.line()
}

// mdSummary writes the summary table of the run: what ran, how it was
// contained, and what it changed.
func (r *Report) mdSummary(m *mdWriter) {
	m.line("| | |")
	m.line("|---|---|")
	r.mdRunRows(m)
	r.mdContainmentRows(m)
	r.mdResultRows(m)
	m.line()
}

// mdRunRows writes the summary rows of what ran: workspace, script,
// allowlist, times, process and stage.
func (r *Report) mdRunRows(m *mdWriter) {
	m.row("Workspace", mdCode(r.Workspace, true))
	m.row("Script", mdCode(r.Script.Line(), true))
	m.row("Script SHA-256", orDash(mdCode(r.Script.SHA256, true), r.Script.SHA256))
	m.row("Arguments", mdList(r.Script.Args, "none"))
	m.row("Allowlist", mdList(r.Allowlist, "*empty: nothing is allowed*"))
	if a := r.AllowlistApproved; a != nil {
		m.row("Approved allowlist", mdText(strings.TrimPrefix(a.Line(), "allowlist: ")))
	}
	m.row("Started", mdText(fmtTime(r.StartedAt)))
	fin := fmtTime(r.FinishedAt)
	if d := r.duration(); d != "" {
		fin += " (" + d + ")"
	}
	m.row("Finished", mdText(fin))
	status := mdText(ProcessStatus(&r.Process))
	if processOK(&r.Process) {
		status = "✅ " + status
	} else {
		status = "❌ **" + status + "**"
	}
	m.row("Process", status)
	if st := r.Stage; st != nil {
		m.row("Stage", mdText(st.Summary()))
	}
}

// mdContainmentRows writes the summary rows of the containment: its mode,
// grants and dropped variables, the blocked actions, the paths watched
// outside the workspace and the network.
func (r *Report) mdContainmentRows(m *mdWriter) {
	if c := r.Containment; c != nil {
		line := mdText(c.Summary())
		if len(c.Missing()) > 0 || c.Mode == "off" {
			line = "❌ **" + line + "**"
		}
		m.row("Containment", line)
		if g := c.GrantsLine(); g != "" {
			m.row("Granted", mdText(cutText(quote.Clean(strings.TrimPrefix(g, "granted: ")), 2<<10)))
		}
		if len(c.DroppedEnv) > 0 {
			m.row("Variables dropped", mdText(cutText(quote.Clean(strings.Join(c.DroppedEnv, ", ")), 2<<10)))
		}
	}
	if note := r.Containment.NotObservable(); note != "" {
		m.row("Blocked actions", "❌ **"+mdText(note)+"**")
	} else if c := r.Containment; c != nil && c.Mode != "off" || len(r.Blocked) > 0 {
		if len(r.Blocked) == 0 {
			m.row("Blocked actions", "none")
		} else {
			m.row("Blocked actions", fmt.Sprintf("❌ **%d blocked**", r.blockedCount()))
		}
	}
	if w := r.Watch; w != nil {
		line := mdText(cutText(quote.Clean(w.Summary()), 2<<10))
		if len(r.Outside) > 0 {
			line = fmt.Sprintf("❌ **%s**; ", count.Of(len(r.Outside), "change")) + line
		}
		m.row("Outside the workspace", line)
	}
	if line := r.NetworkSummary(); line != "" {
		m.row("Network", mdText(line))
	}
}

// mdResultRows writes the summary rows of what the run left: processes
// left over, the changes counted and the text diffs' coverage.
func (r *Report) mdResultRows(m *mdWriter) {
	if len(r.Process.Leftovers) == 0 {
		m.row("Leftovers", "none")
	} else {
		var ls []string
		for i, l := range r.Process.Leftovers {
			if i == mdListMax {
				ls = append(ls, fmt.Sprintf("… and %d more", len(r.Process.Leftovers)-i))
				break
			}
			ls = append(ls, fmt.Sprintf("❌ pid %d %s", l.PID, mdCode(l.Cmd, true)))
		}
		m.row("Leftovers", strings.Join(ls, "<br>"))
	}
	n := r.Count()
	m.row("Changes", fmt.Sprintf("%d added, %d removed, %d changed: **%d %s**, %d allowed",
		n.Added, n.Removed, n.Changed, n.Violations, count.Word(n.Violations, "violation"), n.Allowed))
	if s := r.DiffCoverage().Summary(); s != "" {
		m.row("Text diffs", mdText(s))
	}
}

// mdReview writes the reviewer's draft, when the report carries one.
func (r *Report) mdReview(m *mdWriter) {
	rv := r.Review
	if rv == nil {
		return
	}
	m.line("### Review (the reviewer's draft, not the run's)")
	m.line()
	m.line("| | |")
	m.line("|---|---|")
	m.row("Decision", orDash(mdText(rv.Decision), rv.Decision))
	m.row("Draft allowlist", mdList(rv.Allowlist, "*empty: nothing is allowed*"))
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
	m.row("Re-evaluated verdict", verdict)
	note := quote.Clean(rv.Note)
	if len(note) > 2<<10 {
		note = cutText(note, 2<<10) + " …"
	}
	m.row("Note", orDash(mdText(note), rv.Note))
	m.line()
}

// mdViolations writes the violations' heading and their rows (n
// violations, rolled up in vrows) while they fit in half of what is left
// under limit, then a line for those left out.
func mdViolations(m *mdWriter, n int, vrows []ListRow, limit int, left *leftOut, notes map[string]renameNote) {
	m.linef("### Violations (%d)", n)
	m.line()
	if n == 0 {
		m.line("No violations.")
		m.line()
		return
	}
	rowLimit := m.len() + (limit-m.len())/2
	shown := changeTable(m, vrows, rowLimit, notes)
	if shown < len(vrows) {
		rest := 0
		for _, row := range vrows[shown:] {
			rest += len(row.Changes)
		}
		left.violations += rest
		m.linef("… and %d more %s, not listed here.", rest, count.Word(rest, "violation"))
		m.line()
	}
}

// mdUnreadable writes the entries the gate could not read, while they fit
// under limit.
func (r *Report) mdUnreadable(m *mdWriter, limit int, left *leftOut) {
	if len(r.Unreadable) == 0 {
		return
	}
	m.linef("### Unreadable (%d)", len(r.Unreadable))
	m.line()
	m.line("The gate could not read these entries: it cannot vouch for them, or for anything below them.")
	m.line()
	for i, u := range r.Unreadable {
		l := fmt.Sprintf("- %s (%s): %s", mdCode(u.Path, false), u.When, mdText(u.Reason))
		if i >= mdTableMax || m.len()+len(l) > limit {
			left.unreadable += len(r.Unreadable) - i
			m.linef("- … and %d more", len(r.Unreadable)-i)
			break
		}
		m.line(l)
	}
	m.line()
}

// mdAllowed writes the allowed changes (n, rolled up in arows): a row
// each, folders rolled up in a long list, then their diffs.
func mdAllowed(m *mdWriter, n int, arows []ListRow, limit int, left *leftOut, notes map[string]renameNote) {
	m.linef("### Allowed changes (%d)", n)
	m.line()
	if n == 0 {
		m.line("No allowed changes.")
		m.line()
		return
	}
	if shown := changeTable(m, arows, limit, notes); shown < len(arows) {
		left.allowed += len(arows) - shown
		m.linef("… and %d more %s, not listed here.", len(arows)-shown, count.Word(len(arows)-shown, "row"))
		m.line()
	}
	mdDiffs(m, arows, limit, left, false, notes)
}

// mdOutput writes the end of each of the script's output streams.
func (r *Report) mdOutput(m *mdWriter) {
	p := &r.Process
	out, errOut := outputText(p.StdoutHead, p.StdoutTail), outputText(p.StderrHead, p.StderrTail)
	if out == "" && errOut == "" {
		return
	}
	m.line("### Output")
	m.line()
	for _, s := range []struct{ name, text string }{{"stdout", out}, {"stderr", errOut}} {
		if s.text == "" {
			m.linef("%s: *empty*", s.name)
			m.line()
			continue
		}
		text := s.text
		if len(text) > mdOutputMax {
			text = "[… " + count.Of(lineCount(text)-lineCount(tailText(text, mdOutputMax)), "line") + " cut …]\n" + tailText(text, mdOutputMax)
		}
		m.linef("<details><summary>%s (%d %s)</summary>", s.name, lineCount(s.text), count.Word(lineCount(s.text), "line"))
		m.line()
		fenced(m, "text", text)
		m.line()
		m.line("</details>")
		m.line()
	}
}

// mdFindings writes a group of findings: a heading, what they are, and a
// table of n rows (row(i) each, columns head) while the document stays
// under limit. It returns how many rows it had no room for.
func mdFindings(m *mdWriter, title, intro string, head []string, n int, row func(i int) string, limit int) (left int) {
	if n == 0 {
		return 0
	}
	m.linef("### %s (%d)", title, n)
	m.line()
	m.line(intro)
	m.line()
	m.line("| " + strings.Join(head, " | ") + " |")
	m.line(strings.Repeat("|---", len(head)) + "|")
	for i := 0; i < n; i++ {
		l := row(i)
		if i >= mdTableMax || m.len()+len(l) > limit {
			m.linef("| … | %d more |%s", n-i, strings.Repeat(" |", len(head)-2))
			left = n - i
			break
		}
		m.line(l)
	}
	m.line()
	return left
}

// mdBlocked writes the blocked actions.
func (r *Report) mdBlocked(m *mdWriter, limit int, left *leftOut) {
	left.blocked += mdFindings(m, "Blocked actions", "Containment prevented these actions: each fails the gate, and no allowlist entry allows one.",
		[]string{"Kind", "Target", "Process", "Op", "Count"}, len(r.Blocked), func(i int) string {
			b := &r.Blocked[i]
			return "| ⛔ " + mdText(b.Kind) + " | " + mdCode(b.Target, true) + " | " + orDash(mdCode(blockedProcess(b), true), blockedProcess(b)) +
				" | " + orDash(mdText(b.Op), b.Op) + " | " + fmt.Sprint(max(b.Count, 1)) + " |"
		}, limit)
	if note := r.BlockedDroppedNote(); note != "" && len(r.Blocked) > 0 {
		m.line(mdText(note) + ".")
		m.line()
	}
}

// mdNetwork writes the requests through the gate's proxy (--net-allow).
func (r *Report) mdNetwork(m *mdWriter, limit int, left *leftOut) {
	left.network += mdFindings(m, "Network",
		"Requests through the gate's proxy (--net-allow): a refused one is a blocked action too.",
		[]string{"", "Method", "Host", "Bytes out", "Bytes in", "Process", "Reason"}, len(r.Network), func(i int) string {
			q := &r.Network[i]
			mark := "✅"
			if !q.Allowed {
				mark = "⛔"
			}
			who := q.Cmd
			if q.PID > 0 {
				who = fmt.Sprintf("%d %s", q.PID, q.Cmd)
			}
			return "| " + mark + " | " + mdText(q.Method) + " | " + mdCode(q.Target(), true) + " | " + Size(q.BytesOut) + " | " + Size(q.BytesIn) +
				" | " + orDash(mdCode(who, true), who) + " | " + orDash(mdText(q.Reason), q.Reason) + " |"
		}, limit)
	if r.NetworkDropped > 0 && len(r.Network) > 0 {
		m.linef("%s, beyond the list's bound, counted but not listed.", count.Of(r.NetworkDropped, "more request"))
		m.line()
	}
}

// mdOutside writes the changes outside the workspace and what the watch
// could not watch.
func (r *Report) mdOutside(m *mdWriter, limit int, left *leftOut) {
	left.outside += mdFindings(m, "Outside the workspace",
		"Changes in watched paths outside the workspace (stat only, contents never read): each fails the gate, and no allowlist entry allows one.",
		[]string{"Kind", "Path", "Detail"}, len(r.Outside), func(i int) string {
			o := &r.Outside[i]
			d := o.Detail()
			return "| 🟠 " + string(o.Kind) + " | " + mdCode(o.Path, true) + " | " + orDash(mdCode(d, true), d) + " |"
		}, limit)
	if w := r.Watch; w != nil && len(w.Unwatchable) > 0 {
		m.linef("### Not watchable (%d)", len(w.Unwatchable))
		m.line()
		m.line("The gate could not stat these paths outside the workspace, before or after the run: a change there would not be seen.")
		m.line()
		for i, u := range w.Unwatchable {
			l := fmt.Sprintf("- %s: %s", mdCode(u.Path, false), mdText(u.Reason))
			if i >= mdListMax || m.len()+len(l) > limit {
				m.linef("- … and %d more", len(w.Unwatchable)-i)
				break
			}
			m.line(l)
		}
		m.line()
	}
}

// mdDiffs writes the text diffs (or diff notes) of cs, each cut to
// mdDiffMax, while the document stays under limit; open says whether the
// <details> start open (violations). The added file of a rename with edits
// shows its diff from the old file (notes).
func mdDiffs(m *mdWriter, rows []ListRow, limit int, left *leftOut, open bool, notes map[string]renameNote) {
	status, attr := "allowed", ""
	if open {
		status, attr = "violation", " open"
	}
	for _, row := range rows {
		if row.Folder != "" { // rolled up: its diffs are in the JSON
			for _, c := range row.Changes {
				if c.TextDiff != "" {
					left.diffs++
				}
			}
			continue
		}
		c := row.Changes[0]
		td, fromOld, why := diffToShow(c, notes)
		from := ""
		if fromOld {
			from = ", from the old file" // a rename with edits
		}
		if td == "" {
			note := DiffNoteText(c.DiffNote)
			if why != "" { // a rename's half: its content is shown once
				note = why
			}
			// A change of metadata says what changed (MetaChanges, as the
			// HTML's table and the app mark it).
			if meta := metaLine(c.Before, c.After); meta != "" {
				note = strings.TrimPrefix(strings.Join([]string{meta, note}, "; "), "; ")
				note = strings.TrimSuffix(note, "; ")
			}
			if note != "" && m.len()+300 < limit {
				m.linef("- %s (%s, %s): %s.", mdCode(c.Path, false), c.Kind, status, mdText(note))
				m.line()
			}
			continue
		}
		room := min(mdDiffMax, limit-m.len()-300-len(c.Path))
		if room < 1<<10 {
			left.diffs++
			continue
		}
		// Whitespace is left as it is (a copied line keeps its real
		// spaces): a note under the diff says when changed lines end in
		// whitespace or a carriage return, which only the HTML and the app
		// mark.
		text := cleanDiff(td)
		wsNote := textdiff.TrailingSpaceChanged(text)
		text = strings.ReplaceAll(text, "\r", "")
		if cut := textdiff.Cut(text, room); cut != text {
			text = cut
			left.cutDiffs++
		}
		m.linef("<details%s><summary><code>%s</code> (%s, %s%s)</summary>", attr, html.EscapeString(quote.Path(c.Path)), c.Kind, status, from)
		m.line()
		fenced(m, "diff", text)
		m.line()
		if wsNote {
			m.line("*Some changed lines end in spaces, tabs or a carriage return, which this block cannot show; the HTML report marks them.*")
			m.line()
		}
		m.line("</details>")
		m.line()
	}
}

// tailText is the end of s in at most max bytes, from a line start when
// there is one.
func tailText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	t := s[len(s)-max:]
	if i := strings.IndexByte(t, '\n'); i >= 0 && i+1 < len(t) {
		return t[i+1:]
	}
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:]
	}
	return t
}

// cutText is the start of s in at most max bytes, never inside a character.
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

// changeTable writes a table of changes, its rows while the document stays
// under limit, and returns how many rows it wrote.
// A Rule or Risk column empty in every row is left out; a rolled-up
// folder is one row with its counts and up to 3 rules.
func changeTable(m *mdWriter, rows []ListRow, limit int, notes map[string]renameNote) int {
	hasRule, hasRisk := false, false
	for i := range rows {
		for _, c := range rows[i].Changes {
			hasRule = hasRule || c.Rule != ""
			hasRisk = hasRisk || c.Risk != diff.NoRisk && rows[i].Folder == ""
		}
	}
	head, sep := "| Kind | Path | Detail |", "|---|---|---|"
	if hasRule {
		head, sep = head+" Rule |", sep+"---|"
	}
	if hasRisk {
		head, sep = head+" Risk |", sep+"---|"
	}
	m.line(head)
	m.line(sep)
	shown := 0
	for i := range rows {
		l := mdRow(&rows[i], notes, hasRule, hasRisk)
		if m.len()+len(l) > limit && shown > 0 {
			break
		}
		m.line(l)
		shown++
	}
	m.line()
	return shown
}

// mdRow is one row of changeTable.
func mdRow(row *ListRow, notes map[string]renameNote, hasRule, hasRisk bool) string {
	var kind, path, detail, rule, risk string
	if row.Folder != "" {
		kind, path, detail = "📁 folder", mdCode(row.Folder+"/", true), mdText(row.Tally.String())
		rules := make([]string, len(row.Rules))
		for i, r := range row.Rules {
			rules[i] = mdCode(r, true)
		}
		rule = strings.Join(rules, " ")
	} else {
		c := row.Changes[0]
		d := detailWith(c, notes)
		kind, path, detail = kindEmoji(c.Kind)+" "+string(c.Kind), mdCode(c.Path, true), orDash(mdCode(d, true), d)
		if c.Risk != diff.NoRisk {
			risk = "⚠️ **" + mdText(string(c.Risk)) + "**"
		}
		if c.Rule != "" {
			rule = mdCode(c.Rule, true)
		}
	}
	l := "| " + kind + " | " + path + " | " + detail + " |"
	if hasRule {
		l += " " + rule + " |"
	}
	if hasRisk {
		l += " " + risk + " |"
	}
	return l
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
	out := make([]string, 0, min(len(items), mdListMax+1))
	size := 0
	for i, it := range items {
		if i == mdListMax || size > 4<<10 {
			out = append(out, fmt.Sprintf("… and %d more", len(items)-i))
			break
		}
		out = append(out, mdCode(cutText(it, 512), true))
		size += len(out[len(out)-1])
	}
	return strings.Join(out, " ")
}

// mdCode renders s (a path or other untrusted text) as a code span. The
// fence is longer than any run of backticks in s; a space pads s when it
// starts or ends with a backtick or a space (CommonMark strips one on each
// side). In a table cell a | is escaped as \|, which GFM reads back as |
// even inside code spans. s is first made one safe line by displayPath.
func mdCode(s string, inTable bool) string {
	s = quote.Path(s)
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
	s = quote.Clean(s)
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
	m.b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		m.b.WriteByte('\n')
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
