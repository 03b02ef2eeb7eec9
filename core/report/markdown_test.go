package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"golang.org/x/net/html"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/quote"
)

// renderMarkdown renders the report's Markdown as GitHub would (GFM, raw
// HTML such as <details> passed through) and parses the result.
func renderMarkdown(t *testing.T, r *Report) (string, *html.Node) {
	t.Helper()
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := gm.Convert(md.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	return md.String(), doc
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func isElem(tag string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == tag }
}

func textOf(n *html.Node) string {
	var b strings.Builder
	for _, t := range findAll(n, func(n *html.Node) bool { return n.Type == html.TextNode }) {
		b.WriteString(t.Data)
	}
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// tableRows returns each body row of each table as cell texts, checking
// that every row has as many cells as the header (an unescaped | adds one).
func tableRows(t *testing.T, doc *html.Node) [][][]string {
	t.Helper()
	var tables [][][]string
	for _, tbl := range findAll(doc, isElem("table")) {
		head := findAll(tbl, isElem("th"))
		var rows [][]string
		for _, tr := range findAll(tbl, isElem("tr")) {
			tds := findAll(tr, isElem("td"))
			if len(tds) == 0 {
				continue
			}
			if len(tds) != len(head) {
				t.Errorf("a row has %d cells, the header %d: %q", len(tds), len(head), textOf(tr))
			}
			var cells []string
			for _, td := range tds {
				cells = append(cells, textOf(td))
			}
			rows = append(rows, cells)
		}
		tables = append(tables, rows)
	}
	return tables
}

func column(rows [][]string, i int) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r[i])
	}
	return out
}

func TestMarkdownRendersAsGFM(t *testing.T) {
	r := fixtureReport()
	md, doc := renderMarkdown(t, r)
	if h := findAll(doc, isElem("h2")); len(h) == 0 || textOf(h[0]) != "❌ diffgate: FAIL" {
		t.Fatalf("heading: %v", md[:40])
	}
	var reasons []string
	for _, li := range findAll(findAll(doc, isElem("ul"))[0], isElem("li")) {
		reasons = append(reasons, textOf(li))
	}
	if strings.Join(reasons, "|") != strings.Join(r.Reasons, "|") {
		t.Errorf("reasons %q, want %q", reasons, r.Reasons)
	}
	tables := tableRows(t, doc)
	if len(tables) != 3 {
		t.Fatalf("%d tables, want summary, violations, allowed", len(tables))
	}
	summary := map[string]string{}
	for _, row := range tables[0] {
		summary[row[0]] = row[1]
	}
	for k, want := range map[string]string{
		"Workspace":      "/home/ci/work/repo",
		"Script":         "/home/ci/work/gen.sh",
		"Script SHA-256": r.Script.SHA256,
		"Arguments":      "--release --out build dir",
		"Allowlist":      ".cache/ logs/run.log added:docs/**",
		"Started":        "2026-03-14T09:26:53Z",
		"Finished":       "2026-03-14T09:27:05Z (12.4s)",
		"Process":        "❌ exited 3",
		"Leftovers":      "❌ pid 4211 sleep 300",
		"Changes":        "6 added, 1 removed, 2 changed: 6 violations, 3 allowed",
	} {
		if summary[k] != want {
			t.Errorf("summary %s = %q, want %q", k, summary[k], want)
		}
	}
	// Ranked: the risk, the edits, the removal, the added files.
	wantV := []string{"link-to-etc", "config.json", "run.sh", "data/old.csv", `"notes\nevil.txt"`, `"weird-\xff\xfe.bin"`}
	if got := column(tables[1], 1); strings.Join(got, "|") != strings.Join(wantV, "|") {
		t.Errorf("violation paths %q, want %q", got, wantV)
	}
	wantA := []string{".cache/index.bin", "docs/a|b `x`.md", "logs/run.log"}
	if got := column(tables[2], 1); strings.Join(got, "\x00") != strings.Join(wantA, "\x00") {
		t.Errorf("allowed paths %q, want %q", got, wantA)
	}
	if got := column(tables[1], 2); got[1] != "content +4 −3 (176 B -> 218 B)" || got[0] != "symlink-escape -> /etc/passwd, allow with symlink-escape:link-to-etc" || got[2] != "mode 0644 -> 0755" {
		t.Errorf("details %q", got)
	}
	if got := column(tables[1], 3); got[0] != "⚠️ symlink-escape" || got[1] != "" {
		t.Errorf("risks %q", got)
	}
	if got := column(tables[2], 3); strings.Join(got, " ") != ".cache/ added:docs/** logs/run.log" {
		t.Errorf("rules %q", got)
	}

	// Text diffs: the exact diff, in a ```diff block inside <details>, the
	// violation's open and the allowed one's closed.
	var diffs []string
	for _, c := range findAll(doc, func(n *html.Node) bool { return isElem("code")(n) && attr(n, "class") == "language-diff" }) {
		diffs = append(diffs, textOf(c))
	}
	if len(diffs) != 2 || diffs[0] != r.Changes[1].TextDiff || diffs[1] != r.Changes[3].TextDiff {
		t.Fatalf("diff blocks %q", diffs)
	}
	details := findAll(doc, isElem("details"))
	if len(details) != 4 {
		t.Fatalf("%d <details>, want 2 diffs + stdout + stderr", len(details))
	}
	sum := textOf(findAll(details[1], isElem("summary"))[0])
	if sum != "docs/a|b `x`.md (added, allowed)" {
		t.Errorf("summary %q", sum)
	}
	if attr(details[0], "open") == "" && !strings.Contains(md, "<details open>") || strings.Count(md, "<details open>") != 1 {
		t.Errorf("only the violation's diff should be open")
	}
	var outputs []string
	for _, c := range findAll(doc, func(n *html.Node) bool { return isElem("code")(n) && attr(n, "class") == "language-text" }) {
		outputs = append(outputs, textOf(c))
	}
	wantErr := "warning: patched config.json for debugging\nerror: upload to https://collect.example.net failed\n"
	if len(outputs) != 2 || outputs[0] != r.Process.StdoutTail || outputs[1] != wantErr {
		t.Fatalf("outputs %q", outputs)
	}
}

