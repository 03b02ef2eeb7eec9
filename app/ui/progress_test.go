//go:build !js

package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/snapshot"
)

// TestRunStepsSayWhatTheyFound: after a staged run that added a file, the
// After step says what it read from the stage (never "0 entries"), a direct
// run's After step counts the manifest, one entry is "1 entry", and at
// 1024×700 no step's name is cut.
func TestRunStepsSayWhatTheyFound(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(fyne.NewSize(1024, 700))
	ws := workspace(t)
	r := runScript(t, u, l, ws, "echo x > new.txt\n", nil)
	if r.Stage == nil {
		t.Fatal("the app's default run is not staged")
	}
	if got := u.run.phases.rows[pipeline.PhaseAfter].info.Text; strings.HasPrefix(got, "0 ") || !strings.Contains(got, " entries · ") {
		t.Errorf("After step of a staged run: %q", got)
	}
	u.run.phases.afterDone(nil, r) // a stage read without a manifest
	if got := u.run.phases.rows[pipeline.PhaseAfter].info.Text; got != "stage: 1 change" {
		t.Errorf("After step of a staged run without a manifest: %q", got)
	}
	if got := entriesInfo(1, 12); got != "1 entry · 12 B" {
		t.Errorf("one entry: %q", got)
	}
	m := &snapshot.Manifest{Entries: []snapshot.Entry{{Path: "a", Size: 1000}, {Path: "b", Size: 24}}}
	u.run.phases.afterDone(m, r)
	if got := u.run.phases.rows[pipeline.PhaseAfter].info.Text; got != "2 entries · 1.0 KiB" && got != "2 entries · 1 KiB" && got != "2 entries · 1.0 kB" {
		t.Errorf("After step of a direct run: %q", got)
	}

	u.Tabs.Select(u.runItem)
	for _, ph := range pipeline.Phases() {
		name := u.run.phases.rows[ph].name
		need := fyne.MeasureText(name.Text, theme.TextSize(), name.TextStyle).Width + 2*theme.InnerPadding()
		if name.Size().Width < need {
			t.Errorf("step %q is %.0f px wide at 1024, needs %.0f", name.Text, name.Size().Width, need)
		}
	}
}
