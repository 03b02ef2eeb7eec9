// Package review is the review view of a gated run: the verdict banner, the
// changes as a tree or flat list with counters that filter, the detail of the
// selected change with its diff, and the draft allowlist that re-evaluates
// the verdict as the reviewer allows changes.
//
// It only depends on Fyne widgets and the core models, so the desktop app and
// the web build (GOOS=js) share it. Anything native (file dialogs, history,
// running scripts) is reached through the callbacks in Options.
package review

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
)

// treeLimit is the number of changes above which the view starts in the flat
// list rather than the tree.
const treeLimit = 50000

// Options connect the view to its host. Every callback may be nil, which
// hides the matching control.
type Options struct {
	// ReadOnly hides the Allow button and the allowlist editor.
	ReadOnly bool
	// OnApprove saves the draft allowlist with a note (the history seam).
	OnApprove func(r *report.Report, allowlist []string, note string) error
	// OnReject records that the reviewer rejected the run.
	OnReject func(r *report.Report, note string) error
	// Export writes the report in a format (through a save dialog on the
	// desktop, a download in the browser).
	Export func(r *report.Report, f Format)
	// OpenFolder opens the folder holding a saved export (SetExported) in
	// the system's file manager; nil hides Open folder.
	OpenFolder func(path string)
	// OnDraftChanged is called after the draft allowlist changed and the
	// verdict was re-evaluated.
	OnDraftChanged func(entries []string)
	// OnApply applies the chosen changes of a staged run (SetStage) into
	// the workspace, off the UI thread, and then calls done on the UI
	// thread with the stage's new state or the error (a *ConflictError:
	// nothing was applied). OnDiscard drops the stage the same way. The
	// browser has no staging: nil hides the Apply and Discard controls.
	// done's state is report.StageApplied, StagePartiallyApplied or
	// StageDiscarded.
	OnApply   func(r *report.Report, req ApplyRequest, done func(state string, err error))
	OnDiscard func(r *report.Report, done func(state string, err error))
	// LoadContents, when set, offers Load full diff for a change whose
	// text diff the run cut short or did not compute (a large file, a
	// before-content not kept): the diff is computed in the background
	// from the contents it returns. The browser has only the report: nil.
	LoadContents ContentLoader
	// Do runs a function on the UI goroutine, for work done in the
	// background (Load full diff); nil means fyne.Do.
	Do func(func())
	// OnViewed is called after the reviewer marked the changes at paths
	// viewed (or not viewed), so the host can keep the marks with the
	// review (SetViewed restores them). Nil keeps them for the session.
	OnViewed func(r *report.Report, paths []string, viewed bool)
	// BannerAction, when set, may return a control the banner shows under
	// a failed run's hints (the app's "Rerun with these grants"); nil
	// shows none.
	BannerAction func(r *report.Report) fyne.CanvasObject
}

// View is the review view. Create it with New; it is a fyne.Widget.
type View struct {
	widget.BaseWidget

	opts     Options
	r        *report.Report
	run      *report.Report // the run as it came, for exports
	decided  string         // report.Approved or report.Rejected once decided
	original []string
	m        *model
	filter   Filter
	tree     bool
	sel      int    // the selected change, -1 for none
	selID    string // the selected row's node (a path), "" for none
	rows     []row
	// open holds the folders the reviewer (or navigation) opened or
	// closed; the others are open or closed by default (defaultOpen).
	open    map[string]bool
	viewed  []bool // by change index: marked viewed by the reviewer
	nViewed int

	banner                                   *Banner
	added, removed, changed, violations, all *Chip
	blockedChip, outsideChip                 *Chip // shown when the report has any
	riskyChip                                *Chip // on: only risky changes; shown when the report has any
	search                                   *keys.Entry
	treeBtn, listBtn                         *widget.Button
	shown                                    *widget.RichText
	reviewed                                 *widget.RichText
	violFirst                                *widget.Check
	hiddenBar                                *fyne.Container
	hiddenText                               *widget.RichText
	clearBtn                                 *widget.Button
	changesPane                              *fyne.Container
	// mainSplit (changes | the rest) and innerSplit (detail | sidebar)
	// give the detail more room for a side by side diff.
	mainSplit, innerSplit           *container.Split
	list                            *changeList
	changes                         *fyne.Container
	empty                           *widget.RichText
	detail                          *detail
	editor                          *AllowlistEditor
	note                            *keys.Entry
	approveBtn, rejectBtn, resetBtn *widget.Button
	suggestBtn                      *widget.Button
	decision                        *widget.RichText
	exportBtns                      map[Format]*widget.Button
	exported                        *exported
	confirm                         dialog.Dialog  // the approval question while it is asked
	suggest                         *suggestDialog // the Suggest allowlist dialog while it is shown
	root                            fyne.CanvasObject
	decisionSeq                     int // counts SetDecision calls
	stage                           *stagePane
}

// New returns a view of r (which may be nil: SetReport later).
func New(r *report.Report, opts Options) *View {
	v := &View{opts: opts, filter: defaultFilter(), sel: -1, tree: true}
	v.ExtendBaseWidget(v)
	v.build()
	v.SetReport(r)
	return v
}

// CreateRenderer implements fyne.Widget.
func (v *View) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.root) }