// hostileReport has paths, rules, arguments and output written to break
// Markdown and HTML: pipes, backtick runs, leading/trailing backticks and
// spaces, markup, HTML, fences in the output.
func hostileReport() *Report {
	paths := []string{
		"a`b", "``x``", "`lead", "trail`", " spaced ", "|", "x|y|z", `back\slash|pipe`,
		"<img src=x onerror=alert(1)>", "**bold** [link](http://evil.example) _u_",
		"tab\there", "esc\x1b[31mred", "cr\rlf",
	}
	r := &Report{
		Verdict:   Fail,
		Reasons:   []string{"2 <b>unexpected</b> | changes", "*script* exited `3`"},
		Workspace: "/w/|`ws`|",
		Script:    Script{Path: "/w/<script>alert(1)</script>.sh", SHA256: "", Args: []string{"a|b", "`c`", "<d>"}},
		Allowlist: []string{"x|y", "`z`/**"},
		Process: Process{ExitCode: 1, Leftovers: []Leftover{{PID: 7, Cmd: "sh -c 'a | b `c`'"}},
			StdoutTail: "```\nnot the end\n````\n</details><script>alert(1)</script>\n",
			StderrTail: "\xff\xfe binary \x00 junk\n"},
	}
	for _, p := range paths {
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Added, Aspects: []diff.Aspect{},
			After: &snapshot.Entry{Path: p, Type: snapshot.File, Perm: 0o644, UID: -1, GID: -1}, Rule: "|`r`|"})
	}
	evil := "</summary></details><script>alert(1)</script>"
	d, _ := textdiff.Lines([]byte("```\nx\n"), []byte("````\ny\n"), evil)
	r.Changes = append(r.Changes, diff.Change{Path: evil, Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
		Before: &snapshot.Entry{Path: evil, Type: snapshot.File, Perm: 0o644, UID: -1, GID: -1},
		After:  &snapshot.Entry{Path: evil, Type: snapshot.File, Perm: 0o644, UID: -1, GID: -1}, TextDiff: d})
	return r
}

