package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/internal/quote"
	"golang.org/x/net/html"
)

func parseHTML(t *testing.T, r *Report) (string, *html.Node) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return buf.String(), doc
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func byID(doc *html.Node, id string) *html.Node {
	ns := findAll(doc, func(n *html.Node) bool { return n.Type == html.ElementNode && attr(n, "id") == id })
	if len(ns) != 1 {
		return nil
	}
	return ns[0]
}

func byClass(n *html.Node, tag, class string) []*html.Node {
	return findAll(n, func(n *html.Node) bool { return isElem(tag)(n) && hasClass(n, class) })
}

// folds returns the folds (div.fold) of class kind ("meta", "textdiff")
// under n.
func folds(n *html.Node, kind string) []*html.Node {
	return findAll(n, func(n *html.Node) bool { return isElem("div")(n) && hasClass(n, "fold") && hasClass(n, kind) })
}

// foldOpen says whether fold f starts open: its checkbox is checked (its
// body is hidden="until-found", which a checked box overrides).
func foldOpen(f *html.Node) bool {
	on := byClass(f, "input", "fold-on")
	return len(on) == 1 && hasAttr(on[0], "checked")
}

// foldSummary is the text of fold f's label.
func foldSummary(f *html.Node) string {
	if l := byClass(f, "label", "fold-sum"); len(l) == 1 {
		return textOf(l[0])
	}
	return ""
}

// changeRows returns the rows that carry data-kind, in document order.
func changeRows(doc *html.Node) []*html.Node {
	return findAll(doc, func(n *html.Node) bool { return isElem("tr")(n) && attr(n, "data-kind") != "" })
}

