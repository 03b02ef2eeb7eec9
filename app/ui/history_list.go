//go:build !js

package ui

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
)

// historyList is the list of runs: up/down select, Enter opens.
type historyList struct {
	widget.List
	t          *historyTab
	navigating bool
}

func newHistoryList(t *historyTab) *historyList {
	l := &historyList{t: t}
	l.Length = func() int { return len(t.rows) }
	l.CreateItem = func() fyne.CanvasObject { return newHistoryRow(t) }
	l.UpdateItem = func(i widget.ListItemID, o fyne.CanvasObject) {
		if i < len(t.rows) {
			o.(*historyRow).set(i, &t.rows[i])
		}
	}
	l.OnSelected = func(i widget.ListItemID) { t.selectRow(i) }
	l.OnHighlighted = func(i widget.ListItemID) {
		if l.navigating {
			l.Select(i)
		}
	}
	l.ExtendBaseWidget(l)
	return l
}

// TypedKey implements fyne.Focusable.
func (l *historyList) TypedKey(ev *fyne.KeyEvent) {
	switch ev.Name {
	case fyne.KeyReturn, fyne.KeyEnter:
		if l.t.selected > 0 {
			l.t.open(l.t.selected)
		}
	case fyne.KeyUp, fyne.KeyDown:
		l.navigating = true
		l.List.TypedKey(ev)
		l.navigating = false
	default:
		if !keys.PassFunctionKey(l, ev) {
			l.List.TypedKey(ev)
		}
	}
}

// TypedRune implements fyne.Focusable: the list types nothing, so a
// character goes to the window's keys ('?': the cheat sheet).
func (l *historyList) TypedRune(r rune) { keys.PassRune(l, r) }

// historyRow is one run in the table.
type historyRow struct {
	widget.BaseWidget
	t    *historyTab
	i    int
	id   int64
	box  *fyne.Container
	cell [numColumns]*canvas.Text
	ws   *pathText
	pill *canvas.Rectangle
	dec  *widget.Icon
}

func newHistoryRow(t *historyTab) *historyRow {
	r := &historyRow{t: t, ws: newPathText(), pill: canvas.NewRectangle(color.Transparent), dec: widget.NewIcon(nil)}
	r.pill.CornerRadius = 9
	objs := make([]fyne.CanvasObject, numColumns)
	for c := range numColumns {
		tx := canvas.NewText("", color.Black)
		tx.Alignment = columns[c].align
		r.cell[c] = tx
		objs[c] = tx
	}
	objs[colWorkspace] = r.ws
	objs[colVerdict] = container.NewStack(container.New(&pillLayout{}, r.pill), r.cell[colVerdict])
	objs[colDecision] = container.NewBorder(nil, nil, container.NewCenter(container.NewGridWrap(fyne.NewSquareSize(theme.IconInlineSize()*0.9), r.dec)), nil, r.cell[colDecision])
	r.box = container.New(&columnsLayout{}, objs...)
	r.ExtendBaseWidget(r)
	return r
}

func (r *historyRow) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.New(layout.NewCustomPaddedLayout(2, 2, 0, 0), r.box))
}

// MinSize is one text line with room around it.
func (r *historyRow) MinSize() fyne.Size {
	m := r.box.MinSize()
	return fyne.NewSize(m.Width, fyne.MeasureText("Ag", theme.TextSize(), fyne.TextStyle{}).Height+2*theme.Padding()+6)
}

// Tapped selects the row; DoubleTapped opens it.
func (r *historyRow) Tapped(*fyne.PointEvent) {
	r.t.list.Select(r.i)
	if c := fyne.CurrentApp().Driver().CanvasForObject(r.t.list); c != nil {
		c.Focus(r.t.list)
	}
}

func (r *historyRow) DoubleTapped(*fyne.PointEvent) {
	r.t.list.Select(r.i)
	r.t.open(r.id)
}

// Text returns the row's cells as shown, joined by " | " (for tests).
func (r *historyRow) Text() string {
	var parts []string
	for c := range numColumns {
		if c == colWorkspace {
			parts = append(parts, r.ws.full)
			continue
		}
		parts = append(parts, r.cell[c].Text)
	}
	return strings.Join(parts, " | ")
}

// rowPaint puts texts into a row's cells in the list's theme.
type rowPaint struct {
	r         *historyRow
	th        fyne.Theme
	fg, muted color.Color
	size      float32
}

func (p rowPaint) col(n fyne.ThemeColorName) color.Color { return style.Color(p.th, n) }