func (v *View) build() {
	v.m = newModel(&report.Report{})
	v.banner = newBanner(nil)
	v.banner.Action = v.opts.BannerAction

	toggle := func(set func(bool)) func(bool) {
		return func(on bool) { set(on); v.refilter() }
	}
	v.added = newChip("Added", style.Added, toggle(func(b bool) { v.filter.Added = b }))
	v.removed = newChip("Removed", style.Removed, toggle(func(b bool) { v.filter.Removed = b }))
	v.changed = newChip("Changed", style.Changed, toggle(func(b bool) { v.filter.Changed = b }))
	v.violations = newChip("Violations", style.FailColor, toggle(func(b bool) { v.filter.Violations = b }))
	v.all = newChip("Allowed", style.Allowed, toggle(func(b bool) { v.filter.Allowed = b }))
	v.blockedChip = newChip("Blocked", style.Blocked, toggle(func(b bool) { v.filter.Blocked = b }))
	v.outsideChip = newChip("Outside", style.Outside, toggle(func(b bool) { v.filter.Outside = b }))
	v.riskyChip = newChip("Risky", style.Risk, toggle(func(b bool) { v.filter.riskyOnly = b }))
	v.riskyChip.On = false
	for _, c := range []*Chip{v.added, v.removed, v.changed, v.violations, v.all, v.blockedChip, v.outsideChip, v.riskyChip} {
		c.OnRune = func(r rune) { v.TypedRune(r) }
	}
	v.blockedChip.Hide() // until a report has blocked actions
	v.riskyChip.Hide()
	v.outsideChip.Hide()

	v.search = keys.NewEntry()
	v.search.OnEscape = v.focusChanges
	v.search.SetPlaceHolder("Filter paths…")
	v.search.ActionItem = widget.NewIcon(theme.SearchIcon())
	v.search.OnChanged = func(s string) { v.filter.Text = s; v.refilter() }

	v.treeBtn = widget.NewButtonWithIcon("Tree", theme.FolderIcon(), func() { v.setTreeMode(true) })
	v.listBtn = widget.NewButtonWithIcon("List", theme.ListIcon(), func() { v.setTreeMode(false) })
	v.shown = widget.NewRichText()
	v.shown.Wrapping = fyne.TextWrapWord
	v.reviewed = widget.NewRichText()
	v.violFirst = widget.NewCheck("Violations first", func(on bool) {
		v.m.violationsFirst = on
		v.refilter()
	})
	v.violFirst.Checked = true
	v.hiddenText = widget.NewRichText()
	v.clearBtn = widget.NewButtonWithIcon("Clear", theme.ContentClearIcon(), func() { v.SetFilter(defaultFilter()) })
	v.clearBtn.Importance = widget.LowImportance
	v.hiddenBar = container.NewBorder(nil, nil, nil, v.clearBtn, v.hiddenText)
	v.hiddenBar.Hide()

	v.list = newChangeList(v)
	v.empty = widget.NewRichText()
	v.changes = container.NewStack()

	v.detail = newDetail(v)

	v.editor = NewAllowlistEditor()
	v.editor.setOnEscape(v.focusChanges)
	v.editor.OnChanged = func(entries []string, problems []Problem) { v.applyDraft(entries) }
	v.note = keys.NewMultiLineEntry()
	v.note.OnEscape = v.focusChanges
	v.note.SetPlaceHolder("Note for the record (why these changes are fine)")
	v.note.SetMinRowsVisible(1) // it scrolls; the window must fit 1024×700
	v.note.Wrapping = fyne.TextWrapWord
	v.approveBtn = widget.NewButtonWithIcon("Approve allowlist", theme.ConfirmIcon(), v.approve)
	v.approveBtn.Importance = widget.SuccessImportance
	v.rejectBtn = widget.NewButtonWithIcon("Reject", theme.CancelIcon(), v.reject)
	v.rejectBtn.Importance = widget.DangerImportance
	v.resetBtn = widget.NewButtonWithIcon("Reset", theme.ContentUndoIcon(), func() { // to the run's allowlist
		v.editor.SetEntries(v.original)
	})
	v.resetBtn.Importance = widget.LowImportance
	v.suggestBtn = widget.NewButtonWithIcon("Suggest allowlist", theme.ContentAddIcon(), func() { v.suggestAllowlist() })
	v.decision = widget.NewRichText()
	v.decision.Wrapping = fyne.TextWrapWord
	v.decision.Hide() // until there is a decision to show (saves a row)
	v.stage = newStagePane(v)

	v.exported = newExported(v.opts.OpenFolder)
	v.exportBtns = map[Format]*widget.Button{}
	var exports []fyne.CanvasObject
	for _, f := range formats {
		f := f
		b := widget.NewButtonWithIcon(f.Label(), theme.DocumentSaveIcon(), func() {
			if v.opts.Export != nil && v.r != nil {
				v.opts.Export(v.exportReport(), f)
			}
		})
		if !f.available() {
			b.Disable()
		}
		v.exportBtns[f] = b
		exports = append(exports, b)
	}

	// Layout.
	chips := container.NewHBox(v.added, v.removed, v.changed, widget.NewSeparator(), v.violations, v.all, v.riskyChip, v.blockedChip, v.outsideChip)
	modeBtns := container.NewHBox(v.treeBtn, v.listBtn)
	toolbar := container.NewBorder(nil, nil, chips, modeBtns, v.search)
	listHead := container.NewVBox(container.NewBorder(nil, nil, v.reviewed, v.violFirst), v.hiddenBar)
	changesPane := container.NewBorder(listHead, v.shown, nil, nil, v.changes)
	v.changesPane = changesPane

	sideTitle := styledText("Allowlist", "", theme.SizeNameSubHeadingText, fyne.TextStyle{Bold: true})
	sideHint := widget.NewRichText(&widget.TextSegment{Text: "One entry per line; an edit re-evaluates, nothing reruns.",
		Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText}})
	sideHint.Wrapping = fyne.TextWrapWord
	decide := container.NewGridWithColumns(2, v.approveBtn, v.rejectBtn)
	exportTitle := styledText("Export report", style.Muted, theme.SizeNameCaptionText, fyne.TextStyle{Bold: true})
	var sideBottom *fyne.Container
	if v.opts.ReadOnly {
		sideBottom = container.NewVBox()
	} else {
		// Reset (to the run's allowlist) shares Suggest's row: the
		// window must fit 1024×700.
		sideBottom = container.NewVBox(container.NewBorder(nil, nil, nil, v.resetBtn, v.suggestBtn))
		if v.opts.OnApprove != nil || v.opts.OnReject != nil {
			sideBottom.Add(v.note)
			sideBottom.Add(decide)
			if v.opts.OnApprove == nil {
				v.approveBtn.Hide()
			}
			if v.opts.OnReject == nil {
				v.rejectBtn.Hide()
			}
		}
		sideBottom.Add(style.Tight(v.decision))
	}
	if v.opts.Export != nil {
		sideBottom.Add(widget.NewSeparator())
		sideBottom.Add(style.Tight(exportTitle))
		sideBottom.Add(container.NewGridWithColumns(3, exports...))
		sideBottom.Add(v.exported.root)
	}
	var sideCenter fyne.CanvasObject = v.editor
	if v.opts.ReadOnly {
		sideCenter = layout.NewSpacer()
		v.editor.Disable()
	}
	sidebar := container.NewBorder(container.NewVBox(style.Tight(sideTitle), style.Tight(sideHint)), sideBottom, nil, nil, sideCenter)

	inner := container.NewHSplit(container.NewPadded(v.detail.root), container.NewPadded(sidebar))
	inner.Offset = 0.68
	main := container.NewHSplit(changesPane, inner)
	main.Offset = 0.32
	v.mainSplit, v.innerSplit = main, inner
	top := container.NewVBox(v.banner, v.stage.root, toolbar)
	v.root = container.NewBorder(top, nil, nil, nil, main)
}