func TestHTMLStructure(t *testing.T) {
	r := fixtureReport()
	page, doc := parseHTML(t, r)

	banner := byID(doc, "verdict")
	if banner == nil || attr(banner, "class") != "banner fail" {
		t.Fatalf("no #verdict with class \"banner fail\"")
	}
	bt := textOf(banner)
	if !strings.Contains(bt, "FAIL") || strings.Contains(bt, "PASS") {
		t.Errorf("banner text %q", bt)
	}
	var reasons []string
	for _, li := range findAll(banner, isElem("li")) {
		reasons = append(reasons, textOf(li))
	}
	if strings.Join(reasons, "|") != strings.Join(r.Reasons, "|") {
		t.Errorf("banner reasons %q, want %q", reasons, r.Reasons)
	}
	if title := textOf(findAll(doc, isElem("title"))[0]); title != "diffgate FAIL: /home/ci/work/repo" {
		t.Errorf("title %q", title)
	}

	counts := map[string]string{}
	for _, s := range byClass(doc, "div", "stat") {
		counts[textOf(byClass(s, "span", "lbl")[0])] = textOf(byClass(s, "span", "num")[0])
	}
	for k, v := range map[string]string{"added": "6", "removed": "1", "changed": "2", "violations": "6", "allowed": "3", "risky": "1"} {
		if counts[k] != v {
			t.Errorf("count %s = %q, want %s", k, counts[k], v)
		}
	}

	// One row per change: violations first, then allowed, each by path.
	rows := changeRows(doc)
	type rowWant struct {
		path, kind string
		allowed    bool
	}
	// Ranked (Rank): the risk, the edits, the removal, the added files.
	want := []rowWant{
		{"link-to-etc", "added", false}, {"config.json", "changed", false}, {"run.sh", "changed", false},
		{"data/old.csv", "removed", false}, {`"notes\nevil.txt"`, "added", false}, {`"weird-\xff\xfe.bin"`, "added", false},
		{".cache/index.bin", "added", true}, {"docs/a|b `x`.md", "added", true}, {"logs/run.log", "added", true},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows with data-kind, want %d", len(rows), len(want))
	}
	for i, w := range want {
		row := rows[i]
		path := textOf(byClass(row, "td", "path")[0])
		class := "row " + w.kind
		allowed := "false"
		if w.allowed {
			class += " allowed"
			allowed = "true"
		}
		if path != w.path || attr(row, "data-kind") != w.kind || attr(row, "data-allowed") != allowed || attr(row, "class") != class {
			t.Errorf("row %d: path %q kind %q allowed %q class %q; want %q %q %q %q", i, path,
				attr(row, "data-kind"), attr(row, "data-allowed"), attr(row, "class"), w.path, w.kind, allowed, class)
		}
		// The violations and the allowed changes are separate tables.
		inAllowed := false
		for p := row.Parent; p != nil; p = p.Parent {
			if attr(p, "id") == "allowed" {
				inAllowed = true
			}
		}
		if inAllowed != w.allowed {
			t.Errorf("row %q is in the wrong table", w.path)
		}
	}
	if risk := byClass(rows[0], "span", "risk"); len(risk) != 1 || textOf(risk[0]) != "symlink-escape" {
		t.Errorf("link-to-etc has no risk badge")
	}
	if n := len(findAll(doc, func(n *html.Node) bool { return isElem("span")(n) && hasClass(n, "risk") })); n != 1 {
		t.Errorf("%d risk badges, want 1", n)
	}
	if d := textOf(byClass(rows[2], "td", "detail")[0]); d != "mode 0644 -> 0755" {
		t.Errorf("run.sh detail %q", d)
	}
	if d := textOf(byClass(rows[7], "td", "rule")[0]); d != "added:docs/**" {
		t.Errorf("docs rule %q", d)
	}

	// Per-change detail: before/after metadata with the differing rows marked.
	runSh := rows[2].Parent // the change's <tbody>
	var differs []string
	for _, tr := range byClass(runSh, "tr", "differs") {
		cells := findAll(tr, isElem("td"))
		differs = append(differs, textOf(findAll(tr, isElem("th"))[0])+":"+textOf(cells[0])+"->"+textOf(cells[1]))
	}
	if strings.Join(differs, ",") != "Mode:0644 rw-r--r---"+">0755 rwxr-xr-x" {
		t.Errorf("run.sh differing metadata %q", differs)
	}
	meta := textOf(byClass(rows[1].Parent, "table", "meta-table")[0])
	for _, s := range []string{"Owner", "1000:1000", "SHA-256", r.Changes[1].Before.SHA256, r.Changes[1].After.SHA256, "176 B", "218 B"} {
		if !strings.Contains(meta, s) {
			t.Errorf("config.json metadata lacks %q", s)
		}
	}
	if meta := textOf(byClass(rows[0].Parent, "table", "meta-table")[0]); !strings.Contains(meta, "Target—/etc/passwd") {
		t.Errorf("symlink metadata lacks its target: %q", meta)
	}

	// The text diff, line by line, coloured by class.
	diffs := byClass(rows[1].Parent, "pre", "diff")
	if len(diffs) != 1 {
		t.Fatal("config.json has no diff")
	}
	var lines, classes []string
	for _, s := range byClass(diffs[0], "span", "dl") {
		lines = append(lines, textOf(s))
		classes = append(classes, strings.TrimPrefix(attr(s, "class"), "dl "))
	}
	if strings.Join(lines, "\n")+"\n" != r.Changes[1].TextDiff {
		t.Errorf("diff text differs:\n%s", strings.Join(lines, "\n"))
	}
	wantClasses := "file file hunk ctx ctx ctx del add ctx del add ctx ctx del add add ctx"
	if strings.Join(classes, " ") != wantClasses {
		t.Errorf("diff classes\n %s\nwant\n %s", strings.Join(classes, " "), wantClasses)
	}
	if m, d := folds(rows[1].Parent, "meta"), folds(rows[1].Parent, "textdiff"); len(m) != 1 || foldOpen(m[0]) || len(d) != 1 || !foldOpen(d[0]) {
		t.Errorf("the violation's metadata should be closed and its text diff open")
	}
	if d := folds(rows[7].Parent, "textdiff"); len(d) != 1 || foldOpen(d[0]) || foldSummary(d[0]) != "text diff" {
		t.Errorf("the allowed change's text diff should be present and closed")
	}
	// Each fold's label names its own checkbox, and its body is there to
	// be found (hidden="until-found").
	for _, f := range append(folds(doc, "meta"), folds(doc, "textdiff")...) {
		on, sum, body := byClass(f, "input", "fold-on"), byClass(f, "label", "fold-sum"), byClass(f, "div", "fold-body")
		if len(on) != 1 || len(sum) != 1 || len(body) != 1 || attr(on[0], "id") == "" || attr(sum[0], "for") != attr(on[0], "id") ||
			attr(body[0], "hidden") != "until-found" {
			t.Errorf("a fold's checkbox, label and body do not go together: %q", textOf(f))
		}
	}

	// Process: status, leftovers, output (escape sequences removed).
	proc := byClass(doc, "section", "process")[0]
	if s := textOf(byClass(proc, "span", "status")[0]); s != "exited 3" {
		t.Errorf("status %q", s)
	}
	lo := byClass(proc, "tr", "leftover")
	if len(lo) != 1 || textOf(lo[0]) != "4211sleep 300" {
		t.Errorf("leftovers %d", len(lo))
	}
	if s := textOf(byClass(proc, "pre", "stderr")[0]); s != "warning: patched config.json for debugging\nerror: upload to https://collect.example.net failed\n" {
		t.Errorf("stderr %q", s)
	}
	if s := textOf(byClass(proc, "pre", "stdout")[0]); s != r.Process.StdoutTail {
		t.Errorf("stdout %q", s)
	}

	selfContained(t, page, doc)
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// selfContained checks that the page loads nothing and runs nothing.
func selfContained(t *testing.T, page string, doc *html.Node) {
	t.Helper()
	for _, tag := range []string{"script", "link", "img", "iframe", "object", "embed", "a"} {
		if n := findAll(doc, isElem(tag)); len(n) > 0 {
			t.Errorf("page has a <%s> element", tag)
		}
	}
	for _, n := range findAll(doc, func(n *html.Node) bool { return n.Type == html.ElementNode }) {
		for _, a := range n.Attr {
			if a.Key == "src" || a.Key == "href" || strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s> has %s=%q", n.Data, a.Key, a.Val)
			}
		}
	}
	css := textOf(findAll(doc, isElem("style"))[0])
	for _, bad := range []string{"url(", "@import", "ZgotmplZ"} {
		if strings.Contains(css, bad) || strings.Contains(page, "ZgotmplZ") {
			t.Errorf("stylesheet contains %q", bad)
		}
	}
}

