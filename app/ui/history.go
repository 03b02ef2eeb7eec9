//go:build !js

package ui

import (
	"fmt"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/oneline"
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
	// Generations of the queries under way (see background): the runs,
	// the workspaces, the selected run's detail and its allowlists;
	// pending counts the queries not answered yet.
	runsN, workspacesN, detailN, versionsN, pending int
	// detailRun is the last run read for the detail card (reused while the
	// same run stays selected across reloads, so the card does not flicker).
	detailRun *history.Run
	// versionsFor is the workspace whose allowlist versions are shown.
	versionsFor string

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
	// empty stands in for the rows when there are none: emptyText, and
	// clearBtn when a filter hides every run.
	empty     *fyne.Container
	emptyText *widget.RichText
	clearBtn  *widget.Button
}

func newHistoryTab(u *UI) *historyTab {
	t := &historyTab{u: u, sortCol: colDate, sortDesc: true}
	t.makeFilters()
	t.status = widget.NewRichText()
	t.list = newHistoryList(t)
	t.openBtn = widget.NewButtonWithIcon("Open in Review", theme.VisibilityIcon(), func() {
		if t.selected > 0 {
			t.open(t.selected)
		}
	})
	t.openBtn.Importance = widget.HighImportance
	t.openBtn.Disable()

	split := container.NewVSplit(framed(t.tablePane()), t.bottomPane())
	split.Offset = 0.45 // the selected run's card needs ~10 lines (at 1024×700 it had 150 px)
	t.body = container.NewStack(split)
	t.root = container.NewBorder(t.topBar(), nil, nil, nil, t.body)
	t.refresh()
	return t
}

// makeFilters makes the workspace and verdict filters; a change reloads
// the runs.
func (t *historyTab) makeFilters() {
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
}

// topBar is the tab's title, status and Refresh button above the filters.
func (t *historyTab) topBar() fyne.CanvasObject {
	refresh := widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), t.refresh)
	refresh.Importance = widget.LowImportance
	if t.u.hist == nil {
		refresh.Hide()
	}
	title := widget.NewRichText(&widget.TextSegment{Text: "Run history",
		Style: widget.RichTextStyle{SizeName: theme.SizeNameSubHeadingText, TextStyle: fyne.TextStyle{Bold: true}}})
	filters := container.NewBorder(nil, nil,
		container.NewHBox(widget.NewLabelWithStyle("Workspace", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})),
		container.NewHBox(widget.NewSeparator(),
			widget.NewLabelWithStyle("Verdict", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), t.verdict),
		t.wsSelect)
	return container.NewVBox(
		container.NewBorder(nil, nil, nil, container.NewHBox(container.NewCenter(t.status), refresh), title),
		filters)
}

// tablePane is the column headers (a click sorts) above the runs, or the
// note that stands in for them when there are none.
func (t *historyTab) tablePane() fyne.CanvasObject {
	var heads []fyne.CanvasObject
	for c := range numColumns {
		t.headers[c] = newHeaderCell(columns[c].title, columns[c].align, func() { t.sortBy(c) })
		heads = append(heads, t.headers[c])
	}
	headerBG := canvas.NewRectangle(theme.Color(theme.ColorNameHeaderBackground))
	header := container.NewStack(headerBG, container.New(&columnsLayout{}, heads...))

	// An empty table says so where the rows would be, at the size of a
	// row's text, with a way back to every run.
	t.emptyText = widget.NewRichText()
	t.emptyText.Wrapping = fyne.TextWrapWord
	t.clearBtn = widget.NewButtonWithIcon("Show every run", theme.ContentClearIcon(), func() {
		t.verdict.SetSelected(verdictAll)
		t.wsSelect.SetSelected(allWorkspaces)
	})
	t.empty = container.NewCenter(container.NewVBox(t.emptyText, container.NewCenter(t.clearBtn)))
	t.empty.Hide()
	return container.NewBorder(header, nil, nil, nil, container.NewStack(t.list, t.empty))
}

// bottomPane is the selected run's card beside the workspace's approved
// allowlist versions.
func (t *historyTab) bottomPane() fyne.CanvasObject {
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
	return bottom
}

// background runs q off the UI goroutine, then done with its result on the
// UI goroutine, unless another query counted by the same generation *gen
// started since: a slow query never overwrites a newer result.
func background[T any](t *historyTab, gen *int, q func() (T, error), done func(T, error)) {
	*gen++
	mine := *gen
	t.pending++
	go func() {
		v, err := q()
		t.u.do(func() {
			t.pending--
			if mine == *gen && !t.u.closed {
				done(v, err)
			}
		})
	}()
}

// idle reports whether no query of the tab is under way.
func (t *historyTab) idle() bool { return t.pending == 0 }

// refresh reloads what the tab shows after the history changed (a run
// recorded, a decision, an apply) or when the tab is shown: the workspace
// picker's choices and the runs the filters select.
func (t *historyTab) refresh() {
	t.loadWorkspaces()
	t.reload()
}

