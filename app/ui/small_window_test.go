package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"github.com/diffgate/diffgate/core/report"
)

// small is the window's content at the smallest supported size, 1024×700,
// less the desktop driver's menu bar.
var small = fyne.NewSize(1024, 700-menuBarReserve)

// TestSmallWindowDiffRoom: at 1024×700 the diff of the demo's config.json
// takes at least 60% of the detail pane (the before/after table is one
// line until expanded).
func TestSmallWindowDiffRoom(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(small)
	r := openReport(t, u, l, writeDemoReport(t))
	v := u.Review()
	v.Select(changeIndex(t, r, "config.json"))
	l.settle(50 * time.Millisecond)
	if d, pane := v.DiffRoom(); d < 0.6*pane {
		t.Errorf("the diff is %.0f px high, %.0f%% of the detail pane's %.0f px; want 60%% or more", d, 100*d/pane, pane)
	}
}

// changeIndex is the index of the change at path in r.
func changeIndex(t *testing.T, r *report.Report, path string) int {
	t.Helper()
	for i := range r.Changes {
		if r.Changes[i].Path == path {
			return i
		}
	}
	t.Fatalf("no change %q", path)
	return -1
}
