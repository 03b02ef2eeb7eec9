package keys

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"
)

// SheetTitle is the cheat sheet's title.
const SheetTitle = "Keyboard shortcuts"

// ShowSheet shows the cheat sheet of m over w: every binding with Keys, by
// group, in the table's order (the groups in two columns), and returns the
// dialog.
func ShowSheet(m *Map, w fyne.Window) dialog.Dialog {
	var order []string
	groups := map[string][]Binding{}
	for _, b := range m.Bindings() {
		if b.Keys == "" {
			continue
		}
		if _, ok := groups[b.Group]; !ok {
			order = append(order, b.Group)
		}
		groups[b.Group] = append(groups[b.Group], b)
	}
	// Fill the left column up to about half the rows, the rest goes right.
	total := 0
	for _, g := range order {
		total += len(groups[g]) + 1
	}
	left, right := container.NewVBox(), container.NewVBox()
	n := 0
	for _, g := range order {
		col := left
		if n > 0 && n+len(groups[g])/2 >= total/2 {
			col = right
		}
		n += len(groups[g]) + 1
		col.Add(widget.NewLabelWithStyle(g, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
		form := container.New(layout.NewFormLayout())
		for _, b := range groups[g] {
			form.Add(widget.NewLabelWithStyle(b.Keys, fyne.TextAlignTrailing, fyne.TextStyle{Monospace: true}))
			what := widget.NewLabel(b.What)
			what.Wrapping = fyne.TextWrapWord
			form.Add(what)
		}
		col.Add(form)
	}
	body := container.NewGridWithColumns(2, left, right)
	scroll := container.NewVScroll(body)
	size := w.Canvas().Size()
	scroll.SetMinSize(fyne.NewSize(min(880, max(320, size.Width-96)), min(520, max(200, size.Height-160))))
	d := dialog.NewCustom(SheetTitle, "Close", scroll, w)
	d.Show()
	return d
}
