package review

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/style"
)

// chipBorder is the drawn border of chip c: its color and width.
func chipBorder(t *testing.T, c *Chip) *canvas.Rectangle {
	t.Helper()
	for _, o := range test.WidgetRenderer(c).Objects() {
		if r, ok := o.(*canvas.Rectangle); ok {
			return r
		}
	}
	t.Fatal("chip without a border")
	return nil
}

// TestChipsAreTabStops: Tab reaches each counter chip; Space and Enter
// toggle the focused chip's filter, other characters are the review's keys
// (n: next violation); the focused chip is drawn with a strong ring.
func TestChipsAreTabStops(t *testing.T) {
	v, w := newTestView(t, DemoReport(), Options{})
	c := w.Canvas()
	seen := map[*Chip]bool{}
	for range 60 {
		c.FocusNext()
		if ch, ok := c.Focused().(*Chip); ok {
			seen[ch] = true
		}
	}
	for _, ch := range []*Chip{v.filters.added, v.filters.removed, v.filters.changed, v.filters.violations, v.filters.all, v.filters.riskyChip} {
		if !seen[ch] {
			t.Errorf("Tab never reaches the %s chip", ch.Label)
		}
	}
	c.Unfocus()
	plain := chipBorder(t, v.filters.changed).StrokeWidth
	c.Focus(v.filters.changed)
	b := chipBorder(t, v.filters.changed)
	if b.StrokeWidth < 2*plain || !uitest.SameColor(b.StrokeColor, themeColor(theme.ColorNamePrimary)) {
		t.Errorf("the focused chip's border: %.1f px %v; unfocused %.1f px", b.StrokeWidth, b.StrokeColor, plain)
	}
	test.Type(v.filters.changed, " ")
	if v.Filter().Changed {
		t.Error("Space on the Changed chip does not turn it off")
	}
	v.filters.changed.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if !v.Filter().Changed {
		t.Error("Enter on the Changed chip does not turn it on")
	}
	v.filters.changed.TypedRune('n')
	if v.Selected() < 0 || v.Report().Changes[v.Selected()].Allowed {
		t.Errorf("n on a chip does not go to a violation: selected %d", v.Selected())
	}
}

// TestZeroCountChipIsQuiet: a chip that counts nothing is drawn muted, not
// with its kind's loud border.
func TestZeroCountChipIsQuiet(t *testing.T) {
	v, _ := newTestView(t, fileReport([]string{"a.txt", "b.txt"}, "a.txt", "b.txt"), Options{})
	if v.filters.violations.Count != 0 {
		t.Fatalf("violations %d", v.filters.violations.Count)
	}
	b := chipBorder(t, v.filters.violations)
	if uitest.SameColor(b.StrokeColor, themeColor(style.FailColor)) {
		t.Errorf("Violations 0 has the loud border %v", b.StrokeColor)
	}
	if r, g, bl, a := b.StrokeColor.RGBA(); a > 0 && r > g+0x2000 && r > bl+0x2000 {
		t.Errorf("Violations 0 has a red border %v", b.StrokeColor)
	}
}

// TestBannerBulletsAreDots: each reason of the banner has a round bullet
// bulletSize across, left of its text and clear of it (the "•" glyph was a
// speck under the text's edge).
func TestBannerBulletsAreDots(t *testing.T) {
	v, _ := newTestView(t, DemoReport(), Options{})
	drv := fyne.CurrentApp().Driver()
	var dots []*canvas.Circle
	uitest.Walk(v.banner, func(o fyne.CanvasObject) {
		if c, ok := o.(*canvas.Circle); ok {
			dots = append(dots, c)
		}
	})
	if len(dots) < 2 {
		t.Fatalf("%d round bullets in the banner", len(dots))
	}
	for _, d := range dots {
		if d.Size().Width < 6 {
			t.Errorf("a bullet %.0f px across", d.Size().Width)
		}
		right := drv.AbsolutePositionForObject(d).X + d.Size().Width
		for _, tx := range uitest.Texts(v.banner) {
			p := drv.AbsolutePositionForObject(tx)
			dy := drv.AbsolutePositionForObject(d).Y - p.Y
			if dy >= -2 && dy < tx.Size().Height && p.X < right && p.X+tx.Size().Width > right && tx.Text != "" {
				t.Errorf("the bullet at x<%.0f overlaps %q from x=%.0f", right, tx.Text, p.X)
			}
		}
	}
}

// TestHeadlineGroupsDigits: the verdict's sentence writes 4,604 as the
// chips do, not 4604.
func TestHeadlineGroupsDigits(t *testing.T) {
	r := npmReport(4591)
	if got, want := summaryLine(r), "4,604 of 4,604 changes are not covered by the allowlist."; got != want {
		t.Errorf("headline %q, want %q", got, want)
	}
	one := fileReport([]string{"a.txt"})
	if got, want := summaryLine(one), "The one change is not covered by the allowlist."; got != want {
		t.Errorf("one change: %q, want %q", got, want)
	}
	two := fileReport([]string{"a.txt", "b.txt"}, "a.txt")
	if got, want := summaryLine(two), "1 of 2 changes is not covered by the allowlist."; got != want {
		t.Errorf("one violation: %q, want %q", got, want)
	}
}