// SetReport shows r. The view edits r in place as the reviewer allows changes.
func (v *View) SetReport(r *report.Report) {
	if v.confirm != nil { // a question about the previous report
		v.confirm.Hide()
	}
	if v.suggest != nil {
		v.suggest.d.Hide()
	}
	v.r = r
	v.sel = -1
	if r == nil {
		r = &report.Report{Verdict: report.Pass}
		v.r = nil
	}
	v.original = append([]string(nil), r.Allowlist...)
	v.run, v.decided = r.Clone(), ""
	v.m = newModel(r)
	v.m.violationsFirst = v.violFirst.Checked
	v.tree = len(r.Changes) <= treeLimit
	v.selID, v.open = "", map[string]bool{}
	v.viewed, v.nViewed = make([]bool, len(r.Changes)), 0
	v.banner.SetReport(v.r)
	v.editor.OnChanged = nil
	v.editor.SetEntries(r.Allowlist)
	v.editor.OnChanged = func(entries []string, problems []Problem) { v.applyDraft(entries) }
	v.decision.Segments = nil
	v.decision.Hide()
	v.stage.runAllow = append([]string(nil), r.Allowlist...)
	v.stage.scope.SetSelectedIndex(int(v.stage.defaultScope()))
	v.stage.reset()
	v.exported.clear()
	v.note.SetText("")
	v.detail.bar.reset() // a full diff loaded for the previous report
	v.detail.clear()
	v.list.quiet = true
	v.list.UnselectAll()
	v.list.quiet = false
	v.list.ScrollToOffset(0)
	// A new report starts with every change shown.
	v.setFilter(defaultFilter())
	v.refilter()
	v.updateButtons()
}

// Report returns the report shown (with the draft allowlist applied).
func (v *View) Report() *report.Report { return v.r }

// exportReport returns what the export buttons write: the run's report as
// it came (its own allowlist and verdict), the reviewer's draft allowlist,
// decision, note and re-evaluated verdict in its Review. Nil without a
// report.
func (v *View) exportReport() *report.Report {
	if v.r == nil {
		return nil
	}
	x, err := v.run.WithReview(v.editor.Entries(), v.decided, strings.TrimSpace(v.note.Text))
	if err != nil { // the editor keeps only valid entries; cannot happen
		return v.run.Clone()
	}
	return x
}

// Draft returns the valid entries of the draft allowlist.
func (v *View) Draft() []string { return v.editor.Entries() }

// Editor is the draft allowlist editor.
func (v *View) Editor() *AllowlistEditor { return v.editor }

// Banner is the verdict banner.
func (v *View) Banner() *Banner { return v.banner }

