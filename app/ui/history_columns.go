//go:build !js

package ui

import (
	"cmp"
	"fmt"
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
	colContained
	colEscapes
	colDecision
	numColumns
)

var columns = [numColumns]struct {
	title string
	width float32 // 0: takes the remaining width
	align fyne.TextAlign
	// drop is the order in which a narrow table leaves the column out
	// (1 first); 0: always shown.
	drop int
}{
	colID:         {"Run", 52, fyne.TextAlignTrailing, 0},
	colDate:       {"Date", 140, fyne.TextAlignLeading, 0},
	colWorkspace:  {"Workspace", 0, fyne.TextAlignLeading, 0},
	colScript:     {"Script", 170, fyne.TextAlignLeading, 4},
	colVerdict:    {"Verdict", 74, fyne.TextAlignCenter, 0},
	colAdded:      {"Added", 66, fyne.TextAlignTrailing, 3},
	colRemoved:    {"Removed", 76, fyne.TextAlignTrailing, 1},
	colChanged:    {"Changed", 76, fyne.TextAlignTrailing, 2},
	colViolations: {"Violations", 86, fyne.TextAlignTrailing, 0},
	colContained:  {"Contained", 84, fyne.TextAlignCenter, 0},
	colEscapes:    {"Blocked/out", 90, fyne.TextAlignTrailing, 0},
	colDecision:   {"Decision", 112, fyne.TextAlignLeading, 0},
}

// flexMin is the least width of the flexible column (the workspace).
const flexMin = 120

// shownColumns is which columns fit in width: all when they do, else
// without the droppable ones, in their drop order, until the rest fits
// (the flexible column keeps at least flexMin).
func shownColumns(width float32) (shown [numColumns]bool) {
	for c := range numColumns {
		shown[c] = true
	}
	for drop := 0; ; drop++ {
		if drop > 0 {
			any := false
			for c := range numColumns {
				if columns[c].drop == drop {
					shown[c], any = false, true
				}
			}
			if !any {
				return shown
			}
		}
		if columnsWidth(shown) <= width {
			return shown
		}
	}
}

// columnsWidth is the width the shown columns need, padding and gaps included.
func columnsWidth(shown [numColumns]bool) float32 {
	w := theme.Padding()*4 + flexMin - columnGap
	for c := range numColumns {
		if shown[c] {
			w += columns[c].width + columnGap
		}
	}
	return w
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
	case colContained:
		r = strings.Compare(containedWord(a.Contained), containedWord(b.Contained))
	case colEscapes:
		r = cmp.Compare(a.Blocked+a.Outside, b.Blocked+b.Outside)
	case colDecision:
		r = strings.Compare(decisionWord(a), decisionWord(b))
	}
	if r == 0 {
		r = cmp.Compare(a.ID, b.ID)
	}
	return r
}

// columnsLayout places one object per column: fixed widths, the flexible
// column takes what is left. The header and every row use it, so they line
// up; a table too narrow for every column leaves the least needed out
// (shownColumns), so the window can be as narrow as 1024 px and narrower.
type columnsLayout struct{}

const columnGap = 10

func (columnsLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	shown := shownColumns(s.Width)
	flex := max(flexMin, s.Width-columnsWidth(shown)+flexMin)
	x := theme.Padding() * 2
	for i, o := range objs {
		if !shown[i] {
			o.Hide()
			continue
		}
		o.Show()
		w := columns[i].width
		if w == 0 {
			w = flex
		}
		o.Move(fyne.NewPos(x, 0))
		o.Resize(fyne.NewSize(w, s.Height))
		x += w + columnGap
	}
}

// MinSize is the height of the tallest cell and the width of the columns
// that are always shown.
func (columnsLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var h float32
	for _, o := range objs {
		h = max(h, o.MinSize().Height)
	}
	var always [numColumns]bool
	for c := range numColumns {
		always[c] = columns[c].drop == 0
	}
	return fyne.NewSize(columnsWidth(always), h)
}

func verdictWord(v string) string {
	if v == report.Pass {
		return "PASS"
	}
	return "FAIL"
}

// containedWord is the Contained column of a run: "yes", "NO" (a layer
// was missing), "OFF" (run not contained) or "—" (recorded before
// containment existed).
func containedWord(c string) string {
	switch c {
	case history.ContainedYes:
		return "yes"
	case history.ContainedNo:
		return "NO"
	case history.ContainedOff:
		return "OFF"
	}
	return "—"
}

// escapesWord is the Blocked/out column: the blocked actions and the
// changes outside the workspace, "0" when there are none.
func escapesWord(s *history.Summary) string {
	if s.Blocked == 0 && s.Outside == 0 {
		return "0"
	}
	return fmt.Sprintf("%d/%d", s.Blocked, s.Outside)
}

// decisionWord is the Decision column: the review's decision ("Approved
// v2"), else what became of a staged run's changes, else "Not reviewed".
func decisionWord(s *history.Summary) string {
	switch s.Decision {
	case history.Approve:
		if s.ApprovedVersion > 0 {
			return fmt.Sprintf("Approved v%d", s.ApprovedVersion)
		}
		return "Approved"
	case history.Reject:
		return "Rejected"
	}
	switch s.Stage {
	case report.StagePending:
		return "To apply"
	case report.StageApplied:
		return "Applied"
	case report.StagePartiallyApplied:
		return "Part applied"
	case report.StageDiscarded:
		return "Discarded"
	case report.StageExpired:
		return "Expired"
	}
	return "Not reviewed"
}
