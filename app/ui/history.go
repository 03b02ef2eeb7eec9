//go:build !js

package ui

import (
	"cmp"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
)

// historyLimit is how many runs the History tab loads (newest first); the
// status line says when there are more.
const historyLimit = 1000

// Filter choices.
const (
	allWorkspaces = "All workspaces"
	verdictAll    = "All"
	verdictPass   = "Pass"
	verdictFail   = "Fail"
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

// historyTab is the History tab: the recorded runs as a sortable,
// filterable table (double-click or Enter opens one in the Review tab), the
// selected run's summary, and the workspace's approved allowlist versions
// with what each changed.
type historyTab struct {
	u *UI

	all      []history.Summary // as loaded (newest first)
	rows     []history.Summary // sorted for display
	total    int               // runs the filter selects (may exceed len(all))
	sortCol  column
	sortDesc bool
	selected int64 // run id, 0 when none
	detailN  int   // generation of the selected run's detail load
	// detailRun is the last run read for the detail card (reused while the
	// same run stays selected across reloads, so the card does not flicker).
	detailRun *history.Run

	wsFilter      string // "" = all
	verdictFilter string // "" = all
	workspaces    []string

	wsSelect   *widget.Select
	verdict    *widget.RadioGroup
	status     *widget.RichText
	headers    [numColumns]*headerCell
	list       *historyList
	openBtn    *widget.Button
	detail     *fyne.Container
	versions   *fyne.Container
	versionsWS *widget.RichText
	body       *fyne.Container
	root       fyne.CanvasObject
}

func newHistoryTab(u *UI) *historyTab {
	t := &historyTab{u: u, sortCol: colDate, sortDesc: true}

	t.wsSelect = widget.NewSelect(nil, func(s string) {
		if s == allWorkspaces {
			s = ""
		}
		if s != t.wsFilter {
			t.wsFilter = s
			t.reload()
		}
	})
	t.wsSelect.PlaceHolder = allWorkspaces
	t.verdict = widget.NewRadioGroup([]string{verdictAll, verdictPass, verdictFail}, func(s string) {
		v := ""
		switch s {
		case verdictPass:
			v = report.Pass
		case verdictFail:
			v = report.Fail
		}
		if v != t.verdictFilter {
			t.verdictFilter = v
			t.reload()
		}
	})
	t.verdict.Horizontal = true
	t.verdict.Required = true
	t.verdict.Selected = verdictAll
	t.status = widget.NewRichText()

	var heads []fyne.CanvasObject
	for c := range numColumns {
		t.headers[c] = newHeaderCell(columns[c].title, columns[c].align, func() { t.sortBy(c) })
		heads = append(heads, t.headers[c])
	}
	headerBG := canvas.NewRectangle(theme.Color(theme.ColorNameHeaderBackground))
	header := container.NewStack(headerBG, container.New(&columnsLayout{}, heads...))

	t.list = newHistoryList(t)
	t.openBtn = widget.NewButtonWithIcon("Open in Review", theme.VisibilityIcon(), func() {
		if t.selected > 0 {
			t.open(t.selected)
		}
	})
	t.openBtn.Importance = widget.HighImportance
	t.openBtn.Disable()
	refresh := widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), t.reload)
	refresh.Importance = widget.LowImportance
	if u.hist == nil {
		refresh.Hide()
	}

	title := widget.NewRichText(&widget.TextSegment{Text: "Run history",
		Style: widget.RichTextStyle{SizeName: theme.SizeNameSubHeadingText, TextStyle: fyne.TextStyle{Bold: true}}})
	filters := container.NewBorder(nil, nil,
		container.NewHBox(widget.NewLabelWithStyle("Workspace", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})),
		container.NewHBox(widget.NewSeparator(),
			widget.NewLabelWithStyle("Verdict", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), t.verdict),
		t.wsSelect)
	top := container.NewVBox(
		container.NewBorder(nil, nil, nil, container.NewHBox(container.NewCenter(t.status), refresh), title),
		filters)

	table := container.NewBorder(header, nil, nil, nil, t.list)
	t.detail = container.NewStack()
	t.versions = container.NewVBox()
	t.versionsWS = widget.NewRichText()
	t.versionsWS.Wrapping = fyne.TextWrapBreak
	versionsPane := container.NewBorder(
		container.NewVBox(heading("Approved allowlist versions"), t.versionsWS), nil, nil, nil,
		container.NewVScroll(t.versions))
	detailPane := container.NewBorder(heading("Selected run"), nil, nil, nil, t.detail)
	bottom := container.NewHSplit(container.NewPadded(detailPane), container.NewPadded(versionsPane))
	bottom.Offset = 0.55
	split := container.NewVSplit(framed(table), bottom)
	split.Offset = 0.62
	t.body = container.NewStack(split)
	t.root = container.NewBorder(top, nil, nil, nil, t.body)
	t.reload()
	return t
}