// Filter returns the current filter.
func (v *View) Filter() Filter { return v.filter }

// SetFilter replaces the filter (and updates the counters and search entry).
func (v *View) SetFilter(f Filter) {
	v.setFilter(f)
	v.refilter()
}

// setFilter sets the filter and the controls that show it, without
// refiltering.
func (v *View) setFilter(f Filter) {
	v.filter = f
	v.added.setOn(f.Added)
	v.removed.setOn(f.Removed)
	v.changed.setOn(f.Changed)
	v.violations.setOn(f.Violations)
	v.all.setOn(f.Allowed)
	v.blockedChip.setOn(f.Blocked)
	v.outsideChip.setOn(f.Outside)
	v.riskyChip.setOn(f.riskyOnly)
	if v.search.Text != f.Text {
		v.search.OnChanged = nil
		v.search.SetText(f.Text)
		v.search.OnChanged = func(s string) { v.filter.Text = s; v.refilter() }
	}
}

// setTreeMode switches between the folder tree and the flat list.
func (v *View) setTreeMode(tree bool) {
	if v.tree == tree && len(v.changes.Objects) > 0 {
		return
	}
	v.tree = tree
	v.refilter()
	if v.sel >= 0 {
		v.Select(v.sel)
	}
}

// Selected returns the index of the selected change, -1 when none.
func (v *View) Selected() int { return v.sel }

// Select selects change i (an index into Report().Changes) in the list or
// tree, opening the folders on its way, and shows it. A change the filter
// hides is shown in the detail only.
func (v *View) Select(i int) {
	if v.r == nil || i < 0 || i >= len(v.r.Changes) {
		return
	}
	i = v.m.rowOf(i) // a rename's removed path: its row
	id := v.r.Changes[i].Path
	if v.m.shown(i) {
		if v.tree && v.openTo(id) {
			v.rebuildRows()
		}
		v.selectRow(v.rowOf(id))
	} else {
		v.list.quiet = true
		v.list.UnselectAll()
		v.list.quiet = false
	}
	v.selID = id
	v.showChange(i)
}

func (v *View) showChange(i int) {
	v.sel = i
	v.detail.show(i)
}

func (v *View) showFolder(id string) {
	v.sel = -1
	v.detail.showFolder(id)
}

// showRow shows row k of the list in the detail.
func (v *View) showRow(k int) {
	id := v.rows[k].id
	v.selID = id
	if isFinding(id) {
		v.showFinding(id)
		return
	}
	if n := v.m.nodes[id]; v.tree && n != nil && n.change < 0 {
		v.showFolder(id)
		return
	}
	if i := v.indexOf(id); i >= 0 {
		v.showChange(i)
	}
}

// selectRow selects row k (scrolling to it) without showing it.
func (v *View) selectRow(k int) {
	if k < 0 || k >= len(v.rows) {
		return
	}
	v.list.quiet = true
	v.list.Select(k)
	v.list.quiet = false
}

// indexOf is the index of the change at path id, -1 for a pure folder.
func (v *View) indexOf(id string) int {
	if i, ok := v.m.index[id]; ok {
		return i
	}
	return -1
}

// rowOf is the row showing node id, -1 when none does.
func (v *View) rowOf(id string) int {
	for k := range v.rows {
		if v.rows[k].id == id {
			return k
		}
	}
	return -1
}

// isOpen reports whether folder id of the tree is open.
func (v *View) isOpen(id string, n *node) bool {
	if o, ok := v.open[id]; ok {
		return o
	}
	if n == nil { // a findings group: open
		return isGroup(id)
	}
	return v.defaultOpen(id, n)
}

// isBranch reports whether row id opens and closes in the tree: a folder
// or a findings group.
func (v *View) isBranch(id string) bool {
	if !v.tree {
		return false
	}
	if isGroup(id) {
		return true
	}
	n := v.m.nodes[id]
	return n != nil && n.folder()
}

// branchOpen reports whether branch id is open.
func (v *View) branchOpen(id string) bool { return v.isOpen(id, v.m.nodes[id]) }

// defaultOpen says whether a folder starts open: while a text filter is
// on, every folder is; otherwise one that does not roll up (report.RollsUp,
// the reports' rule too).
func (v *View) defaultOpen(id string, n *node) bool {
	return v.filter.Text != "" || !report.RollsUp(id, &n.sum.Tally)
}

// openTo opens the closed folders above id and reports whether there
// were any.
func (v *View) openTo(id string) bool {
	opened := false
	for p := parentOf(id); p != ""; p = parentOf(p) {
		if n := v.m.nodes[p]; n != nil && !v.isOpen(p, n) {
			v.open[p] = true
			opened = true
		}
	}
	return opened
}

// toggleOpen opens or closes folder id.
func (v *View) toggleOpen(id string) {
	if !v.isBranch(id) {
		return
	}
	v.open[id] = !v.branchOpen(id)
	v.rebuildRows()
}

// rebuildRows lays the rows out again (after a folder opened or closed)
// and keeps the selection.
func (v *View) rebuildRows() {
	v.rows = v.m.rows(v.tree, v.isOpen)
	v.list.Refresh()
	v.restoreSelection()
}

// selectedRow is the row of the selection, -1 for none.
func (v *View) selectedRow() int {
	if v.selID == "" {
		return -1
	}
	return v.rowOf(v.selID)
}

