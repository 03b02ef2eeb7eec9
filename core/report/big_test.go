package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/diffgate/diffgate/core/diff"
)

// bigRun is a run of n changes as an npm install makes them: n-edits added
// files under node_modules/ (allowed, each with the text diff of a 60-line
// file), plus edits real edits of tracked files (violations, each with a
// two-hunk diff), a long output and a long allowlist.
func bigRun(n, edits int) *Report {
	r := &Report{Schema: Schema, Verdict: Fail, Workspace: "/home/ci/work/web",
		Script: Script{Path: "/usr/bin/npm", Args: []string{"install"}}, Allowlist: []string{"node_modules/"}}
	var body strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&body, "module.exports.fn%02d = function (a, b) { return a + b * %d; };\n", i, i)
	}
	for i := 0; i < n-edits; i++ {
		p := fmt.Sprintf("node_modules/pkg%03d/lib/file%05d.js", i%250, i)
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Added, Aspects: []diff.Aspect{},
			After: file(p, 0o644, body.String(), t1), Allowed: true, Rule: "node_modules/",
			TextDiff: mustDiff("", body.String(), p)})
	}
	old := body.String()
	edited := strings.Replace(strings.Replace(old, "fn03", "fnX3", 1), "fn50", "fnX0", 1)
	for i := 0; i < edits; i++ {
		p := fmt.Sprintf("src/edit%05d.js", i)
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
			Before: file(p, 0o644, old, t0), After: file(p, 0o644, edited, t1), TextDiff: mustDiff(old, edited, p)})
	}
	r.Process.StdoutTail = strings.Repeat("added 1 package, and audited 5000 packages in 3s\n", 2000)
	r.Evaluate()
	return r
}

// flatRun is bigRun with the added files at the top level, where no folder
// rolls them up: a list of a row per change, the HTML's worst case.
func flatRun(n, edits int) *Report {
	r := bigRun(n, edits)
	for i := range r.Changes {
		if c := &r.Changes[i]; strings.HasPrefix(c.Path, "node_modules/") {
			c.Path = strings.ReplaceAll(c.Path, "/", "-")
			c.Rule = "node_modules-*"
		}
	}
	r.Allowlist = []string{"node_modules-*"}
	r.Evaluate()
	return r
}

func TestMarkdownFitsAComment(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, edits int
	}{{"npm install", 5000, 2}, {"all violations", 5000, 5000}, {"small", 12, 2}} {
		r := bigRun(tc.n, tc.edits)
		var buf bytes.Buffer
		if err := r.WriteMarkdown(&buf); err != nil {
			t.Fatal(err)
		}
		md := buf.String()
		t.Logf("%s: %d changes, Markdown %d bytes, %d characters", tc.name, tc.n, len(md), len([]rune(md)))
		if len(md) > MaxMarkdown {
			t.Errorf("%s: %d bytes", tc.name, len(md))
		}
		// Summary, then violations with their diffs, then roll-ups, then
		// the left-out line.
		iSum := strings.Index(md, "| Changes | ")
		iViol := strings.Index(md, "### Violations (")
		iDiff := strings.Index(md, "<details open><summary><code>src/edit00000.js</code> (changed, violation)</summary>")
		iAllowed := strings.Index(md, "### Allowed changes (")
		iLeft := strings.Index(md, "*Left out to fit a pull-request comment: ")
		if iSum < 0 || iViol < iSum || iDiff < iViol || iAllowed < iDiff {
			t.Fatalf("%s: order summary %d, violations %d, first diff %d, allowed %d", tc.name, iSum, iViol, iDiff, iAllowed)
		}
		if !strings.Contains(md[iDiff:], "\n-module.exports.fn03 = ") || !strings.Contains(md[iDiff:], "\n+module.exports.fnX3 = ") {
			t.Errorf("%s: the first violation's diff lacks its change", tc.name)
		}
		if tc.n > 100 && iLeft < iAllowed {
			t.Errorf("%s: no left-out line after the allowed changes", tc.name)
		}
		if tc.n <= 100 && iLeft >= 0 {
			t.Errorf("%s: a small run left something out", tc.name)
		}
		if tc.n == 5000 && tc.edits == 2 && !strings.Contains(md, "| 📁 folder | `node_modules/` | 4,998 added, all allowed | `node_modules/` |") {
			t.Errorf("%s: no roll-up of node_modules/", tc.name)
		}
		if tc.edits == 5000 && !strings.Contains(md, "more violations, not listed here.") {
			t.Errorf("%s: does not say how many violations are not listed", tc.name)
		}
	}
}

// htmlMax5000 bounds the HTML of the 5,000-change run (bigRun): the first
// htmlDetailed changes with their metadata and cut diffs, one row for each
// other. Before the bound it was 37 MB (every added file's full diff and
// metadata inline); now about 2.6 MB.
const htmlMax5000 = 4 << 20

// htmlElements5000 bounds the elements of that page: Chromium's main
// thread spends most of its load parsing them (about 5 µs each on the
// shared machine). 59,121 now; 73,500 with a <details> per fold, a
// <tbody> per brief row and <code> in path and rule cells.
const htmlElements5000 = 62000

// countElements counts the element nodes under n.
func countElements(n *html.Node) (c int) {
	if n.Type == html.ElementNode {
		c++
	}
	for k := n.FirstChild; k != nil; k = k.NextSibling {
		c += countElements(k)
	}
	return c
}

// countOpen counts the folds that start open.
func countOpen(fs []*html.Node) (n int) {
	for _, f := range fs {
		if foldOpen(f) {
			n++
		}
	}
	return n
}

// The HTML of a 5,000-change run is bounded; an added file shows its first
// lines, the violations their whole (small) diffs, allowed diffs start
// collapsed, and a content change says its line counts.
func TestHTMLSizeBounded(t *testing.T) {
	r := flatRun(5000, 2)
	page, doc := parseHTML(t, r)
	t.Logf("5,000-change HTML: %d bytes", len(page))
	if len(page) > htmlMax5000 {
		t.Fatalf("%d bytes, bound %d", len(page), htmlMax5000)
	}
	if rows := changeRows(doc); len(rows) != 5000 {
		t.Fatalf("%d rows", len(rows))
	}
	n := countElements(doc)
	t.Logf("5,000-change HTML: %d elements", n)
	if n > htmlElements5000 {
		t.Errorf("%d elements, bound %d", n, htmlElements5000)
	}
	if d := findAll(doc, isElem("details")); len(d) > 0 {
		t.Errorf("%d <details>: Chromium gives each a style sheet of its own", len(d))
	}
	if !strings.Contains(page, "… cut: 50 more added lines") {
		t.Error("an added file's diff is not cut to its first lines")
	}
	if !strings.Contains(page, "content &#43;2 −2 (3.6 KiB -&gt; 3.6 KiB)") {
		t.Error("no line counts in a violation's detail")
	}
	if open, all := countOpen(folds(doc, "textdiff")), len(folds(doc, "textdiff")); open != 2 || all < 400 {
		t.Errorf("%d of %d diffs start open, want the 2 violations'", open, all)
	}
	if byID(doc, "brief") == nil {
		t.Error("no note on the changes shown as one row")
	}
}