func (p rowPaint) put(c column, text string, clr color.Color, bold bool) {
	tx := p.r.cell[c]
	tx.Text, tx.Color, tx.TextStyle.Bold, tx.TextSize = text, clr, bold, p.size
	tx.Refresh()
}

// loud puts text bold in the fail color, or muted when it is quiet.
func (p rowPaint) loud(c column, text string, quiet bool) {
	if quiet {
		p.put(c, text, p.muted, false)
	} else {
		p.put(c, text, p.col(style.FailColor), true)
	}
}

func (r *historyRow) set(i int, s *history.Summary) {
	r.i, r.id = i, s.ID
	th := r.t.list.Theme()
	p := rowPaint{r: r, th: th, fg: style.Color(th, theme.ColorNameForeground), muted: style.Color(th, style.Muted), size: th.Size(theme.SizeNameText)}
	p.put(colID, fmt.Sprint(s.ID), p.muted, false)
	p.put(colDate, s.StartedAt.Local().Format("2006-01-02 15:04"), p.fg, false)
	ws := homeRel(s.Workspace)
	if isDemoWorkspace(s.Workspace) { // marked at the end, which a cut path keeps
		ws = filepath.Base(filepath.Dir(s.Workspace)) + " (demo)"
	}
	r.ws.set(ws, p.fg, p.size)
	p.put(colScript, filepath.Base(s.Script), p.fg, false)
	r.setVerdict(p, s.Verdict)
	p.count(colAdded, s.Added, "+", style.Added)
	p.count(colRemoved, s.Removed, "−", style.Removed)
	p.count(colChanged, s.Changed, "~", style.Changed)
	p.loud(colViolations, count.Digits(s.Violations), s.Violations == 0)
	switch ct := containedWord(s.Contained); ct {
	case "yes":
		p.put(colContained, ct, p.col(style.PassColor), false)
	default: // as loud as a failed verdict; "—": not known
		p.loud(colContained, ct, ct == "—")
	}
	e := escapesWord(s)
	p.loud(colEscapes, e, e == "0")
	c, icon := decisionLook(s)
	p.put(colDecision, decisionWord(s), p.col(c), false)
	r.dec.SetResource(style.Colored(icon, c))
}

// count puts n with its sign in the kind's color, or a muted 0.
func (p rowPaint) count(c column, n int, sign string, name fyne.ThemeColorName) {
	if n == 0 {
		p.put(c, "0", p.muted, false)
		return
	}
	p.put(c, sign+count.Digits(n), p.col(name), false)
}

// setVerdict puts the verdict in its pill.
func (r *historyRow) setVerdict(p rowPaint, verdict string) {
	vc := p.col(style.VerdictColor(verdict))
	p.put(colVerdict, verdictWord(verdict), vc, true)
	r.cell[colVerdict].TextSize = p.th.Size(theme.SizeNameCaptionText)
	r.pill.FillColor = style.Tint(vc, 0x26)
	r.pill.StrokeColor = style.Tint(vc, 0x80)
	r.pill.StrokeWidth = 1
	r.pill.Refresh()
}

// decisionLook is the color and icon of the run's decision column: the
// reviewer's decision, else what became of its stage.
func decisionLook(s *history.Summary) (fyne.ThemeColorName, fyne.Resource) {
	switch s.Decision {
	case history.Approve:
		return style.PassColor, theme.ConfirmIcon()
	case history.Reject:
		return style.FailColor, theme.CancelIcon()
	}
	switch s.Stage {
	case report.StagePending: // staged: nothing applied yet
		return theme.ColorNameWarning, theme.DownloadIcon()
	case report.StageApplied, report.StagePartiallyApplied:
		return theme.ColorNameForeground, theme.DocumentSaveIcon()
	case report.StageDiscarded, report.StageExpired:
		return style.Muted, theme.DeleteIcon()
	}
	return style.Muted, theme.RadioButtonIcon()
}

// homeRel shortens a path under the home directory to ~/….
func homeRel(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		return "~" + string(filepath.Separator) + rel
	}
	return p
}

// pillLayout draws the verdict pill centered, a fixed size.
type pillLayout struct{}

func (pillLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	w, h := min(s.Width, 54), min(s.Height, 20)
	for _, o := range objs {
		o.Move(fyne.NewPos((s.Width-w)/2, (s.Height-h)/2))
		o.Resize(fyne.NewSize(w, h))
	}
}

func (pillLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(54, 20) }
