package review

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// smallReview is the room the review tab has in a 1024×700 window: less
// the menu bar (40 px) and the tab bar (40 px) above it.
var smallReview = fyne.NewSize(1024, 700-40-40)

// TestSmallWindowDiffGetsTheRoom: at 1024×700 the diff of the demo's
// config.json takes at least 60% of the detail pane's height; the
// before/after table is one summary line, and Details expands it.
func TestSmallWindowDiffGetsTheRoom(t *testing.T) {
	v, w := newTestView(t, DemoReport(), Options{})
	w.Resize(smallReview)
	v.Select(indexOf(t, v.Report(), "config.json"))
	d := v.detail
	if got, pane := d.diff.Size().Height, d.root.Size().Height; got < 0.6*pane {
		t.Errorf("the diff is %.0f px high, %.0f%% of the detail pane's %.0f px; want 60%% or more", got, 100*got/pane, pane)
	}
	if d.meta.Visible() {
		t.Error("the before/after table is expanded by default")
	}
	sum := allText(d.metaSum)
	if !strings.Contains(sum, "162 B") || !strings.Contains(sum, "214 B") || !strings.Contains(sum, "SHA-256") {
		t.Errorf("summary line %q does not say what changed", sum)
	}
	tapLink(d.metaBtn)
	if !d.meta.Visible() || d.metaSum.Visible() {
		t.Fatal("Details does not expand the table")
	}
	oneText(t, d.meta, "SHA-256")
	v.Select(indexOf(t, v.Report(), "src/app.py")) // the choice holds
	if !d.meta.Visible() {
		t.Error("the table collapsed again on the next change")
	}
	tapLink(d.metaBtn)
	if d.meta.Visible() {
		t.Error("Hide details does not collapse the table")
	}
}

// tapLink taps link l in the middle of its text.
func tapLink(l *widget.Hyperlink) {
	test.TapAt(l, fyne.NewPos(l.MinSize().Width/2, l.Size().Height/2))
}
