package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
)

// A large run whose diffs the budgets cut short says so in every format:
// how many content changes have a diff and why the others have none, in
// the HTML's run card and the Markdown's summary, and each change without
// one says why in its row, past the HTML's first 500 detailed rows too.
func TestDiffCoverageSaid(t *testing.T) {
	r := flatRun(1200, 2)
	for i := range r.Changes {
		if c := &r.Changes[i]; c.Allowed && i%2 == 1 {
			c.TextDiff, c.DiffNote = "", diff.NoteBudget
		}
	}
	r.Changes[0].TextDiff, r.Changes[0].DiffNote = "", diff.NoteBinary
	cov := r.DiffCoverage()
	want := "600 of 1,200 content changes have a text diff; 599 past the run's budget, 1 binary"
	if cov.Content != 1200 || cov.Summary() != want {
		t.Fatalf("coverage %+v: %q", cov, cov.Summary())
	}
	_, doc := parseHTML(t, r)
	if n := byID(doc, "diff-coverage"); n == nil || textOf(n) != want {
		t.Errorf("HTML run card: %v", n)
	}
	var brief int
	for _, row := range changeRows(doc) {
		if d := textOf(byClass(row, "td", "detail")[0]); strings.HasSuffix(d, "no text diff: past the run's budget") {
			brief++
		}
	}
	if brief != 599 {
		t.Errorf("%d rows say they are past the budget, want 599", brief)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| Text diffs | "+want+" |") {
		t.Errorf("Markdown lacks the coverage line")
	}
}
