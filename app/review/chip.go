package review

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/internal/count"
)

// Chip is a counter that doubles as a filter toggle: "Added 3" in the kind's
// color, filled when on, outlined and muted when off.
type Chip struct {
	widget.BaseWidget

	Label     string
	Count     int
	ColorName fyne.ThemeColorName
	On        bool
	// onToggled is called with the new state after a tap (or Space or
	// Enter while the chip has the focus).
	onToggled func(on bool)
	// OnRune gets the characters typed while the chip has the focus
	// (but Space): the review's keys still work there.
	OnRune func(r rune)

	hovered, focused bool
}

var _ fyne.Focusable = (*Chip)(nil)

// FocusGained implements fyne.Focusable: the chip is a Tab stop.
func (c *Chip) FocusGained() { c.focused = true; c.Refresh() }

// FocusLost implements fyne.Focusable.
func (c *Chip) FocusLost() { c.focused = false; c.Refresh() }

// TypedRune implements fyne.Focusable: Space toggles the chip.
func (c *Chip) TypedRune(r rune) {
	switch {
	case r == ' ':
		c.Tapped(nil)
	case c.OnRune != nil:
		c.OnRune(r)
	default:
		keys.PassRune(c, r)
	}
}

// TypedKey implements fyne.Focusable: Enter toggles the chip; the
// window's keys (F1, Escape) pass on.
func (c *Chip) TypedKey(ev *fyne.KeyEvent) {
	switch ev.Name {
	case fyne.KeyReturn, fyne.KeyEnter:
		c.Tapped(nil)
	default:
		keys.PassFunctionKey(c, ev)
	}
}

// newChip returns a chip that is on.
func newChip(label string, colorName fyne.ThemeColorName, toggled func(bool)) *Chip {
	c := &Chip{Label: label, ColorName: colorName, On: true, onToggled: toggled}
	c.ExtendBaseWidget(c)
	return c
}

// Text is the chip's text, e.g. "Added 3,301".
func (c *Chip) Text() string { return c.Label + " " + count.Digits(c.Count) }

// setCount updates the number shown.
func (c *Chip) setCount(n int) {
	if c.Count != n {
		c.Count = n
		c.Refresh()
	}
}

// setOn sets the state without calling OnToggled.
func (c *Chip) setOn(on bool) {
	if c.On != on {
		c.On = on
		c.Refresh()
	}
}

// Tapped toggles the chip.
func (c *Chip) Tapped(*fyne.PointEvent) {
	c.On = !c.On
	c.Refresh()
	if c.onToggled != nil {
		c.onToggled(c.On)
	}
}

// Cursor implements desktop.Cursorable.
func (c *Chip) Cursor() desktop.Cursor { return desktop.PointerCursor }

// MouseIn implements desktop.Hoverable.
func (c *Chip) MouseIn(*desktop.MouseEvent) { c.hovered = true; c.Refresh() }

// MouseMoved implements desktop.Hoverable.
func (c *Chip) MouseMoved(*desktop.MouseEvent) {}

// MouseOut implements desktop.Hoverable.
func (c *Chip) MouseOut() { c.hovered = false; c.Refresh() }

// CreateRenderer implements fyne.Widget.
func (c *Chip) CreateRenderer() fyne.WidgetRenderer {
	r := &chipRenderer{c: c, bg: canvas.NewRectangle(color.Transparent),
		label: canvas.NewText("", color.Black), count: canvas.NewText("", color.Black)}
	r.bg.StrokeWidth = 1.5
	r.count.TextStyle.Bold = true
	r.Refresh()
	return r
}

type chipRenderer struct {
	c            *Chip
	bg           *canvas.Rectangle
	label, count *canvas.Text
}

func (r *chipRenderer) pad() float32 { return r.c.Theme().Size(theme.SizeNameInnerPadding) }

func (r *chipRenderer) MinSize() fyne.Size {
	l, n := r.label.MinSize(), r.count.MinSize()
	p := r.pad()
	return fyne.NewSize(l.Width+n.Width+p*2.5, fyne.Max(l.Height, n.Height)+p)
}

func (r *chipRenderer) Layout(s fyne.Size) {
	r.bg.Resize(s)
	p := r.pad()
	l, n := r.label.MinSize(), r.count.MinSize()
	y := (s.Height - l.Height) / 2
	r.label.Move(fyne.NewPos(p, y))
	r.count.Move(fyne.NewPos(p+l.Width+p/2, (s.Height-n.Height)/2))
}

func (r *chipRenderer) Refresh() {
	th := r.c.Theme()
	c := style.Color(th, r.c.ColorName)
	r.bg.CornerRadius = th.Size(theme.SizeNameInputRadius) * 2
	r.label.Text = r.c.Label
	r.count.Text = count.Digits(r.c.Count)
	r.label.TextSize, r.count.TextSize = th.Size(theme.SizeNameText), th.Size(theme.SizeNameText)
	r.bg.StrokeWidth = 1.5
	if r.c.On && r.c.Count > 0 {
		r.bg.FillColor = style.Tint(c, 0x30)
		if r.c.hovered {
			r.bg.FillColor = style.Tint(c, 0x48)
		}
		r.bg.StrokeColor = c
		r.label.Color, r.count.Color = c, c
	} else {
		// Off, or on with nothing to show (quiet, not a loud border).
		muted := style.Color(th, style.Muted)
		r.bg.FillColor = color.Transparent
		if r.c.hovered {
			r.bg.FillColor = style.Color(th, theme.ColorNameHover)
		}
		r.bg.StrokeColor = style.Tint(muted, 0x80)
		if r.c.On {
			r.bg.StrokeColor = style.Tint(muted, 0x60)
		}
		r.label.Color, r.count.Color = muted, muted
	}
	if r.c.focused { // a ring as strong as the buttons' focus
		r.bg.StrokeColor = style.Color(th, theme.ColorNamePrimary)
		r.bg.StrokeWidth = 3
	}
	r.label.TextStyle.Strikethrough = !r.c.On
	r.bg.Refresh()
	r.label.Refresh()
	r.count.Refresh()
	r.Layout(r.c.Size())
}

func (r *chipRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.bg, r.label, r.count}
}

func (r *chipRenderer) Destroy() {}
