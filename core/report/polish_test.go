package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// markdownOf renders r as Markdown.
func markdownOf(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A Rule or Risk column that would be empty in every row of a list is left
// out, in the HTML and the Markdown: violations have no rule, the
// fixture's allowed changes no risk.
func TestNoEmptyColumns(t *testing.T) {
	r := fixtureReport()
	page, _ := parseHTML(t, r)
	v, a := strings.Index(page, `id="violations"`), strings.Index(page, `id="allowed"`)
	if v < 0 || a < v {
		t.Fatalf("sections at %d and %d", v, a)
	}
	if viol := page[v:a]; strings.Contains(viol, "<th>Rule</th>") || !strings.Contains(viol, "<th>Risk</th>") || strings.Contains(viol, `class="rule"`) {
		t.Error("HTML violations: a Rule column (no violation has a rule), or no Risk column")
	}
	if allowed := page[a:]; !strings.Contains(allowed, "<th>Rule</th>") || strings.Contains(allowed, "<th>Risk</th>") || strings.Contains(allowed, `class="risk"`) {
		t.Error("HTML allowed changes: a Risk column (none has a risk), or no Rule column")
	}
	md := markdownOf(t, r)
	v, a = strings.Index(md, "### Violations"), strings.Index(md, "### Allowed changes")
	if !strings.Contains(md[v:a], "| Kind | Path | Detail | Risk |\n") || !strings.Contains(md[a:], "| Kind | Path | Detail | Rule |\n") {
		t.Errorf("Markdown table heads:\n%s", md[v:])
	}
}

// Blocked actions and changes outside the workspace come before the
// violations, in the HTML and the Markdown, as in the app.
func TestBlockedFirst(t *testing.T) {
	r := guardedReport()
	page, _ := parseHTML(t, r)
	b, o, v := strings.Index(page, `<h3 id="blocked">`), strings.Index(page, `<h3 id="outside">`), strings.Index(page, `<h3 id="violations">`)
	if b < 0 || o < b || v < o {
		t.Errorf("HTML: blocked at %d, outside at %d, violations at %d", b, o, v)
	}
	md := markdownOf(t, r)
	b, o, v = strings.Index(md, "### Blocked actions"), strings.Index(md, "### Outside the workspace"), strings.Index(md, "### Violations")
	if b < 0 || o < b || v < o {
		t.Errorf("Markdown: blocked at %d, outside at %d, violations at %d", b, o, v)
	}
}

// The HTML rolls an added tree up as the app does (report.RollUpList): the
// 4,602 allowed files of node_modules/ are one row with their counts, not
// 4,602 rows; the two real edits keep their rows and diffs.
func TestHTMLRollsUpAddedTrees(t *testing.T) {
	r := bigRun(4604, 2)
	_, doc := parseHTML(t, r)
	rows := changeRows(doc)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want the 2 edits and node_modules/ rolled up", len(rows))
	}
	folder := rows[2]
	if got := textOf(byClass(folder, "td", "path")[0]); got != "node_modules/" {
		t.Errorf("folder row %q", got)
	}
	if got := textOf(byClass(folder, "td", "detail")[0]); !strings.HasPrefix(got, "4,602 added, all allowed") {
		t.Errorf("folder detail %q", got)
	}
	if got := textOf(byID(doc, "allowed")); !strings.Contains(got, "Allowed 4602") {
		t.Errorf("allowed heading: %.60q", got)
	}
	if n := len(folds(doc, "textdiff")); n != 2 {
		t.Errorf("%d diffs, want the 2 edits'", n)
	}
	// The Markdown rolls up the same folder in the same words.
	if md := markdownOf(t, r); !strings.Contains(md, "| 📁 folder | `node_modules/` | 4,602 added, all allowed | `node_modules/` |") {
		t.Error("the Markdown's roll-up differs")
	}
}

// The roll-up rule: what folds and what never does.
func TestRollUpList(t *testing.T) {
	r := realEdits() // 5,000 added violations in a_gen/, 10 edits in src/
	violations, _ := r.splitChanges()
	rows := RollUpList(violations)
	if len(rows) != 11 {
		t.Fatalf("%d rows, want 10 edits and a_gen/", len(rows))
	}
	for k := range 10 {
		if rows[k].Folder != "" || rows[k].Changes[0].Path != fmt.Sprintf("src/mod%d.js", k) {
			t.Errorf("row %d: %q %s", k, rows[k].Folder, rows[k].Changes[0].Path)
		}
	}
	if f := rows[10]; f.Folder != "a_gen" || len(f.Changes) != 5000 || f.Tally.String() != "5,000 added, violations" {
		t.Errorf("roll-up %q: %d, %s", f.Folder, len(f.Changes), f.Tally.String())
	}
	// 60 edits of existing files that violate never fold: a reviewer reads them.
	for _, tc := range []struct {
		name string
		t    Tally
		want bool
	}{
		{"src", Tally{Changed: 60, Violations: 60, Edits: 60}, false},
		{"gen", Tally{Added: 60, Violations: 60}, true},
		{"gen", Tally{Added: 60, Violations: 60, Risky: 1}, false},
		{"small", Tally{Added: 3, Violations: 3}, false},
		{"docs", Tally{Changed: 3}, true},
		{"web/node_modules", Tally{Changed: 3, Violations: 3, Edits: 3}, true},
	} {
		if got := RollsUp(tc.name, &tc.t); got != tc.want {
			t.Errorf("RollsUp(%s, %+v) = %v", tc.name, tc.t, got)
		}
	}
}

// The watch's line says what was watched and what of it was found.
func TestWatchSummaryWords(t *testing.T) {
	w := &Watch{Entries: 1}
	for i := range 28 {
		p := WatchedPath{Path: fmt.Sprintf("/home/u/.f%d", i)}
		if i == 0 {
			p.Entries = 1
		}
		w.Paths = append(w.Paths, p)
	}
	if got, want := w.Summary(), "watched 28 paths outside the workspace (stat only): 1 existed before the run (1 entry), 27 did not"; got != want {
		t.Errorf("summary %q\nwant %q", got, want)
	}
	w.Paths[0].Entries, w.Entries = 0, 0
	if got := w.Summary(); !strings.HasSuffix(got, ": none existed before the run") {
		t.Errorf("summary %q", got)
	}
}
