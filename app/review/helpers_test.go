package review

import (
	"image/color"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

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
