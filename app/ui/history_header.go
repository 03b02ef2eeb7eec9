//go:build !js

package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
)

// headerCell is a clickable column header: a bold caption and, on the
// sorted column, an arrow for the order.
type headerCell struct {
	widget.BaseWidget
	text    *canvas.Text
	arrow   *widget.Icon
	bg      *canvas.Rectangle
	align   fyne.TextAlign
	dir     int // 1 ascending, -1 descending, 0 not sorted
	hovered bool
	onTap   func()
}

func newHeaderCell(title string, align fyne.TextAlign, onTap func()) *headerCell {
	h := &headerCell{text: canvas.NewText(title, color.Black), arrow: widget.NewIcon(nil),
		bg: canvas.NewRectangle(color.Transparent), align: align, onTap: onTap}
	h.text.TextStyle.Bold = true
	h.bg.CornerRadius = 4
	h.ExtendBaseWidget(h)
	return h
}

// Title is the header's text.
func (h *headerCell) Title() string { return h.text.Text }

func (h *headerCell) setSort(dir int) {
	if h.dir == dir {
		return
	}
	h.dir = dir
	h.Refresh()
}

func (h *headerCell) Tapped(*fyne.PointEvent)        { h.onTap() }
func (h *headerCell) Cursor() desktop.Cursor         { return desktop.PointerCursor }
func (h *headerCell) MouseIn(*desktop.MouseEvent)    { h.hovered = true; h.Refresh() }
func (h *headerCell) MouseMoved(*desktop.MouseEvent) {}
func (h *headerCell) MouseOut()                      { h.hovered = false; h.Refresh() }

func (h *headerCell) CreateRenderer() fyne.WidgetRenderer {
	return &headerRenderer{h: h, objs: []fyne.CanvasObject{h.bg, h.text, h.arrow}}
}

type headerRenderer struct {
	h    *headerCell
	objs []fyne.CanvasObject
}

func (r *headerRenderer) MinSize() fyne.Size {
	ts := fyne.MeasureText(r.h.text.Text, r.h.text.TextSize, r.h.text.TextStyle)
	return fyne.NewSize(ts.Width+theme.IconInlineSize(), ts.Height+3*theme.Padding())
}

func (r *headerRenderer) Layout(s fyne.Size) {
	h := r.h
	r.h.bg.Move(fyne.NewPos(-4, 2))
	r.h.bg.Resize(fyne.NewSize(s.Width+8, s.Height-4))
	ts := fyne.MeasureText(h.text.Text, h.text.TextSize, h.text.TextStyle)
	icon := float32(0)
	if h.dir != 0 {
		icon = theme.IconInlineSize() * 0.8
	}
	w := ts.Width + icon
	x := float32(0)
	switch h.align {
	case fyne.TextAlignTrailing:
		x = s.Width - w
	case fyne.TextAlignCenter:
		x = (s.Width - w) / 2
	}
	y := (s.Height - ts.Height) / 2
	h.text.Move(fyne.NewPos(x, y))
	h.text.Resize(ts)
	h.arrow.Move(fyne.NewPos(x+ts.Width, (s.Height-icon)/2))
	h.arrow.Resize(fyne.NewSquareSize(icon))
}

func (r *headerRenderer) Refresh() {
	h := r.h
	th := h.Theme()
	h.text.TextSize = th.Size(theme.SizeNameText)
	h.text.Color = style.Color(th, theme.ColorNameForeground)
	if h.dir == 0 {
		h.text.Color = style.Color(th, style.Muted)
	}
	switch h.dir {
	case 1:
		h.arrow.SetResource(style.Colored(theme.MenuDropUpIcon(), theme.ColorNameForeground))
	case -1:
		h.arrow.SetResource(style.Colored(theme.MenuDropDownIcon(), theme.ColorNameForeground))
	default:
		h.arrow.SetResource(nil)
	}
	h.bg.FillColor = color.Transparent
	if h.hovered {
		h.bg.FillColor = style.Color(th, theme.ColorNameHover)
	}
	r.Layout(h.Size())
	for _, o := range r.objs {
		o.Refresh()
	}
}

func (r *headerRenderer) Objects() []fyne.CanvasObject { return r.objs }
func (r *headerRenderer) Destroy()                     {}
