package review

import (
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

// TestRiskyChip: a report with risky changes shows a Risky chip with their
// count (as the HTML counts them), off at first; on, the list keeps only
// the risky changes, a new CI workflow among them; off again, every change.
// A report without risks shows no chip.
func TestRiskyChip(t *testing.T) {
	r := DemoReport()
	r.Changes = append(r.Changes, diff.Change{Path: ".github/workflows/ci.yml", Kind: diff.Added, Risk: diff.RunsLater,
		After: &snapshot.Entry{Path: ".github/workflows/ci.yml", Type: snapshot.File}})
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	v.SetTreeMode(false)
	if !v.riskyChip.Visible() || v.riskyChip.Text() != "Risky 2" || v.riskyChip.On {
		t.Fatalf("chip visible %v text %q on %v", v.riskyChip.Visible(), v.riskyChip.Text(), v.riskyChip.On)
	}
	all := len(v.Shown())
	test.Tap(v.riskyChip)
	var paths []string
	for _, i := range v.Shown() {
		paths = append(paths, v.Report().Changes[i].Path)
	}
	if len(paths) != 2 || paths[0] != ".github/workflows/ci.yml" && paths[1] != ".github/workflows/ci.yml" {
		t.Errorf("Risky on shows %q", paths)
	}
	test.Tap(v.riskyChip)
	if len(v.Shown()) != all {
		t.Errorf("Risky off shows %d of %d", len(v.Shown()), all)
	}
	v.SetReport(&report.Report{Verdict: report.Pass, Changes: []diff.Change{{Path: "a", Kind: diff.Added, Allowed: true,
		After: &snapshot.Entry{Path: "a", Type: snapshot.File}}}})
	if v.riskyChip.Visible() {
		t.Error("a report without risks shows a Risky chip")
	}
}
