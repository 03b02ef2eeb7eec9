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
	r.Changes = append(r.Changes, diff.Change{Path: ".github/workflows/ci.yml", Kind: diff.Added, Risk: diff.Automation,
		After: &snapshot.Entry{Path: ".github/workflows/ci.yml", Type: snapshot.File}})
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	v.setTreeMode(false)
	if !v.filters.riskyChip.Visible() || v.filters.riskyChip.Text() != "Risky 2" || v.filters.riskyChip.On {
		t.Fatalf("chip visible %v text %q on %v", v.filters.riskyChip.Visible(), v.filters.riskyChip.Text(), v.filters.riskyChip.On)
	}
	all := len(v.shownRows())
	test.Tap(v.filters.riskyChip)
	var paths []string
	for _, i := range v.shownRows() {
		paths = append(paths, v.Report().Changes[i].Path)
	}
	if len(paths) != 2 || paths[0] != ".github/workflows/ci.yml" && paths[1] != ".github/workflows/ci.yml" {
		t.Errorf("Risky on shows %q", paths)
	}
	test.Tap(v.filters.riskyChip)
	if len(v.shownRows()) != all {
		t.Errorf("Risky off shows %d of %d", len(v.shownRows()), all)
	}
	v.SetReport(&report.Report{Verdict: report.Pass, Changes: []diff.Change{{Path: "a", Kind: diff.Added, Allowed: true,
		After: &snapshot.Entry{Path: "a", Type: snapshot.File}}}})
	if v.filters.riskyChip.Visible() {
		t.Error("a report without risks shows a Risky chip")
	}
}

// TestStagedStripSaysWhatHappenedOutside: a pending staged run that was
// not contained, or changed something outside the workspace, does not say
// that nothing happened until Apply.
func TestStagedStripSaysWhatHappenedOutside(t *testing.T) {
	apply := func(*report.Report, ApplyRequest, func(string, error)) {}
	for _, tc := range []struct {
		name string
		set  func(r *report.Report)
		want string
	}{
		{"contained", func(r *report.Report) { r.Containment = &report.Containment{Mode: "auto", Contained: true} },
			"Staged: nothing is in the workspace until you apply."},
		{"not contained", func(r *report.Report) { r.Containment = &report.Containment{Mode: "off"} },
			"Staged, but not contained: only the workspace waits for Apply."},
		{"changed ~/.bashrc", func(r *report.Report) {
			r.Containment = &report.Containment{Mode: "off"}
			r.Outside = []report.Outside{{Path: "/root/.bashrc", Kind: diff.Changed}}
		}, "Staged, but 1 change outside already happened: only the workspace waits for Apply."},
	} {
		r := DemoReport()
		r.Stage = &report.Stage{Mechanism: "copy", State: report.StagePending}
		tc.set(r)
		v, _ := newTestView(t, r, Options{OnApply: apply})
		if got := v.stageText(); got != tc.want+"  copy stage" {
			t.Errorf("%s: strip %q", tc.name, got)
		}
	}
}