// reload reads the runs the filters select (and the workspaces for the
// filter) from the database, keeping the selection when it is still listed.
func (t *historyTab) reload() {
	h := t.u.hist
	if h == nil {
		t.all, t.rows, t.total = nil, nil, 0
		t.setStatus("", style.Muted)
		msg := widget.NewRichText(
			&widget.TextSegment{Text: "The history is unavailable", Style: widget.RichTextStyle{
				SizeName: theme.SizeNameSubHeadingText, TextStyle: fyne.TextStyle{Bold: true}, Alignment: fyne.TextAlignCenter}},
			&widget.TextSegment{Text: oneLine(t.u.histErr), Style: widget.RichTextStyle{
				ColorName: theme.ColorNameWarning, Alignment: fyne.TextAlignCenter}},
			&widget.TextSegment{Text: "Runs still work, but are not recorded. Fix or move the file (or set " + history.EnvDB + ") and restart.",
				Style: widget.RichTextStyle{ColorName: style.Muted, Alignment: fyne.TextAlignCenter}})
		msg.Wrapping = fyne.TextWrapWord
		t.body.Objects = []fyne.CanvasObject{container.NewCenter(container.NewGridWrap(fyne.NewSize(720, 160), msg))}
		t.body.Refresh()
		t.wsSelect.Disable()
		t.verdict.Disable()
		return
	}
	ws, err := h.Workspaces()
	if err == nil {
		t.workspaces = ws
		opts := append([]string{allWorkspaces}, ws...)
		t.wsSelect.SetOptions(opts)
		sel := allWorkspaces
		if t.wsFilter != "" {
			sel = t.wsFilter
		}
		if t.wsSelect.Selected != sel {
			t.wsSelect.Selected = sel
			t.wsSelect.Refresh()
		}
	}
	f := history.Filter{Workspace: t.wsFilter, Verdict: t.verdictFilter, Limit: historyLimit}
	var runs []history.Summary
	if err == nil {
		runs, err = h.List(f)
	}
	if err == nil {
		t.total, err = h.Count(f)
	}
	if err != nil {
		t.setStatus("Cannot read the history: "+oneLine(err), style.FailColor)
		return
	}
	// Follow the newest run when it was the one selected (or none was).
	if t.selected == 0 || len(t.all) > 0 && t.selected == newestID(t.all) {
		t.selected = newestID(runs)
	}
	t.all = runs
	t.sortRows()
	switch {
	case t.total == 0 && t.wsFilter == "" && t.verdictFilter == "":
		t.setStatus("No runs yet", style.Muted)
	case t.total == 0:
		t.setStatus("No run matches the filter", style.Muted)
	case t.total > len(runs):
		t.setStatus(fmt.Sprintf("The %s most recent of %s runs", review.GroupDigits(len(runs)), review.GroupDigits(t.total)), style.Muted)
	default:
		t.setStatus(plural(t.total, "run", "runs"), style.Muted)
	}
	if t.selected > 0 && t.indexOf(t.selected) < 0 {
		t.selected = 0
	}
	t.list.UnselectAll()
	if i := t.indexOf(t.selected); i >= 0 {
		t.list.Select(i)
	} else {
		t.showDetail(nil, nil)
	}
	t.list.Refresh()
	t.showVersions()
}

