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
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/quote"
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

	// The areas, top to bottom and left to right.
	banner  *Banner
	stage   *stagePane
	filters *filterBar
	changes *changesPane
	detail  *detail
	side    *sidebar
	// mainSplit (changes | the rest) and innerSplit (detail | sidebar)
	// give the detail more room for a side by side diff.
	mainSplit, innerSplit *container.Split
	root                  fyne.CanvasObject
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
	v.filters = newFilterBar(v)
	v.changes = newChangesPane(v)
	v.detail = newDetail(v)
	v.side = newSidebar(v)
	v.stage = newStagePane(v)

	inner := container.NewHSplit(container.NewPadded(v.detail.root), container.NewPadded(v.side.root))
	inner.Offset = 0.68
	main := container.NewHSplit(v.changes.root, inner)
	main.Offset = 0.32
	v.mainSplit, v.innerSplit = main, inner
	top := container.NewVBox(v.banner, v.stage.root, v.filters.root)
	v.root = container.NewBorder(top, nil, nil, nil, main)
}

// SetReport shows r. The view edits r in place as the reviewer allows changes.
func (v *View) SetReport(r *report.Report) {
	if v.side.confirm != nil { // a question about the previous report
		v.side.confirm.Hide()
	}
	if v.side.suggest != nil {
		v.side.suggest.d.Hide()
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
	v.m.violationsFirst = v.changes.violFirst.Checked
	v.tree = len(r.Changes) <= treeLimit
	v.selID, v.open = "", map[string]bool{}
	v.viewed, v.nViewed = make([]bool, len(r.Changes)), 0
	v.banner.SetReport(v.r)
	v.side.editor.OnChanged = nil
	v.side.editor.SetEntries(r.Allowlist)
	v.side.editor.OnChanged = func(entries []string, problems []Problem) { v.applyDraft(entries) }
	v.side.decision.Segments = nil
	v.side.decision.Hide()
	v.stage.runAllow = append([]string(nil), r.Allowlist...)
	v.stage.scope.SetSelectedIndex(int(v.stage.defaultScope()))
	v.stage.reset()
	v.side.exported.clear()
	v.side.note.SetText("")
	v.detail.bar.reset() // a full diff loaded for the previous report
	v.detail.clear()
	v.changes.list.quiet = true
	v.changes.list.UnselectAll()
	v.changes.list.quiet = false
	v.changes.list.ScrollToOffset(0)
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
	x, err := v.run.WithReview(v.side.editor.Entries(), v.decided, strings.TrimSpace(v.side.note.Text))
	if err != nil { // the editor keeps only valid entries; cannot happen
		return v.run.Clone()
	}
	return x
}

// Draft returns the valid entries of the draft allowlist.
func (v *View) Draft() []string { return v.side.editor.Entries() }

// Editor is the draft allowlist editor.
func (v *View) Editor() *AllowlistEditor { return v.side.editor }

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
	v.filters.show(v, f)
}

// setTreeMode switches between the folder tree and the flat list.
func (v *View) setTreeMode(tree bool) {
	if v.tree == tree && len(v.changes.stack.Objects) > 0 {
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
		v.move(-v.changes.list.pageRows())
	case fyne.KeyPageDown:
		v.move(v.changes.list.pageRows())
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
		v.focus(v.filters.search)
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

func (v *View) focusChanges() { v.focus(v.changes.list) }

// refilter recomputes the visible changes and refreshes counters and list.
func (v *View) refilter() {
	r := v.r
	if r == nil {
		r = &report.Report{}
	}
	v.m.apply(v.filter, v.tree, v.viewed)
	v.filters.setCounts(r, v.tree)
	var w fyne.CanvasObject = v.changes.list
	switch {
	case len(r.Changes) == 0 && len(r.Blocked)+len(r.Outside) == 0:
		v.changes.setEmpty("No changes: the workspace is exactly as it was before the run.")
		w = container.NewCenter(v.changes.empty)
	case len(v.m.visible) == 0 && len(v.m.fd.blocked)+len(v.m.fd.outside) == 0:
		v.changes.setEmpty("No change matches the filter.")
		w = container.NewCenter(v.changes.empty)
	}
	v.changes.setContent(w)
	v.rebuildRows()
	v.syncDetail()
	v.changes.showHidden(v.m)
	v.updateReviewed()
	v.changes.showKeys(v.tree)
	v.stage.update()
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
		Text: quote.Path(path) + " is hidden by the filter. Select a change, or Clear the filter."}}
	v.detail.status.Refresh()
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
