package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
)

// realEdits is a failing run of 5,000 added files (sorted first by path)
// and 10 edits of existing files, all violations, each with a diff.
func realEdits() *Report {
	r := &Report{Verdict: Fail, Workspace: "/w"}
	for i := range 5000 {
		p := fmt.Sprintf("a_gen/f%04d.txt", i)
		body := fmt.Sprintf("generated %d\n", i)
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Added, Aspects: []diff.Aspect{diff.Content},
			After: file(p, 0o644, body, t1), TextDiff: mustDiff("", body, p)})
	}
	for i := range 10 {
		p := fmt.Sprintf("src/mod%d.js", i)
		before, after := "export const a = 1;\n", fmt.Sprintf("export const a = %d; // EDIT%d\n", i+2, i)
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
			Before: file(p, 0o644, before, t0), After: file(p, 0o644, after, t1), TextDiff: mustDiff(before, after, p)})
	}
	r.Evaluate()
	return r
}

// The real edits come first in every report: the Markdown lists and diffs
// the 10 edits of a run that also added 5,000 files, and the HTML lists
// them first, each with its diff.
func TestReportsRankEditsFirst(t *testing.T) {
	r := realEdits()
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if !strings.Contains(md.String(), fmt.Sprintf("+export const a = %d; // EDIT%d", i+2, i)) {
			t.Errorf("the Markdown lacks the diff of src/mod%d.js", i)
		}
	}
	if a, e := strings.Index(md.String(), "a_gen/f0000.txt"), strings.Index(md.String(), "src/mod0.js"); e < 0 || a >= 0 && a < e {
		t.Errorf("Markdown: the edit at %d, an added file at %d", e, a)
	}
	_, doc := parseHTML(t, r)
	rows := changeRows(doc)
	for k := range 10 {
		if got := textOf(byClass(rows[k], "td", "path")[0]); got != fmt.Sprintf("src/mod%d.js", k) {
			t.Fatalf("HTML row %d is %s, want the edits first", k, got)
		}
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if !strings.Contains(b.String(), fmt.Sprintf("EDIT%d", i)) {
			t.Errorf("the HTML lacks the diff of src/mod%d.js", i)
		}
	}
}

// Rank: risks, edits (renames too), removals, additions; violations first.
func TestRankOrder(t *testing.T) {
	cs := []diff.Change{
		{Path: "a", Kind: diff.Added},
		{Path: "b", Kind: diff.Removed},
		{Path: "c", Kind: diff.Changed, Allowed: true},
		{Path: "d", Kind: diff.Added, RenamedFrom: "b"},
		{Path: "e", Kind: diff.Changed},
		{Path: "f", Kind: diff.Added, Risk: diff.SymlinkEscape},
	}
	var got []string
	for _, i := range RankOrder(cs) {
		got = append(got, cs[i].Path)
	}
	if s := strings.Join(got, ""); s != "fdebac" {
		t.Errorf("order %s", s)
	}
}