// newestID is the highest run id in runs (0 when empty).
func newestID(runs []history.Summary) int64 {
	var id int64
	for i := range runs {
		id = max(id, runs[i].ID)
	}
	return id
}

func (t *historyTab) setStatus(s string, c fyne.ThemeColorName) {
	t.status.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: s,
		Style: widget.RichTextStyle{ColorName: c, Inline: true}}}
	t.status.Refresh()
}

// sortBy sorts by column c; the sorted column's header toggles the order.
func (t *historyTab) sortBy(c column) {
	if c == t.sortCol {
		t.sortDesc = !t.sortDesc
	} else {
		t.sortCol = c
		// Newest, largest, most violating first; names A to Z.
		t.sortDesc = c == colDate || c == colID || c >= colAdded && c <= colViolations
	}
	t.sortRows()
	t.list.UnselectAll()
	if i := t.indexOf(t.selected); i >= 0 {
		t.list.Select(i)
		t.list.ScrollTo(i)
	}
	t.list.Refresh()
}

func (t *historyTab) sortRows() {
	t.rows = slices.Clone(t.all)
	slices.SortStableFunc(t.rows, func(a, b history.Summary) int {
		r := less(t.sortCol, &a, &b)
		if t.sortDesc {
			r = -r
		}
		return r
	})
	for c := range numColumns {
		dir := 0
		if c == t.sortCol {
			dir = 1
			if t.sortDesc {
				dir = -1
			}
		}
		t.headers[c].setSort(dir)
	}
}

func (t *historyTab) indexOf(id int64) int {
	for i := range t.rows {
		if t.rows[i].ID == id {
			return i
		}
	}
	return -1
}

// selectRow selects the run in row i: its summary, then (read in the
// background) its reasons and decision, and its workspace's allowlists.
func (t *historyTab) selectRow(i int) {
	if i < 0 || i >= len(t.rows) {
		return
	}
	s := &t.rows[i]
	t.selected = s.ID
	t.openBtn.Enable()
	var known *history.Run
	if t.detailRun != nil && t.detailRun.ID == s.ID {
		known = t.detailRun
	}
	t.showDetail(s, known)
	t.showVersions()
	t.detailN++
	gen, id, h := t.detailN, s.ID, t.u.hist
	go func() {
		run, err := h.Get(id)
		if err != nil {
			t.u.log.Warn().Err(err).Int64("run", id).Msg("read run")
			return
		}
		t.u.do(func() {
			if gen == t.detailN && t.selected == id {
				t.detailRun = run
				if k := t.indexOf(id); k >= 0 {
					t.showDetail(&t.rows[k], run)
				}
			}
		})
	}()
}

// open shows run id in the Review tab.
func (t *historyTab) open(id int64) {
	if err := t.u.openRun(id); err != nil {
		t.setStatus("Cannot open run "+fmt.Sprint(id)+": "+oneLine(err), style.FailColor)
	}
}