// isStop reports whether n and p stop at row k: a violation, or a closed
// folder that holds one (it stands for what it holds).
func (v *View) isStop(k int) bool {
	id := v.rows[k].id
	if isFinding(id) { // each finding is a violation, but a request
		return isViolation(id) && (!isGroup(id) || v.tree && !v.branchOpen(id))
	}
	if v.tree {
		if n := v.m.nodes[id]; n != nil && n.folder() && !v.isOpen(id, n) {
			return n.sum.Violations > 0
		}
	}
	i := v.indexOf(id)
	return i >= 0 && !v.m.allowed(i)
}

// NextViolation selects the next (dir > 0) or previous violation after the
// selection, wrapping around; in the tree a closed folder holding
// violations is one stop. It reports whether there was one.
func (v *View) NextViolation(dir int) bool {
	if v.r == nil {
		return false
	}
	n := len(v.rows)
	if n == 0 {
		return false
	}
	start := v.selectedRow()
	if start < 0 && dir < 0 {
		start = n
	}
	for step := 1; step <= n; step++ {
		if k := ((start+dir*step)%n + n) % n; v.isStop(k) {
			v.goRow(k)
			return true
		}
	}
	return false
}

// goRow selects row k and shows it.
func (v *View) goRow(k int) {
	v.selectRow(k)
	v.showRow(k)
}

// move selects the row dir rows from the selection (the first or last row
// when there is none).
func (v *View) move(dir int) {
	n := len(v.rows)
	if n == 0 {
		return
	}
	k := v.selectedRow()
	switch {
	case k < 0 && dir > 0:
		k = 0
	case k < 0:
		k = n - 1
	default:
		k = max(0, min(n-1, k+dir))
	}
	v.goRow(k)
}

// selectedNode is the selected row of the tree, its node id and node;
// k < 0 when there is none (or the list is flat).
func (v *View) selectedNode() (k int, id string, n *node) {
	if k = v.selectedRow(); !v.tree || k < 0 {
		return -1, "", nil
	}
	id = v.rows[k].id
	return k, id, v.m.nodes[id]
}

// left closes the selected folder, or goes to the folder holding the
// selected row.
func (v *View) left() {
	k, id, _ := v.selectedNode()
	switch {
	case k < 0:
	case v.isBranch(id) && v.branchOpen(id):
		v.toggleOpen(id)
	case isFinding(id):
		if g, _, ok := parseFinding(id); ok {
			v.goRow(v.rowOf(g))
		}
	case v.rowOf(parentOf(id)) >= 0:
		v.goRow(v.rowOf(parentOf(id)))
	}
}

// right opens the selected folder, or goes to its first row when open.
func (v *View) right() {
	k, id, _ := v.selectedNode()
	switch {
	case k < 0 || !v.isBranch(id):
	case !v.branchOpen(id):
		v.toggleOpen(id)
	case k+1 < len(v.rows):
		v.goRow(k + 1)
	}
}

// TypedKey handles the review keys when neither list nor detail has focus
// (the host routes the canvas' unclaimed keys here): up/down move through
// the rows, page up/down by a page, Home and End to the first and last,
// Enter opens the detail (or opens and closes a folder). It reports
// whether it used the key.
func (v *View) TypedKey(ev *fyne.KeyEvent) bool {
	switch ev.Name {
	case fyne.KeyUp:
		v.move(-1)
	case fyne.KeyDown:
		v.move(1)
	case fyne.KeyPageUp:
		v.move(-v.list.pageRows())
	case fyne.KeyPageDown:
		v.move(v.list.pageRows())
	case fyne.KeyHome:
		v.move(-len(v.rows))
	case fyne.KeyEnd:
		v.move(len(v.rows))
	case fyne.KeyReturn, fyne.KeyEnter:
		if k, id, n := v.selectedNode(); k >= 0 && (isGroup(id) || n != nil && n.folder() && n.change < 0) {
			v.toggleOpen(id)
			return true
		}
		v.focusDetail()
	default:
		return false
	}
	return true
}

// viewedKey is the key that marks the selected row viewed (or not).
const viewedKey = 'v'

// TypedRune handles n / p (next / previous violation), / (filter), v (the
// selected row viewed or not) and a (Allow… for the selected change); any
// other character goes to the window's keys ('?': the cheat sheet). It
// reports whether it was used.
func (v *View) TypedRune(r rune) bool {
	switch r {
	case 'n':
		v.NextViolation(1)
	case 'p':
		v.NextViolation(-1)
	case '/':
		v.focus(v.search)
	case viewedKey:
		if v.selID != "" {
			v.toggleViewed(v.selID)
		}
	case 'a':
		return v.openAllow()
	case ']':
		v.detail.diff.nextChange(1)
	case '[':
		v.detail.diff.nextChange(-1)
	default:
		return keys.PassRune(v, r)
	}
	return true
}

// openAllow opens the Allow… menu of the selected change (its suggested
// entries) and reports whether there was one to open.
func (v *View) openAllow() bool {
	d := v.detail
	if d.change < 0 || !d.allowBtn.Visible() || d.allowBtn.Disabled() || len(d.suggest) == 0 {
		return false
	}
	d.showAllowMenu()
	return true
}

