package style

import (
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
)

func TestNames(t *testing.T) {
	cases := map[fyne.ThemeColorName]fyne.ThemeColorName{
		KindColor(diff.Added):                                      theme.ColorNameSuccess,
		KindColor(diff.Removed):                                    theme.ColorNameError,
		KindColor(diff.Changed):                                    theme.ColorNameWarning,
		VerdictColor(report.Pass):                                  theme.ColorNameSuccess,
		VerdictColor(report.Fail):                                  theme.ColorNameError,
		ChangeColor(&diff.Change{Kind: diff.Added, Allowed: true}): theme.ColorNamePlaceHolder,
		ChangeColor(&diff.Change{Kind: diff.Removed}):              theme.ColorNameError,
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("%s, want %s", got, want)
		}
	}
}

func hue(c color.Color) (r, g, b uint32) { r, g, b, _ = c.RGBA(); return }

// TestThemeReadable checks the kind colors have the right hue on both
// variants and differ from the background enough to read.
func TestThemeReadable(t *testing.T) {
	test.NewTempApp(t)
	th := Theme{}
	for _, v := range []fyne.ThemeVariant{theme.VariantLight, theme.VariantDark} {
		bg := th.Color(theme.ColorNameBackground, v)
		for name, ok := range map[fyne.ThemeColorName]func(r, g, b uint32) bool{
			Added:   func(r, g, b uint32) bool { return g > r && g > b },
			Removed: func(r, g, b uint32) bool { return r > g && r > b },
			Changed: func(r, g, b uint32) bool { return r > b && g > b },
		} {
			c := th.Color(name, v)
			if !ok(hue(c)) {
				t.Errorf("variant %d: %s is %v", v, name, c)
			}
			if contrast(c, bg) < 3 {
				t.Errorf("variant %d: %s %v on %v has contrast %.1f", v, name, c, bg, contrast(c, bg))
			}
		}
	}
}

// Color falls back to tints for the diffgate names under other themes.
func TestColorFallback(t *testing.T) {
	test.NewTempApp(t)
	for _, n := range []fyne.ThemeColorName{ColorNameAddedBackground, ColorNameRemovedBackground, ColorNameHunkBackground,
		ColorNameAddedWordBackground, ColorNameRemovedWordBackground} {
		if _, _, _, a := Color(theme.DefaultTheme(), n).RGBA(); a == 0 {
			t.Errorf("%s is transparent under the default theme", n)
		}
	}
}

func lum(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	f := func(x uint32) float64 {
		v := float64(x) / 0xffff
		if v <= 0.03928 {
			return v / 12.92
		}
		return pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*f(r) + 0.7152*f(g) + 0.0722*f(b)
}

func pow(x, y float64) float64 { return math.Pow(x, y) }

func contrast(a, b color.Color) float64 {
	la, lb := lum(a), lum(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// TestTight: a tight label is as tall as its text plus 2 px on each side,
// and its text is drawn 2 px inside its bounds.
func TestTight(t *testing.T) {
	test.NewTempApp(t)
	l := widget.NewLabel("SHA-256")
	plain := l.MinSize()
	tl := Tight(l)
	w := test.NewTempWindow(t, container.NewVBox(tl))
	w.Resize(fyne.NewSize(300, 200))
	pad := theme.InnerPadding()
	if got, want := tl.MinSize().Height, plain.Height-2*(pad-2); got != want {
		t.Errorf("tight height %g, want %g (plain %g)", got, want, plain.Height)
	}
	var text *canvas.Text
	for _, o := range test.WidgetRenderer(l).Objects() {
		if r, ok := o.(fyne.Widget); ok {
			for _, c := range test.WidgetRenderer(r).Objects() {
				if tx, ok := c.(*canvas.Text); ok {
					text = tx
				}
			}
		}
		if tx, ok := o.(*canvas.Text); ok {
			text = tx
		}
	}
	if text == nil {
		t.Fatal("no text drawn")
	}
	abs := fyne.CurrentApp().Driver().AbsolutePositionForObject(text)
	if d := abs.Y - fyne.CurrentApp().Driver().AbsolutePositionForObject(tl).Y; d != 2 {
		t.Errorf("text drawn %g px below the tight box's top, want 2", d)
	}
}

// over blends c over bg (both opaque results).
func over(c, bg color.Color) color.Color {
	r, g, b, a := c.RGBA()
	br, bgg, bb, _ := bg.RGBA()
	mix := func(x, y uint32) uint8 { return uint8((x*a/0xffff + y*(0xffff-a)/0xffff) >> 8) }
	return color.NRGBA{mix(r, br), mix(g, bgg), mix(b, bb), 0xff}
}

// TestFocusIsVisible: a focused control's fill stands out from the
// background (Fyne's own focus color, 16% blue, was faint).
func TestFocusIsVisible(t *testing.T) {
	test.NewTempApp(t)
	th := Theme{}
	for _, v := range []fyne.ThemeVariant{theme.VariantLight, theme.VariantDark} {
		bg := th.Color(theme.ColorNameBackground, v)
		f := over(th.Color(theme.ColorNameFocus, v), bg)
		if c := contrast(f, bg); c < 1.6 {
			t.Errorf("variant %d: focus %v on %v has contrast %.2f, want 1.6 or more", v, f, bg, c)
		}
	}
}