// showDetail fills the selected-run card from its summary s and, once
// loaded, the full run.
func (t *historyTab) showDetail(s *history.Summary, run *history.Run) {
	if s == nil {
		t.openBtn.Disable()
		hint := widget.NewRichText(&widget.TextSegment{
			Text:  "Select a run to see its summary. Double-click it or press Enter to open it in the Review tab.",
			Style: widget.RichTextStyle{ColorName: style.Muted}})
		hint.Wrapping = fyne.TextWrapWord
		t.detail.Objects = []fyne.CanvasObject{container.NewVBox(hint)}
		t.detail.Refresh()
		return
	}
	vc := style.VerdictColor(s.Verdict)
	head := widget.NewRichText(
		&widget.TextSegment{Text: verdictWord(s.Verdict) + "  ", Style: widget.RichTextStyle{ColorName: vc, Inline: true,
			SizeName: theme.SizeNameSubHeadingText, TextStyle: fyne.TextStyle{Bold: true}}},
		&widget.TextSegment{Text: fmt.Sprintf("Run %d", s.ID), Style: widget.RichTextStyle{Inline: true,
			SizeName: theme.SizeNameSubHeadingText, TextStyle: fyne.TextStyle{Bold: true}}},
		&widget.TextSegment{Text: "   " + s.StartedAt.Local().Format("Mon 2 Jan 2006, 15:04:05"), Style: widget.RichTextStyle{
			ColorName: style.Muted, Inline: true}},
	)
	lines := []fyne.CanvasObject{container.NewBorder(nil, nil, nil, t.openBtn, head)}
	if run != nil && len(run.Report.Reasons) > 0 {
		lines = append(lines, wrapped(strings.Join(run.Report.Reasons, " · "), vc, true))
	}
	form := container.New(layout.NewFormLayout())
	addRow := func(k string, v fyne.CanvasObject) {
		form.Add(style.Tight(widget.NewLabelWithStyle(k, fyne.TextAlignTrailing, fyne.TextStyle{Bold: true})))
		form.Add(style.Tight(v))
	}
	addRow("Script", wrapped(s.Script, "", false))
	addRow("Workspace", wrapped(s.Workspace, "", false))
	sep := func() widget.RichTextSegment {
		return &widget.TextSegment{Text: ",  ", Style: widget.RichTextStyle{Inline: true, ColorName: style.Muted}}
	}
	counts := widget.NewRichText(
		countSeg(s.Added, "+", " added", style.Added), sep(),
		countSeg(s.Removed, "−", " removed", style.Removed), sep(),
		countSeg(s.Changed, "~", " changed", style.Changed))
	if s.Violations > 0 {
		counts.Segments = append(counts.Segments, &widget.TextSegment{Text: "   " + plural(s.Violations, "violation", "violations"),
			Style: widget.RichTextStyle{Inline: true, ColorName: style.FailColor, TextStyle: fyne.TextStyle{Bold: true}}})
	}
	addRow("Changes", counts)
	if run != nil {
		al := "entered by hand"
		if run.AllowlistVersion > 0 {
			al = fmt.Sprintf("approved version %d", run.AllowlistVersion)
		}
		segs := []widget.RichTextSegment{&widget.TextSegment{Text: al + ":  ", Style: widget.RichTextStyle{Inline: true, ColorName: style.Muted}}}
		if len(run.Report.Allowlist) == 0 {
			segs = append(segs, &widget.TextSegment{Text: "empty", Style: widget.RichTextStyle{Inline: true, ColorName: style.Muted}})
		}
		for _, e := range run.Report.Allowlist {
			segs = append(segs, &widget.TextSegment{Text: e + "  ", Style: widget.RichTextStyle{Inline: true, TextStyle: fyne.TextStyle{Monospace: true}}})
		}
		alText := widget.NewRichText(segs...)
		alText.Wrapping = fyne.TextWrapWord
		addRow("Allowlist", alText)
		if text, c := decisionText(run); text != "" {
			addRow("Decision", wrapped(text, c, true))
		} else {
			addRow("Decision", wrapped("not reviewed yet", style.Muted, false))
		}
		if st := run.Report.Stage; st != nil {
			text, c := st.Mechanism+" · "+st.State, style.Muted
			switch st.State {
			case report.StagePending:
				text += ": nothing is in the workspace yet; open the run to apply or discard it"
				c = theme.ColorNameWarning
			case report.StageApplied, report.StagePartiallyApplied:
				c = style.PassColor
			}
			addRow("Stage", wrapped(text, c, st.State == report.StagePending))
		}
	}
	lines = append(lines, container.New(layout.NewCustomPaddedLayout(0, 0, theme.Padding()*2, 0), form))
	t.detail.Objects = []fyne.CanvasObject{container.NewVScroll(container.NewVBox(lines...))}
	t.detail.Refresh()
}