// Bindings are the review's keys for the window's cheat sheet; Ctrl+Enter
// (approve) runs from every widget of the window, the host decides when
// it applies (the review is shown).
func (v *View) Bindings() []keys.Binding {
	const g = "Review"
	approve := func() { v.Approve() }
	return []keys.Binding{
		{Group: g, Keys: "Ctrl+Enter", What: "Approve the allowlist (from the note and the allowlist editor too)",
			Shortcut: &desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierShortcutDefault}, Run: approve},
		{Group: g, Shortcut: &desktop.CustomShortcut{KeyName: fyne.KeyEnter, Modifier: fyne.KeyModifierShortcutDefault}, Run: approve},
		{Group: g, Keys: "Up, Down", What: "Previous or next change"},
		{Group: g, Keys: "PgUp, PgDn, Home, End", What: "A page up or down, the first or last change"},
		{Group: g, Keys: "Left, Right", What: "Close or open a folder"},
		{Group: g, Keys: "n, p", What: "Next or previous violation"},
		{Group: g, Keys: "], [", What: "Next or previous change in the diff (scrolls to the changed words of a long line)"},
		{Group: g, Keys: "Enter", What: "Open the diff, or open or close a folder (Escape comes back from the diff)"},
		{Group: g, Keys: "v", What: "Mark the selected change or folder viewed, or not"},
		{Group: g, Keys: "a", What: "Allow… the selected change"},
		{Group: g, Keys: "/", What: "Filter the paths"},
	}
}

func (v *View) focus(f fyne.Focusable) {
	if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil {
		c.Focus(f)
	}
}

// focusDetail moves keyboard focus into the detail: the diff when there is
// one (arrows scroll it, Escape comes back), else the Allow button.
func (v *View) focusDetail() {
	switch {
	case len(v.detail.diff.Lines()) > 0:
		v.focus(v.detail.diff)
	case v.detail.allowBtn.Visible():
		v.focus(v.detail.allowBtn)
	}
}

// FocusChanges gives keyboard focus to the change list or tree.
func (v *View) FocusChanges() { v.focusChanges() }

func (v *View) focusChanges() { v.focus(v.list) }

// Allow appends entry to the draft allowlist and re-evaluates the verdict.
func (v *View) Allow(entry string) {
	v.editor.Append(entry)
}

// applyDraft re-evaluates the report against the valid draft entries.
func (v *View) applyDraft(entries []string) {
	if v.r == nil {
		return
	}
	p, err := policy.Parse(entries)
	if err != nil { // entries were validated one by one; cannot happen
		return
	}
	v.r.Apply(p, entries)
	v.banner.Refresh()
	v.keepOpen()
	v.refilter()
	if v.sel >= 0 {
		v.detail.show(v.sel)
	}
	v.updateButtons()
	if v.opts.OnDraftChanged != nil {
		v.opts.OnDraftChanged(entries)
	}
}

func (v *View) updateButtons() {
	problems := len(v.editor.Problems())
	if v.r == nil || problems > 0 {
		v.approveBtn.Disable()
	} else {
		v.approveBtn.Enable()
	}
	if v.r == nil {
		v.rejectBtn.Disable()
	} else {
		v.rejectBtn.Enable()
	}
	if v.r == nil || v.r.Count().Violations == 0 {
		v.suggestBtn.Disable()
	} else {
		v.suggestBtn.Enable()
	}
	if slices.Equal(v.editor.Entries(), v.original) && problems == 0 {
		v.resetBtn.Hide()
	} else {
		v.resetBtn.Show()
	}
}

// Approve approves the draft allowlist, as the Approve button does (a
// no-op when it is disabled or hidden).
func (v *View) Approve() {
	if v.approveBtn.Disabled() || !v.approveBtn.Visible() {
		return
	}
	v.approve()
}

func (v *View) approve() {
	if v.opts.OnApprove == nil || v.r == nil {
		return
	}
	v.confirmApproval(v.saveApproval)
}

// saveApproval hands the draft to the host and says what was saved.
func (v *View) saveApproval() {
	if v.r == nil {
		return
	}
	entries := v.editor.Entries()
	seq := v.decisionSeq
	if err := v.opts.OnApprove(v.r, entries, strings.TrimSpace(v.note.Text)); err != nil {
		v.setDecision("Could not save: "+err.Error(), style.FailColor)
		return
	}
	v.original = entries
	v.decided = report.Approved
	v.updateButtons()
	if v.decisionSeq == seq { // the host did not say more (SetDecision)
		v.setDecision(fmt.Sprintf("Approved at %s: allowlist with %s saved.", time.Now().Format("15:04"), report.PluralGrouped(len(entries), "entry")), style.PassColor)
	}
}

// reject records the rejection; a run whose stage is pending asks first
// and then discards the stage (a rejected run's changes must not stay one
// click from the workspace).
func (v *View) reject() {
	if v.opts.OnReject == nil || v.r == nil {
		return
	}
	if v.stage.pending() {
		v.stage.ask(rejectTitle, fmt.Sprintf("Rejecting records your decision and removes the %s of this run; the workspace stays as it is.",
			report.PluralGrouped(len(v.r.Changes), "staged change")), "Reject and discard", func() {
			if v.saveRejection() {
				v.stage.discardNow()
			}
		})
		return
	}
	v.saveRejection()
}

