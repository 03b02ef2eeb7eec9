package review

import (
	"image/color"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/report"
)

// newTestView opens v in a 1400x860 test window with the diffgate theme.
func newTestView(t *testing.T, r *report.Report, opts Options) (*View, fyne.Window) {
	t.Helper()
	a := test.NewTempApp(t)
	a.Settings().SetTheme(style.Theme{})
	v := New(r, opts)
	w := test.NewTempWindow(t, v)
	w.Resize(fyne.NewSize(1400, 860))
	return v, w
}

// themeColor is the diffgate theme's color for name in the current variant.
func themeColor(name fyne.ThemeColorName) color.Color {
	return style.Color(fyne.CurrentApp().Settings().Theme(), name)
}

func wantColor(t *testing.T, what string, got color.Color, name fyne.ThemeColorName) {
	t.Helper()
	if want := themeColor(name); !uitest.SameColor(got, want) {
		t.Errorf("%s: color %v, want %s %v", what, got, name, want)
	}
}

// greenish, reddish and amber check a color's hue family, so a test also
// fails if the theme maps a name to the wrong color.
func greenish(c color.Color) bool { r, g, b, _ := c.RGBA(); return g > r && g > b }
func reddish(c color.Color) bool  { r, g, b, _ := c.RGBA(); return r > g && r > b }
func amber(c color.Color) bool    { r, g, b, _ := c.RGBA(); return r > b && g > b && r >= g }

// indexOf returns the index of the change at path p.
func indexOf(t *testing.T, r *report.Report, p string) int {
	t.Helper()
	for i := range r.Changes {
		if r.Changes[i].Path == p {
			return i
		}
	}
	t.Fatalf("no change %q", p)
	return -1
}

// cleanReport is the demo report without process findings, so the
// allowlist alone decides the verdict.
func cleanReport() *report.Report {
	r := DemoReport()
	r.Process.Leftovers = nil
	r.Evaluate()
	return r
}

// folderOpen reports whether folder id of the tree is open.
func (v *View) folderOpen(id string) bool {
	n := v.m.nodes[id]
	return n != nil && v.isOpen(id, n)
}

// detailTitle is the detail pane's title as text (a path, however it wraps).
func (v *View) detailTitle() string { return segmentsText(v.detail.title) }

// diffLines are the lines of the diff in the detail.
func (v *View) diffLines() []DiffLine { return v.detail.diff.Lines() }

// hiddenByFilter is how many changes the filter hides.
func (v *View) hiddenByFilter() int { return len(v.viewed) - len(v.m.visible) }

// setApplyScope chooses what Apply applies.
func (v *View) setApplyScope(s applyScope) { v.stage.scope.SetSelectedIndex(int(s)) }

// shownRows returns the indices (into Report().Changes) the filter lets
// through, in the flat list's order: natural path order, violations first
// unless that is switched off.
func (v *View) shownRows() []int { return append([]int(nil), v.m.visible...) }

// applyButton and DiscardButton are the stage block's buttons.
func (v *View) applyButton() *widget.Button { return v.stage.applyBtn }

func (v *View) discardButton() *widget.Button { return v.stage.discardBtn }

// treeMode reports whether the changes show as a tree.
func (v *View) treeMode() bool { return v.tree }

// containedText is the containment mark as shown ("contained", "NOT
// CONTAINED", "" for a report without containment) and its color.
func (b *Banner) containedText() (string, color.Color) { return b.contained.Text, b.contained.Color }