// countSeg is "+3 added" in the kind's color, or "0 added" muted.
func countSeg(n int, sign, what string, c fyne.ThemeColorName) widget.RichTextSegment {
	text := fmt.Sprintf("%s%d%s", sign, n, what)
	if n == 0 {
		text, c = "0"+what, style.Muted
	}
	return &widget.TextSegment{Text: text, Style: widget.RichTextStyle{Inline: true, ColorName: c}}
}

func wrapped(s string, c fyne.ThemeColorName, bold bool) *widget.RichText {
	r := widget.NewRichText(&widget.TextSegment{Text: s, Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Bold: bold}}})
	r.Wrapping = fyne.TextWrapWord
	return r
}

// versionsWorkspace is the workspace whose allowlists are shown: the
// filter's, else the selected run's, else the most recent run's.
func (t *historyTab) versionsWorkspace() string {
	if t.wsFilter != "" {
		return t.wsFilter
	}
	if i := t.indexOf(t.selected); i >= 0 {
		return t.rows[i].Workspace
	}
	if len(t.all) > 0 {
		return t.all[0].Workspace
	}
	return ""
}

// showVersions lists the workspace's approved allowlist versions, newest
// first, each with what it added (+, green) and removed (−, red) compared
// with the version before.
func (t *historyTab) showVersions() {
	ws := t.versionsWorkspace()
	t.versions.Objects = nil
	defer t.versions.Refresh()
	if ws == "" || t.u.hist == nil {
		t.versionsWS.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: "Select a run or a workspace.",
			Style: widget.RichTextStyle{ColorName: style.Muted}}}
		t.versionsWS.Refresh()
		return
	}
	t.versionsWS.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: ws,
		Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText, TextStyle: fyne.TextStyle{Monospace: true}}}}
	t.versionsWS.Refresh()
	list, err := t.u.hist.Allowlists(ws)
	if err != nil {
		t.versions.Add(wrapped("Cannot read the allowlists: "+oneLine(err), style.FailColor, false))
		return
	}
	if len(list) == 0 {
		t.versions.Add(wrapped("No allowlist approved for this workspace yet. Approve one from the Review tab.", style.Muted, false))
		return
	}
	for i := len(list) - 1; i >= 0; i-- {
		var prev *history.Allowlist
		if i > 0 {
			prev = &list[i-1]
		}
		t.versions.Add(versionCard(prev, &list[i], i == len(list)-1))
	}
}

// versionCard shows one allowlist version and its change from prev.
func versionCard(prev, cur *history.Allowlist, latest bool) fyne.CanvasObject {
	added, removed := history.DiffAllowlists(prev, cur)
	segs := []widget.RichTextSegment{
		&widget.TextSegment{Text: fmt.Sprintf("Version %d", cur.Version), Style: widget.RichTextStyle{Inline: true, TextStyle: fyne.TextStyle{Bold: true}}},
		&widget.TextSegment{Text: "   " + cur.CreatedAt.Local().Format("2006-01-02 15:04") + "   " + plural(len(cur.Entries), "entry", "entries"),
			Style: widget.RichTextStyle{Inline: true, ColorName: style.Muted}},
	}
	if latest {
		segs = append(segs, &widget.TextSegment{Text: "   latest", Style: widget.RichTextStyle{Inline: true, ColorName: style.PassColor, TextStyle: fyne.TextStyle{Bold: true}}})
	}
	objs := []fyne.CanvasObject{widget.NewRichText(segs...)}
	if cur.Note != "" {
		objs = append(objs, wrapped("“"+cur.Note+"”", style.Muted, false))
	}
	mono := func(s string, c fyne.ThemeColorName) fyne.CanvasObject {
		r := widget.NewRichText(&widget.TextSegment{Text: s, Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Monospace: true}}})
		r.Wrapping = fyne.TextWrapBreak
		return r
	}
	for _, e := range added {
		objs = append(objs, mono("+ "+e, style.Added))
	}
	for _, e := range removed {
		objs = append(objs, mono("− "+e, style.Removed))
	}
	if len(added) == 0 && len(removed) == 0 {
		objs = append(objs, wrapped("Same entries as version "+fmt.Sprint(prevVersion(prev)), style.Muted, false))
	}
	return container.NewPadded(callout(container.New(&tightVBox{}, objs...), theme.ColorNameSeparator))
}