// saveRejection hands the rejection to the host and says what was saved.
func (v *View) saveRejection() bool {
	seq := v.decisionSeq
	if err := v.opts.OnReject(v.r, strings.TrimSpace(v.note.Text)); err != nil {
		v.setDecision("Could not save: "+err.Error(), style.FailColor)
		return false
	}
	v.decided = report.Rejected
	if v.decisionSeq == seq {
		v.setDecision("Rejected at "+time.Now().Format("15:04")+".", style.FailColor)
	}
	v.stage.update() // Apply is off once rejected
	return true
}

// SetDecision shows text (in the named color) on the decision line under
// the Approve and Reject buttons: a host uses it to say what an earlier
// review decided when it reopens a run, or, from inside OnApprove or
// OnReject, what exactly was saved (the default message is then skipped).
// SetReport clears it.
func (v *View) SetDecision(text string, c fyne.ThemeColorName) {
	v.decisionSeq++
	v.setDecision(text, c)
}

// SetDecided says what an earlier review decided on the report shown
// (report.Approved, report.Rejected or ""), as a host that reopens a run
// knows it: a rejected run's pending stage is not offered for Apply.
func (v *View) SetDecided(decision string) {
	v.decided = decision
	v.stage.update()
}

func (v *View) setDecision(text string, c fyne.ThemeColorName) {
	v.decision.Show()
	v.decision.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Bold: true}}}}
	v.decision.Refresh()
}

// Decision is the last approve/reject status line shown ("" if none).
func (v *View) Decision() string { return segmentsText(v.decision) }

// refilter recomputes the visible changes and refreshes counters and list.
func (v *View) refilter() {
	r := v.r
	if r == nil {
		r = &report.Report{}
	}
	v.m.apply(v.filter, v.tree, v.viewed)
	n := r.Count()
	v.added.setCount(n.Added)
	v.removed.setCount(n.Removed)
	v.changed.setCount(n.Changed)
	v.violations.setCount(n.Violations)
	v.all.setCount(n.Allowed)
	for _, c := range []struct {
		chip *Chip
		n    int
	}{{v.blockedChip, len(r.Blocked)}, {v.outsideChip, len(r.Outside)}, {v.riskyChip, n.Risky}} {
		c.chip.setCount(c.n)
		if c.chip.Visible() != (c.n > 0) {
			c.chip.Hidden = c.n == 0
			c.chip.Refresh()
		}
	}

	v.treeBtn.Importance, v.listBtn.Importance = widget.LowImportance, widget.LowImportance
	if v.tree {
		v.treeBtn.Importance = widget.HighImportance
	} else {
		v.listBtn.Importance = widget.HighImportance
	}
	v.treeBtn.Refresh()
	v.listBtn.Refresh()
	var w fyne.CanvasObject = v.list
	switch {
	case len(r.Changes) == 0 && len(r.Blocked)+len(r.Outside) == 0:
		v.setEmpty("No changes: the workspace is exactly as it was before the run.")
		w = container.NewCenter(v.empty)
	case len(v.m.visible) == 0 && len(v.m.fd.blocked)+len(v.m.fd.outside) == 0:
		v.setEmpty("No change matches the filter.")
		w = container.NewCenter(v.empty)
	}
	if len(v.changes.Objects) != 1 || v.changes.Objects[0] != w {
		v.changes.Objects = []fyne.CanvasObject{w}
		v.changes.Refresh()
	}
	v.rebuildRows()
	v.syncDetail()

	hidden := v.m.rowCount() - len(v.m.visible)
	var what []string
	if hidden > 0 || v.m.fd.hiddenBlocked+v.m.fd.hiddenOutside == 0 {
		what = append(what, report.PluralGrouped(hidden, "change"))
	}
	if n := v.m.fd.hiddenBlocked; n > 0 {
		what = append(what, report.PluralGrouped(n, "blocked action"))
	}
	if n := v.m.fd.hiddenOutside; n > 0 {
		what = append(what, report.PluralGrouped(n, "change")+" outside the workspace")
	}
	hidden += v.m.fd.hiddenBlocked + v.m.fd.hiddenOutside
	if v.hiddenBar.Hidden != (hidden == 0) {
		v.hiddenBar.Hidden = hidden == 0
		v.changesPane.Refresh() // the bar takes or gives back its row
	}
	v.hiddenText.Segments = []widget.RichTextSegment{&widget.TextSegment{
		Text:  fmt.Sprintf("%s hidden by filters —", strings.Join(what, ", ")),
		Style: widget.RichTextStyle{ColorName: theme.ColorNameWarning, TextStyle: fyne.TextStyle{Bold: true}, Inline: true}}}
	v.hiddenText.Refresh()
	v.hiddenBar.Refresh()
	v.updateReviewed()

	keys := "Up/Down PgUp/PgDn  n/p violation  v viewed  Enter diff"
	if v.tree {
		keys = "Up/Down PgUp/PgDn  n/p violation  v viewed  Enter open"
	}
	v.shown.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: keys,
		Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText}}}
	v.shown.Refresh()
	v.stage.update()
}