func TestMarkdownEscapesHostileText(t *testing.T) {
	r := hostileReport()
	md, doc := renderMarkdown(t, r)
	for _, tag := range []string{"script", "img", "a", "b", "strong", "em"} {
		if n := findAll(doc, isElem(tag)); len(n) > 0 && !(tag == "strong" && allInside(n, "td", "li")) {
			// <strong> is ours (process status); everything else is injected.
			t.Errorf("injected <%s> element: %q", tag, textOf(n[0]))
		}
	}
	tables := tableRows(t, doc)
	if len(tables) != 2 {
		t.Fatalf("%d tables, want 2 (summary, violations)", len(tables))
	}
	var want []string
	order := RankOrder(r.Changes)
	for _, i := range order {
		want = append(want, quote.Path(r.Changes[i].Path))
	}
	if got := column(tables[1], 1); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("paths do not render verbatim:\n got %q\nwant %q", got, want)
	}
	for k, rule := range column(tables[1], 3) {
		if order[k] != len(r.Changes)-1 && rule != "|`r`|" {
			t.Errorf("rule renders as %q", rule)
		}
	}
	summary := map[string]string{}
	for _, row := range tables[0] {
		summary[row[0]] = row[1]
	}
	if summary["Workspace"] != "/w/|`ws`|" || summary["Arguments"] != "a|b `c` <d>" || summary["Allowlist"] != "x|y `z`/**" ||
		summary["Leftovers"] != "❌ pid 7 sh -c 'a | b `c`'" || summary["Script"] != "/w/<script>alert(1)</script>.sh" {
		t.Errorf("summary %q", summary)
	}
	reasons := findAll(findAll(doc, isElem("ul"))[0], isElem("li"))
	if textOf(reasons[0]) != r.Reasons[0] || textOf(reasons[1]) != r.Reasons[1] {
		t.Errorf("reasons render as %q, %q", textOf(reasons[0]), textOf(reasons[1]))
	}
	var codes []string
	for _, c := range findAll(doc, func(n *html.Node) bool { return isElem("code")(n) && strings.HasPrefix(attr(n, "class"), "language-") }) {
		codes = append(codes, textOf(c))
	}
	if len(codes) != 3 || codes[0] != r.Changes[len(r.Changes)-1].TextDiff || codes[1] != r.Process.StdoutTail ||
		codes[2] != "\ufffd\ufffd binary \ufffd junk\n" {
		t.Errorf("code blocks %q", codes)
	}
	if sums := findAll(doc, isElem("summary")); len(sums) == 0 ||
		textOf(sums[0]) != "</summary></details><script>alert(1)</script> (changed, violation)" {
		t.Errorf("diff summary broken: %q", md)
	}
}

func allInside(ns []*html.Node, tags ...string) bool {
	for _, n := range ns {
		ok := false
		for p := n.Parent; p != nil; p = p.Parent {
			for _, t := range tags {
				if p.Type == html.ElementNode && p.Data == t {
					ok = true
				}
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func TestMarkdownPass(t *testing.T) {
	md, doc := renderMarkdown(t, passingReport())
	if h := findAll(doc, isElem("h2")); textOf(h[0]) != "✅ diffgate: PASS" {
		t.Fatalf("heading %q", textOf(h[0]))
	}
	for _, want := range []string{"No unexpected change", "### Violations (0)", "No violations.", "| Process | ✅ exited 0 |", "| Leftovers | none |"} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in\n%s", want, md)
		}
	}
}

func TestMdCode(t *testing.T) {
	for _, tc := range []struct{ in, table, plain string }{
		{"a", "`a`", "`a`"},
		{"a|b", "`a\\|b`", "`a|b`"},
		{"a`b", "``a`b``", "``a`b``"},
		{"`x", "`` `x ``", "`` `x ``"},
		{"x``", "``` x`` ```", "``` x`` ```"},
		{" s ", "`  s  `", "`  s  `"},
		{"nl\nx", "`\"nl\\nx\"`", "`\"nl\\nx\"`"},
		{"", "", ""},
	} {
		if got := mdCode(tc.in, true); got != tc.table {
			t.Errorf("mdCode(%q, table) = %q, want %q", tc.in, got, tc.table)
		}
		if got := mdCode(tc.in, false); got != tc.plain {
			t.Errorf("mdCode(%q) = %q, want %q", tc.in, got, tc.plain)
		}
	}
}

// Long diffs are cut to mdDiffMax each, never left one-sided, and the
// report says how many were cut.
func TestMarkdownDiffBudget(t *testing.T) {
	var before, after strings.Builder
	for i := 0; before.Len() < 12<<10; i++ {
		before.WriteString("old line of text number " + strings.Repeat("x", i%7) + "\n")
		after.WriteString("new line of text number " + strings.Repeat("y", i%5) + "\n")
	}
	r := &Report{Verdict: Fail}
	for _, p := range []string{"one.txt", "two.txt", "three.txt"} {
		d, ok := textdiff.Lines([]byte(before.String()), []byte(after.String()), p)
		if !ok {
			t.Fatal("not text")
		}
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content}, TextDiff: d})
	}
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if n := strings.Count(md, "```diff"); n != 3 {
		t.Errorf("%d diffs included, want 3", n)
	}
	if n := strings.Count(md, "\n-old line of text number"); n < 3 || n != strings.Count(md, "\n+new line of text number") {
		t.Errorf("%d removed lines, %d added", n, strings.Count(md, "\n+new line of text number"))
	}
	if n := strings.Count(md, "\n… cut: "); n < 3 {
		t.Errorf("%d cut lines", n)
	}
	if !strings.Contains(md, "Left out to fit a pull-request comment: 3 diffs cut short.") {
		t.Error("no left-out line")
	}
	if len(md) > 3*mdDiffMax+4<<10 {
		t.Errorf("markdown is %d bytes", len(md))
	}
}
