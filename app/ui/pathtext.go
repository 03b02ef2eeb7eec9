//go:build !js

package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/widget"
)

// pathText shows a path cut at the front ("…/demo/workspace") to fit: the
// end of a path is what tells paths apart.
type pathText struct {
	widget.BaseWidget
	full string
	text *canvas.Text
}

func newPathText() *pathText {
	p := &pathText{text: canvas.NewText("", color.Black)}
	p.ExtendBaseWidget(p)
	return p
}

func (p *pathText) set(s string, c color.Color, size float32) {
	p.full = s
	p.text.Color, p.text.TextSize = c, size
	p.fit(p.Size().Width)
}

func (p *pathText) fit(w float32) {
	s := p.full
	measure := func(s string) float32 { return fyne.MeasureText(s, p.text.TextSize, p.text.TextStyle).Width }
	if w > 0 && measure(s) > w {
		runes := []rune(s)
		lo, hi := 0, len(runes) // find the longest suffix that fits after "…"
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if measure("…"+string(runes[len(runes)-mid:])) <= w {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		s = "…" + string(runes[len(runes)-lo:])
	}
	p.text.Text = s
	p.text.Refresh()
}

func (p *pathText) CreateRenderer() fyne.WidgetRenderer { return &pathRenderer{p: p} }

type pathRenderer struct{ p *pathText }

func (r *pathRenderer) Layout(s fyne.Size) {
	r.p.fit(s.Width)
	h := r.p.text.MinSize().Height
	r.p.text.Move(fyne.NewPos(0, (s.Height-h)/2))
	r.p.text.Resize(fyne.NewSize(s.Width, h))
}

func (r *pathRenderer) MinSize() fyne.Size {
	return fyne.NewSize(40, r.p.text.MinSize().Height)
}

func (r *pathRenderer) Refresh()                     { r.Layout(r.p.Size()) }
func (r *pathRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.p.text} }
func (r *pathRenderer) Destroy()                     {}
