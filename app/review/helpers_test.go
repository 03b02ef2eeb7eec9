package review

import (
	"image/color"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

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

// walk visits every visible object drawn under o, descending into widgets
// through their renderers and into containers.
func walk(o fyne.CanvasObject, visit func(fyne.CanvasObject)) {
	if o == nil || !o.Visible() {
		return
	}
	visit(o)
	switch x := o.(type) {
	case *fyne.Container:
		for _, c := range x.Objects {
			walk(c, visit)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(x).Objects() {
			walk(c, visit)
		}
	}
}

// texts returns the rendered canvas.Text objects under o.
func texts(o fyne.CanvasObject) []*canvas.Text {
	var out []*canvas.Text
	walk(o, func(c fyne.CanvasObject) {
		if t, ok := c.(*canvas.Text); ok {
			out = append(out, t)
		}
	})
	return out
}

// findText returns the rendered text objects under o whose text is s.
func findText(o fyne.CanvasObject, s string) []*canvas.Text {
	var out []*canvas.Text
	for _, t := range texts(o) {
		if t.Text == s {
			out = append(out, t)
		}
	}
	return out
}

// oneText fails unless exactly one rendered text under o reads s.
func oneText(t *testing.T, o fyne.CanvasObject, s string) *canvas.Text {
	t.Helper()
	found := findText(o, s)
	if len(found) != 1 {
		t.Fatalf("want one rendered text %q, found %d; texts: %s", s, len(found), allText(o))
	}
	return found[0]
}

func allText(o fyne.CanvasObject) string {
	var b []string
	for _, t := range texts(o) {
		if strings.TrimSpace(t.Text) != "" {
			b = append(b, t.Text)
		}
	}
	return strings.Join(b, " | ")
}

func sameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == b
	}
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

func wantColor(t *testing.T, what string, got color.Color, name fyne.ThemeColorName) {
	t.Helper()
	if want := themeColor(name); !sameColor(got, want) {
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

// tapMenuItem taps the item of the top overlay popup menu whose label
// contains s.
func tapMenuItem(t *testing.T, c fyne.Canvas, s string) {
	t.Helper()
	top := c.Overlays().Top()
	if top == nil {
		t.Fatal("no popup menu is shown")
	}
	var labels []string
	var hit fyne.Tappable
	// Pre-order walk: the last tappable holding the label is the innermost
	// (the menu item, not the popup around it).
	walk(top, func(o fyne.CanvasObject) {
		tp, ok := o.(fyne.Tappable)
		if !ok {
			return
		}
		for _, tx := range texts(o) {
			if strings.Contains(tx.Text, s) {
				hit = tp
				return
			}
		}
	})
	for _, tx := range texts(top) {
		labels = append(labels, tx.Text)
	}
	if hit == nil {
		t.Fatalf("no menu item %q in %q", s, labels)
	}
	test.Tap(hit)
}

// folderOpen reports whether folder id of the tree is open.
func (v *View) folderOpen(id string) bool {
	n := v.m.nodes[id]
	return n != nil && v.isOpen(id, n)
}

// richString is the text of a RichText's segments.
func richString(t *widget.RichText) string { return segmentsText(t) }