// keepOpen pins open the folders above the selected row that are open
// now: an allowlist change may make a folder one that starts closed (all
// its changes allowed), and the row the reviewer just allowed must stay
// in the list, selected.
func (v *View) keepOpen() {
	if !v.tree || v.selID == "" || v.m.nodes == nil {
		return
	}
	for p := parentOf(v.selID); p != ""; p = parentOf(p) {
		if n := v.m.nodes[p]; n != nil && v.isOpen(p, n) {
			v.open[p] = true
		}
	}
}

// syncDetail keeps the detail true to the filtered list: a folder shows
// its counts as they are now, and a change (or folder) the filter hides
// leaves the detail, which says so.
func (v *View) syncDetail() {
	d := v.detail
	switch {
	case d.folder != "":
		if v.m.nodes[d.folder] != nil {
			d.showFolder(d.folder)
			return
		}
		v.dropHidden(d.folder + "/")
	case d.change >= 0 && v.sel == d.change && !v.m.shown(v.m.rowOf(d.change)):
		v.dropHidden(v.r.Changes[d.change].Path)
	}
}

// dropHidden clears the selection and says in the detail that path is
// hidden by the filter.
func (v *View) dropHidden(path string) {
	v.sel, v.selID = -1, ""
	v.restoreSelection()
	v.detail.clear()
	v.detail.status.Segments = []widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleParagraph,
		Text: report.QuotePath(path) + " is hidden by the filter. Select a change, or Clear the filter."}}
	v.detail.status.Refresh()
}

// updateReviewed shows "x of N reviewed" above the list.
func (v *View) updateReviewed() {
	total := 0
	if v.r != nil {
		total = v.m.rowCount() // a rename is one row, and one mark
	}
	c := style.Muted
	if total > 0 && v.nViewed == total {
		c = style.PassColor
	}
	v.reviewed.Segments = []widget.RichTextSegment{&widget.TextSegment{
		Text:  fmt.Sprintf("%s of %s reviewed", report.GroupDigits(v.nViewed), report.GroupDigits(total)),
		Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Bold: v.nViewed > 0}, Inline: true}}}
	v.reviewed.Refresh()
}

func (v *View) setEmpty(text string) {
	v.empty.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{ColorName: style.Muted, Alignment: fyne.TextAlignCenter}}}
	v.empty.Refresh()
}

// restoreSelection re-selects the selected row in the rebuilt list.
func (v *View) restoreSelection() {
	if k := v.selectedRow(); k >= 0 {
		v.selectRow(k)
		return
	}
	v.list.quiet = true
	v.list.UnselectAll()
	v.list.quiet = false
}

// toggleViewed marks the change at row id viewed, or not viewed if it was;
// for a folder of the tree, every change it holds (viewed when any of them
// was not).
func (v *View) toggleViewed(id string) {
	if v.r == nil {
		return
	}
	var idx []int
	if n := v.m.nodes[id]; v.tree && n != nil && n.folder() {
		var walk func(id string)
		walk = func(id string) {
			n := v.m.nodes[id]
			if n.change >= 0 {
				idx = append(idx, n.change)
			}
			for _, k := range n.children {
				walk(k)
			}
		}
		walk(id)
	} else if i := v.indexOf(id); i >= 0 {
		idx = []int{i}
	}
	if len(idx) == 0 {
		return
	}
	slices.Sort(idx)
	on := false
	for _, i := range idx {
		if !v.viewed[i] {
			on = true
		}
	}
	var paths []string
	for _, i := range idx {
		if v.viewed[i] != on {
			v.setViewed(i, on)
			paths = append(paths, v.r.Changes[i].Path)
		}
	}
	v.list.Refresh()
	v.updateReviewed()
	if v.opts.OnViewed != nil {
		v.opts.OnViewed(v.r, paths, on)
	}
}

// setViewed marks change i, keeping the folders' counts.
func (v *View) setViewed(i int, on bool) {
	d := 1
	if !on {
		d = -1
	}
	v.viewed[i] = on
	v.nViewed += d
	if v.m.nodes == nil || !v.m.shown(i) {
		return
	}
	for a := v.r.Changes[i].Path; ; a = parentOf(a) {
		if n := v.m.nodes[a]; n != nil {
			n.sum.viewed += d
		}
		if a == "" {
			return
		}
	}
}

// SetViewed marks the changes at paths viewed (and no other), as a review
// kept by the host left them; paths that are not changes of the report
// are ignored.
func (v *View) SetViewed(paths []string) {
	if v.r == nil {
		return
	}
	clear(v.viewed)
	v.nViewed = 0
	for _, p := range paths {
		if i, ok := v.m.index[p]; ok && !v.viewed[i] {
			v.viewed[i] = true
			v.nViewed++
		}
	}
	v.refilter()
}

// Viewed returns the paths of the changes marked viewed, in the report's
// order.
func (v *View) Viewed() []string {
	var out []string
	for i, on := range v.viewed {
		if on {
			out = append(out, v.r.Changes[i].Path)
		}
	}
	return out
}

// roomForSplit widens the detail pane as far as the changes list and the
// sidebar allow (each at its minimum width): a side by side diff in a
// small window. The reviewer may drag the dividers back.
func (v *View) roomForSplit() {
	if v.mainSplit == nil {
		return
	}
	v.mainSplit.SetOffset(0) // the split keeps each side at its minimum
	v.innerSplit.SetOffset(1)
}