func TestHTMLPass(t *testing.T) {
	page, doc := parseHTML(t, passingReport())
	banner := byID(doc, "verdict")
	if banner == nil || attr(banner, "class") != "banner pass" || !strings.Contains(textOf(banner), "PASS") {
		t.Fatalf("no passing banner")
	}
	if len(findAll(banner, isElem("li"))) != 0 {
		t.Error("a passing banner lists reasons")
	}
	rows := changeRows(doc)
	if len(rows) != 1 || attr(rows[0], "class") != "row added allowed" || attr(rows[0], "data-allowed") != "true" {
		t.Fatalf("rows %d", len(rows))
	}
	if !strings.Contains(textOf(doc), "No violations") || !strings.Contains(textOf(doc), "None: the whole process tree exited.") {
		t.Error("empty sections are not explained")
	}
	selfContained(t, page, doc)
}

func TestHTMLEscapesHostileText(t *testing.T) {
	r := hostileReport()
	page, doc := parseHTML(t, r)
	selfContained(t, page, doc)
	rows := changeRows(doc)
	if len(rows) != len(r.Changes) {
		t.Fatalf("%d rows, want %d", len(rows), len(r.Changes))
	}
	order := RankOrder(r.Changes)
	for k, row := range rows {
		if got, want := textOf(byClass(row, "td", "path")[0]), quote.Path(r.Changes[order[k]].Path); got != want {
			t.Errorf("path renders as %q, want %q", got, want)
		}
	}
	if s := textOf(byClass(doc, "pre", "stdout")[0]); s != r.Process.StdoutTail {
		t.Errorf("stdout %q", s)
	}
	if s := textOf(byClass(doc, "pre", "stderr")[0]); s != "\ufffd\ufffd binary \ufffd junk\n" {
		t.Errorf("stderr %q", s)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("script tag not escaped")
	}
}

// The stylesheet takes its colours from the Go constants the browser test
// looks for, and gives each kind of row its own.
func TestHTMLColoursShared(t *testing.T) {
	css := string(stylesheet)
	for _, want := range []string{
		"--pass:" + colorPass + ";", "--fail:" + colorFail + ";",
		"--added-row:" + colorAddedRow + ";", "--removed-row:" + colorRemovedRow + ";",
		"--changed-row:" + colorChangedRow + ";", "--allowed-row:" + colorAllowedRow + ";",
		"--diff-add:" + colorDiffAdd + ";", "--diff-del:" + colorDiffDel + ";",
		".banner.pass{background:var(--pass)}", ".banner.fail{background:var(--fail)}",
		"tr.row.added{--row-bg:var(--added-row)", "tr.row.removed{--row-bg:var(--removed-row)",
		"tr.row.changed{--row-bg:var(--changed-row)", "tr.row.allowed{--row-bg:var(--allowed-row)",
		"@media (prefers-color-scheme: dark)",
	} {
		if !strings.Contains(css, want) {
			t.Errorf("stylesheet lacks %q", want)
		}
	}
	seen := map[string]string{}
	for _, kv := range lightPalette {
		if !strings.HasSuffix(kv[0], "-row") && !strings.HasPrefix(kv[0], "diff-") && kv[0] != "pass" && kv[0] != "fail" {
			continue
		}
		if prev, ok := seen[kv[1]]; ok {
			t.Errorf("%s and %s share colour %s", prev, kv[0], kv[1])
		}
		seen[kv[1]] = kv[0]
	}
	if len(lightPalette) != len(darkPalette) {
		t.Fatal("the dark palette does not define every colour")
	}
	for i := range lightPalette {
		if lightPalette[i][0] != darkPalette[i][0] {
			t.Errorf("palettes differ at %d: %s vs %s", i, lightPalette[i][0], darkPalette[i][0])
		}
	}
}