// loadWorkspaces fills the workspace picker with the workspaces that have
// runs (one SQL query; not on a filter change, which cannot add one).
func (t *historyTab) loadWorkspaces() {
	h := t.u.hist
	if h == nil {
		return
	}
	background(t, &t.workspacesN, h.Workspaces, func(ws []string, err error) {
		if err != nil {
			t.setStatus("Cannot read the history: "+oneline.Flat(err.Error()), style.FailColor)
			return
		}
		t.workspaces = ws
		t.wsSelect.SetOptions(append([]string{allWorkspaces}, ws...))
		sel := allWorkspaces
		if t.wsFilter != "" {
			sel = t.wsFilter
		}
		if t.wsSelect.Selected != sel {
			t.wsSelect.Selected = sel
			t.wsSelect.Refresh()
		}
	})
}

// runList is what reload reads: the runs a filter selects and their count.
type runList struct {
	runs  []history.Summary
	total int
}

// reload reads the runs the filters select off the UI goroutine and shows
// them, keeping the selection when it is still listed.
func (t *historyTab) reload() {
	h := t.u.hist
	if h == nil {
		t.showUnavailable()
		return
	}
	f := history.Filter{Workspace: t.wsFilter, Verdict: t.verdictFilter, Limit: historyLimit}
	background(t, &t.runsN, func() (runList, error) {
		runs, err := h.List(f)
		if err != nil {
			return runList{}, err
		}
		n, err := h.Count(f)
		return runList{runs, n}, err
	}, func(l runList, err error) {
		if err != nil {
			t.setStatus("Cannot read the history: "+oneline.Flat(err.Error()), style.FailColor)
			return
		}
		t.showRuns(l.runs, l.total)
	})
}

// showUnavailable says in the tab why there is no history.
func (t *historyTab) showUnavailable() {
	t.all, t.rows, t.total = nil, nil, 0
	t.setStatus("", style.Muted)
	msg := widget.NewRichText(
		&widget.TextSegment{Text: "The history is unavailable", Style: widget.RichTextStyle{
			SizeName: theme.SizeNameSubHeadingText, TextStyle: fyne.TextStyle{Bold: true}, Alignment: fyne.TextAlignCenter}},
		&widget.TextSegment{Text: oneline.Flat(t.u.histErr.Error()), Style: widget.RichTextStyle{
			ColorName: theme.ColorNameWarning, Alignment: fyne.TextAlignCenter}},
		&widget.TextSegment{Text: "Runs still work, but are not recorded. Fix or move the file (or set " + history.EnvDB + ") and restart.",
			Style: widget.RichTextStyle{ColorName: style.Muted, Alignment: fyne.TextAlignCenter}})
	msg.Wrapping = fyne.TextWrapWord
	t.body.Objects = []fyne.CanvasObject{container.NewCenter(container.NewGridWrap(fyne.NewSize(720, 160), msg))}
	t.body.Refresh()
	t.wsSelect.Disable()
	t.verdict.Disable()
}

// showRuns shows runs (total: how many the filter selects), following the
// newest run when it was the one selected (or none was).
func (t *historyTab) showRuns(runs []history.Summary, total int) {
	t.total = total
	if t.selected == 0 || len(t.all) > 0 && t.selected == newestID(t.all) {
		t.selected = newestID(runs)
	}
	t.all = runs
	t.sortRows()
	t.showEmpty("")
	switch {
	case t.total == 0 && t.wsFilter == "" && t.verdictFilter == "":
		t.setStatus("No runs yet", style.Muted)
		t.showEmpty("No runs yet. Runs from the Run tab (and diffgate run) are recorded here.")
	case t.total == 0:
		t.setStatus("No run matches the filter", style.Muted)
		t.showEmpty("No run matches the filter.")
	case t.total > len(runs):
		t.setStatus(fmt.Sprintf("The %s most recent of %s runs", count.Digits(len(runs)), count.Digits(t.total)), style.Muted)
	default:
		t.setStatus(count.Of(t.total, "run"), style.Muted)
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

// showEmpty shows text in place of the table's rows ("" hides it); Show
// every run only when a filter is on.
func (t *historyTab) showEmpty(text string) {
	if text == "" {
		t.empty.Hide()
		return
	}
	t.emptyText.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{Alignment: fyne.TextAlignCenter, TextStyle: fyne.TextStyle{Bold: true}}}}
	t.emptyText.Refresh()
	t.clearBtn.Hidden = t.wsFilter == "" && t.verdictFilter == ""
	t.empty.Show()
	t.empty.Refresh()
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
	id, h := s.ID, t.u.hist
	background(t, &t.detailN, func() (*history.Run, error) { return h.Get(id) }, func(run *history.Run, err error) {
		if err != nil {
			t.u.log.Warn().Err(err).Int64("run", id).Msg("read run")
			return
		}
		if t.selected == id {
			t.detailRun = run
			if k := t.indexOf(id); k >= 0 {
				t.showDetail(&t.rows[k], run)
			}
		}
	})
}

// open shows run id in the Review tab.
func (t *historyTab) open(id int64) {
	t.u.openRun(id, func(err error) {
		t.setStatus("Cannot open run "+fmt.Sprint(id)+": "+oneline.Flat(err.Error()), style.FailColor)
	})
}