func prevVersion(a *history.Allowlist) int {
	if a == nil {
		return 0
	}
	return a.Version
}

// tightVBox stacks objects vertically without padding (rich text already
// pads itself).
type tightVBox struct{}

func (tightVBox) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	y := float32(0)
	for _, o := range objs {
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(s.Width, h))
		y += h - 2*theme.Padding()
	}
}

func (tightVBox) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var w, h float32
	for _, o := range objs {
		m := o.MinSize()
		w = max(w, m.Width)
		h += m.Height - 2*theme.Padding()
	}
	return fyne.NewSize(w, h+2*theme.Padding())
}

func verdictWord(v string) string {
	if v == report.Pass {
		return "PASS"
	}
	return "FAIL"
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
		l.List.TypedKey(ev)
	}
}

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

func (r *historyRow) set(i int, s *history.Summary) {
	r.i, r.id = i, s.ID
	th := r.t.list.Theme()
	col := func(n fyne.ThemeColorName) color.Color { return style.Color(th, n) }
	fg, muted := col(theme.ColorNameForeground), col(style.Muted)
	size := th.Size(theme.SizeNameText)
	put := func(c column, text string, clr color.Color, bold bool) {
		tx := r.cell[c]
		tx.Text, tx.Color, tx.TextStyle.Bold, tx.TextSize = text, clr, bold, size
		tx.Refresh()
	}
	put(colID, fmt.Sprint(s.ID), muted, false)
	put(colDate, s.StartedAt.Local().Format("2006-01-02 15:04"), fg, false)
	r.ws.set(homeRel(s.Workspace), fg, size)
	put(colScript, filepath.Base(s.Script), fg, false)

	vc := col(style.VerdictColor(s.Verdict))
	put(colVerdict, verdictWord(s.Verdict), vc, true)
	r.cell[colVerdict].TextSize = th.Size(theme.SizeNameCaptionText)
	r.pill.FillColor = style.Tint(vc, 0x26)
	r.pill.StrokeColor = style.Tint(vc, 0x80)
	r.pill.StrokeWidth = 1
	r.pill.Refresh()

	count := func(c column, n int, sign string, name fyne.ThemeColorName) {
		if n == 0 {
			put(c, "0", muted, false)
			return
		}
		put(c, sign+fmt.Sprint(n), col(name), false)
	}
	count(colAdded, s.Added, "+", style.Added)
	count(colRemoved, s.Removed, "−", style.Removed)
	count(colChanged, s.Changed, "~", style.Changed)
	if s.Violations > 0 {
		put(colViolations, fmt.Sprint(s.Violations), col(style.FailColor), true)
	} else {
		put(colViolations, "0", muted, false)
	}
	switch s.Decision {
	case history.Approve:
		put(colDecision, "Approved", col(style.PassColor), false)
		r.dec.SetResource(style.Colored(theme.ConfirmIcon(), style.PassColor))
	case history.Reject:
		put(colDecision, "Rejected", col(style.FailColor), false)
		r.dec.SetResource(style.Colored(theme.CancelIcon(), style.FailColor))
	case "":
		if s.Stage == report.StagePending { // staged: nothing applied yet
			put(colDecision, "To apply", col(theme.ColorNameWarning), false)
			r.dec.SetResource(style.Colored(theme.DownloadIcon(), theme.ColorNameWarning))
			break
		}
		fallthrough
	default:
		put(colDecision, "Not reviewed", muted, false)
		r.dec.SetResource(style.Colored(theme.RadioButtonIcon(), style.Muted))
	}
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
