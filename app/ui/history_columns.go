//go:build !js

package ui

import (
	"cmp"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
)

// column is a column of the run table.
type column int

const (
	colID column = iota
	colDate
	colWorkspace
	colScript
	colVerdict
	colAdded
	colRemoved
	colChanged
	colViolations
	colDecision
	numColumns
)

var columns = [numColumns]struct {
	title string
	width float32 // 0: takes the remaining width
	align fyne.TextAlign
}{
	colID:         {"Run", 52, fyne.TextAlignTrailing},
	colDate:       {"Date", 140, fyne.TextAlignLeading},
	colWorkspace:  {"Workspace", 0, fyne.TextAlignLeading},
	colScript:     {"Script", 170, fyne.TextAlignLeading},
	colVerdict:    {"Verdict", 74, fyne.TextAlignCenter},
	colAdded:      {"Added", 66, fyne.TextAlignTrailing},
	colRemoved:    {"Removed", 76, fyne.TextAlignTrailing},
	colChanged:    {"Changed", 76, fyne.TextAlignTrailing},
	colViolations: {"Violations", 86, fyne.TextAlignTrailing},
	colDecision:   {"Decision", 112, fyne.TextAlignLeading},
}

// less orders two runs by column c, ascending (ties: by run number).
func less(c column, a, b *history.Summary) int {
	var r int
	switch c {
	case colDate:
		r = a.StartedAt.Compare(b.StartedAt)
	case colWorkspace:
		r = strings.Compare(a.Workspace, b.Workspace)
	case colScript:
		r = strings.Compare(filepath.Base(a.Script), filepath.Base(b.Script))
	case colVerdict:
		r = strings.Compare(a.Verdict, b.Verdict)
	case colAdded:
		r = cmp.Compare(a.Added, b.Added)
	case colRemoved:
		r = cmp.Compare(a.Removed, b.Removed)
	case colChanged:
		r = cmp.Compare(a.Changed, b.Changed)
	case colViolations:
		r = cmp.Compare(a.Violations, b.Violations)
	case colDecision:
		r = strings.Compare(a.Decision, b.Decision)
	}
	if r == 0 {
		r = cmp.Compare(a.ID, b.ID)
	}
	return r
}

// columnsLayout places one object per column: fixed widths, the flexible
// column takes what is left. The header and every row use it, so they line up.
type columnsLayout struct{}

const columnGap = 10

func (columnsLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	pad := theme.Padding() * 2
	fixed := 2*pad + columnGap*float32(numColumns-1)
	for c := range numColumns {
		fixed += columns[c].width
	}
	flex := max(120, s.Width-fixed)
	x := pad
	for i, o := range objs {
		w := columns[i].width
		if w == 0 {
			w = flex
		}
		o.Move(fyne.NewPos(x, 0))
		o.Resize(fyne.NewSize(w, s.Height))
		x += w + columnGap
	}
}

func (columnsLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var h float32
	for _, o := range objs {
		h = max(h, o.MinSize().Height)
	}
	w := theme.Padding()*4 + 120 + columnGap*float32(numColumns-1)
	for c := range numColumns {
		w += columns[c].width
	}
	return fyne.NewSize(w, h)
}

func verdictWord(v string) string {
	if v == report.Pass {
		return "PASS"
	}
	return "FAIL"
}
