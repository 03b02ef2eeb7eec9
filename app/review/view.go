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

// TreeLimit is the number of changes above which the view starts in the flat
// list rather than the tree.
const TreeLimit = 5000

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
	sel      int

	banner                                   *Banner
	added, removed, changed, violations, all *Chip
	search                                   *keys.Entry
	treeBtn, listBtn                         *widget.Button
	shown                                    *widget.RichText
	list                                     *changeList
	treeW                                    *changeTree
	changes                                  *fyne.Container
	empty                                    *widget.RichText
	detail                                   *detail
	editor                                   *AllowlistEditor
	note                                     *keys.Entry
	approveBtn, rejectBtn, resetBtn          *widget.Button
	suggestBtn                               *widget.Button
	decision                                 *widget.RichText
	exportBtns                               map[Format]*widget.Button
	exported                                 *exported
	confirm                                  dialog.Dialog // the approval question while it is asked
	root                                     fyne.CanvasObject
	decisionSeq                              int // counts SetDecision calls
	stage                                    *stagePane
}

// New returns a view of r (which may be nil: SetReport later).
func New(r *report.Report, opts Options) *View {
	v := &View{opts: opts, filter: DefaultFilter(), sel: -1, tree: true}
	v.ExtendBaseWidget(v)
	v.build()
	v.SetReport(r)
	return v
}

// CreateRenderer implements fyne.Widget.
func (v *View) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.root) }

func (v *View) build() {
	v.m = newModel(&report.Report{})
	v.banner = NewBanner(nil)

	toggle := func(set func(bool)) func(bool) {
		return func(on bool) { set(on); v.refilter() }
	}
	v.added = NewChip("Added", style.Added, toggle(func(b bool) { v.filter.Added = b }))
	v.removed = NewChip("Removed", style.Removed, toggle(func(b bool) { v.filter.Removed = b }))
	v.changed = NewChip("Changed", style.Changed, toggle(func(b bool) { v.filter.Changed = b }))
	v.violations = NewChip("Violations", style.FailColor, toggle(func(b bool) { v.filter.Violations = b }))
	v.all = NewChip("Allowed", style.Allowed, toggle(func(b bool) { v.filter.Allowed = b }))

	v.search = keys.NewEntry()
	v.search.OnEscape = v.focusChanges
	v.search.SetPlaceHolder("Filter paths…")
	v.search.ActionItem = widget.NewIcon(theme.SearchIcon())
	v.search.OnChanged = func(s string) { v.filter.Text = s; v.refilter() }

	v.treeBtn = widget.NewButtonWithIcon("Tree", theme.FolderIcon(), func() { v.SetTreeMode(true) })
	v.listBtn = widget.NewButtonWithIcon("List", theme.ListIcon(), func() { v.SetTreeMode(false) })
	v.shown = widget.NewRichText()
	// Wrapped: on one line the count and key hints alone made the changes
	// pane 400 px wide, and the review 1029 px (a 1024 px window cut it).
	v.shown.Wrapping = fyne.TextWrapWord

	v.list = newChangeList(v)
	v.treeW = newChangeTree(v)
	v.empty = widget.NewRichText()
	v.changes = container.NewStack()

	v.detail = newDetail(v)

	v.editor = NewAllowlistEditor()
	v.editor.SetOnEscape(v.focusChanges)
	v.editor.OnChanged = func(entries []string, problems []Problem) { v.applyDraft(entries) }
	v.note = keys.NewMultiLineEntry()
	v.note.OnEscape = v.focusChanges
	v.note.SetPlaceHolder("Note for the record (why these changes are fine)")
	v.note.SetMinRowsVisible(2)
	v.note.Wrapping = fyne.TextWrapWord
	v.approveBtn = widget.NewButtonWithIcon("Approve allowlist", theme.ConfirmIcon(), v.approve)
	v.approveBtn.Importance = widget.SuccessImportance
	v.rejectBtn = widget.NewButtonWithIcon("Reject", theme.CancelIcon(), v.reject)
	v.rejectBtn.Importance = widget.DangerImportance
	v.resetBtn = widget.NewButtonWithIcon("Reset to the run's allowlist", theme.ContentUndoIcon(), func() {
		v.editor.SetEntries(v.original)
	})
	v.resetBtn.Importance = widget.LowImportance
	v.suggestBtn = widget.NewButtonWithIcon("Suggest allowlist", theme.ContentAddIcon(), func() { v.SuggestAllowlist() })
	v.decision = widget.NewRichText()
	v.decision.Wrapping = fyne.TextWrapWord
	v.decision.Hide() // until there is a decision to show (saves a row)
	v.stage = newStagePane(v)

	v.exported = newExported(v.opts.OpenFolder)
	v.exportBtns = map[Format]*widget.Button{}
	var exports []fyne.CanvasObject
	for _, f := range Formats {
		f := f
		b := widget.NewButtonWithIcon(f.Label(), theme.DocumentSaveIcon(), func() {
			if v.opts.Export != nil && v.r != nil {
				v.opts.Export(v.ExportReport(), f)
			}
		})
		if !f.Available() {
			b.Disable()
		}
		v.exportBtns[f] = b
		exports = append(exports, b)
	}

	// Layout.
	chips := container.NewHBox(v.added, v.removed, v.changed, widget.NewSeparator(), v.violations, v.all)
	modeBtns := container.NewHBox(v.treeBtn, v.listBtn)
	toolbar := container.NewBorder(nil, nil, chips, modeBtns, v.search)
	changesPane := container.NewBorder(nil, v.shown, nil, nil, v.changes)

	sideTitle := styledText("Allowlist", "", theme.SizeNameSubHeadingText, fyne.TextStyle{Bold: true})
	sideHint := widget.NewRichText(&widget.TextSegment{Text: "Draft: one entry per line. Every edit re-evaluates the verdict; nothing is rerun.",
		Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText}})
	sideHint.Wrapping = fyne.TextWrapWord
	decide := container.NewGridWithColumns(2, v.approveBtn, v.rejectBtn)
	exportTitle := styledText("Export report", style.Muted, theme.SizeNameCaptionText, fyne.TextStyle{Bold: true})
	var sideBottom *fyne.Container
	if v.opts.ReadOnly {
		sideBottom = container.NewVBox()
	} else {
		sideBottom = container.NewVBox(v.suggestBtn, v.resetBtn)
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
		sideBottom.Add(v.decision)
	}
	if v.opts.Export != nil {
		sideBottom.Add(widget.NewSeparator())
		sideBottom.Add(exportTitle)
		sideBottom.Add(container.NewGridWithColumns(3, exports...))
		sideBottom.Add(v.exported.root)
	}
	var sideCenter fyne.CanvasObject = v.editor
	if v.opts.ReadOnly {
		sideCenter = layout.NewSpacer()
		v.editor.Disable()
	}
	sidebar := container.NewBorder(container.NewVBox(sideTitle, sideHint), sideBottom, nil, nil, sideCenter)

	inner := container.NewHSplit(container.NewPadded(v.detail.root), container.NewPadded(sidebar))
	inner.Offset = 0.68
	main := container.NewHSplit(changesPane, inner)
	main.Offset = 0.32
	top := container.NewVBox(v.banner, v.stage.root, toolbar)
	v.root = container.NewBorder(top, nil, nil, nil, main)
}

// SetReport shows r. The view edits r in place as the reviewer allows changes.
func (v *View) SetReport(r *report.Report) {
	if v.confirm != nil { // a question about the previous report
		v.confirm.Hide()
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
	v.tree = len(r.Changes) <= TreeLimit
	v.banner.SetReport(v.r)
	v.editor.OnChanged = nil
	v.editor.SetEntries(r.Allowlist)
	v.editor.OnChanged = func(entries []string, problems []Problem) { v.applyDraft(entries) }
	v.decision.Segments = nil
	v.decision.Hide()
	v.stage.runAllow = append([]string(nil), r.Allowlist...)
	v.stage.reset()
	v.exported.clear()
	v.note.SetText("")
	v.detail.clear()
	v.list.UnselectAll()
	v.treeW.UnselectAll()
	v.treeW.CloseAllBranches()
	v.refilter()
	v.openDefaultBranches()
	v.updateButtons()
}

// Report returns the report shown (with the draft allowlist applied).
func (v *View) Report() *report.Report { return v.r }

// ExportReport returns what the export buttons write: the run's report as
// it came (its own allowlist and verdict), the reviewer's draft allowlist,
// decision, note and re-evaluated verdict in its Review. Nil without a
// report.
func (v *View) ExportReport() *report.Report {
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
	v.filter = f
	v.added.SetOn(f.Added)
	v.removed.SetOn(f.Removed)
	v.changed.SetOn(f.Changed)
	v.violations.SetOn(f.Violations)
	v.all.SetOn(f.Allowed)
	if v.search.Text != f.Text {
		v.search.OnChanged = nil
		v.search.SetText(f.Text)
		v.search.OnChanged = func(s string) { v.filter.Text = s; v.refilter() }
	}
	v.refilter()
}

// Shown returns the indices (into Report().Changes) the filter lets
// through, in path order.
func (v *View) Shown() []int { return append([]int(nil), v.m.visible...) }

// TreeMode reports whether the changes show as a tree.
func (v *View) TreeMode() bool { return v.tree }

// SetTreeMode switches between the folder tree and the flat list.
func (v *View) SetTreeMode(tree bool) {
	if v.tree == tree && len(v.changes.Objects) > 0 {
		return
	}
	v.tree = tree
	v.refilter()
	if tree {
		v.openDefaultBranches()
	}
	if v.sel >= 0 {
		v.Select(v.sel)
	}
}

// Selected returns the index of the selected change, -1 when none.
func (v *View) Selected() int { return v.sel }

// Select selects change i (an index into Report().Changes) in the list or
// tree and shows it. A change the filter hides is shown in the detail only.
func (v *View) Select(i int) {
	if v.r == nil || i < 0 || i >= len(v.r.Changes) {
		return
	}
	i = v.m.rowOf(i) // a rename's removed path: its row
	if v.tree {
		if id, ok := v.m.byIdx[i]; ok {
			v.treeW.Select(id)
			if v.sel == i {
				return
			}
		}
	} else if p, ok := v.m.pos[i]; ok {
		v.list.Select(p)
		v.list.Highlight(p)
		if v.sel == i {
			return
		}
	}
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

// order is the sequence keyboard navigation follows: the tree's order in
// tree mode, path order in the list.
func (v *View) order() []int {
	if v.tree && v.m.nodes != nil {
		return v.m.treeOrder()
	}
	return v.m.visible
}

// NextViolation selects the next (dir > 0) or previous violation after the
// selection, wrapping around. It reports whether there was one.
func (v *View) NextViolation(dir int) bool {
	if v.r == nil {
		return false
	}
	ord := v.order()
	n := len(ord)
	if n == 0 {
		return false
	}
	start := -1
	for k, i := range ord {
		if i == v.sel {
			start = k
			break
		}
	}
	if start < 0 && dir < 0 {
		start = n
	}
	for step := 1; step <= n; step++ {
		k := ((start+dir*step)%n + n) % n
		if i := ord[k]; !v.m.allowed(i) {
			v.Select(i)
			return true
		}
	}
	return false
}

// move selects the change next to the selection in navigation order.
func (v *View) move(dir int) {
	ord := v.order()
	if len(ord) == 0 {
		return
	}
	k := -1
	for x, i := range ord {
		if i == v.sel {
			k = x
			break
		}
	}
	switch {
	case k < 0 && dir > 0:
		k = 0
	case k < 0:
		k = len(ord) - 1
	default:
		k = max(0, min(len(ord)-1, k+dir))
	}
	v.Select(ord[k])
}

// TypedKey handles the review keys when neither list nor detail has focus
// (the host routes the canvas' unclaimed keys here): up/down move through
// the changes, Enter opens the detail. It reports whether it used the key.
func (v *View) TypedKey(ev *fyne.KeyEvent) bool {
	switch ev.Name {
	case fyne.KeyUp:
		v.move(-1)
	case fyne.KeyDown:
		v.move(1)
	case fyne.KeyReturn, fyne.KeyEnter:
		v.FocusDetail()
	default:
		return false
	}
	return true
}

// TypedRune handles n / p (next / previous violation), / (filter) and a
// (Allow… for the selected change); any other character goes to the
// window's keys ('?': the cheat sheet). It reports whether it was used.
func (v *View) TypedRune(r rune) bool {
	switch r {
	case 'n':
		v.NextViolation(1)
	case 'p':
		v.NextViolation(-1)
	case '/':
		v.focus(v.search)
	case 'a':
		return v.OpenAllow()
	default:
		return keys.PassRune(v, r)
	}
	return true
}

// OpenAllow opens the Allow… menu of the selected change (its suggested
// entries) and reports whether there was one to open.
func (v *View) OpenAllow() bool {
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
		{Group: g, Keys: "n, p", What: "Next or previous violation"},
		{Group: g, Keys: "Enter", What: "Open the diff (Escape comes back)"},
		{Group: g, Keys: "Left, Right", What: "Close or open a folder (tree)"},
		{Group: g, Keys: "a", What: "Allow… the selected change"},
		{Group: g, Keys: "/", What: "Filter the paths"},
	}
}

func (v *View) focus(f fyne.Focusable) {
	if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil {
		c.Focus(f)
	}
}

// FocusDetail moves keyboard focus into the detail: the diff when there is
// one (arrows scroll it, Escape comes back), else the Allow button.
func (v *View) FocusDetail() {
	switch {
	case len(v.detail.diff.Lines()) > 0:
		v.focus(v.detail.diff)
	case v.detail.allowBtn.Visible():
		v.focus(v.detail.allowBtn)
	}
}

// ChangesWidget is the change list or tree, whichever is shown: what
// FocusChanges focuses.
func (v *View) ChangesWidget() fyne.Focusable {
	if v.tree {
		return v.treeW
	}
	return v.list
}

// FocusChanges gives keyboard focus to the change list or tree.
func (v *View) FocusChanges() { v.focusChanges() }

func (v *View) focusChanges() {
	if v.tree {
		v.focus(v.treeW)
	} else {
		v.focus(v.list)
	}
}

// SuggestAllowlist adds to the draft the fewest entries that allow every
// violation left (policy.Suggest, as "diffgate allowlist suggest" prints
// them) and returns them.
func (v *View) SuggestAllowlist() []string {
	if v.r == nil {
		return nil
	}
	entries := policy.Suggest(v.r.Changes)
	v.editor.AppendAll(entries)
	return entries
}

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
	v.refilter()
	if v.tree {
		v.openDefaultBranches()
	}
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
		v.setDecision(fmt.Sprintf("Approved at %s: allowlist with %s saved.", time.Now().Format("15:04"), plural(len(entries), "entry")), style.PassColor)
	}
}

func (v *View) reject() {
	if v.opts.OnReject == nil || v.r == nil {
		return
	}
	seq := v.decisionSeq
	if err := v.opts.OnReject(v.r, strings.TrimSpace(v.note.Text)); err != nil {
		v.setDecision("Could not save: "+err.Error(), style.FailColor)
		return
	}
	v.decided = report.Rejected
	if v.decisionSeq == seq {
		v.setDecision("Rejected at "+time.Now().Format("15:04")+".", style.FailColor)
	}
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

func (v *View) setDecision(text string, c fyne.ThemeColorName) {
	v.decision.Show()
	v.decision.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Bold: true}}}}
	v.decision.Refresh()
}

// Decision is the last approve/reject status line shown ("" if none).
func (v *View) Decision() string {
	var b strings.Builder
	for _, s := range v.decision.Segments {
		b.WriteString(s.Textual())
	}
	return b.String()
}

// refilter recomputes the visible changes and refreshes counters and list.
func (v *View) refilter() {
	r := v.r
	if r == nil {
		r = &report.Report{}
	}
	v.m.apply(v.filter, v.tree)
	n := r.Count()
	v.added.SetCount(n.Added)
	v.removed.SetCount(n.Removed)
	v.changed.SetCount(n.Changed)
	v.violations.SetCount(n.Violations)
	v.all.SetCount(n.Allowed)

	v.treeBtn.Importance, v.listBtn.Importance = widget.LowImportance, widget.LowImportance
	var w fyne.CanvasObject
	if v.tree {
		v.treeBtn.Importance = widget.HighImportance
		w = v.treeW
	} else {
		v.listBtn.Importance = widget.HighImportance
		w = v.list
	}
	v.treeBtn.Refresh()
	v.listBtn.Refresh()
	switch {
	case len(r.Changes) == 0:
		v.setEmpty("No changes: the workspace is exactly as it was before the run.")
		w = container.NewCenter(v.empty)
	case len(v.m.visible) == 0:
		v.setEmpty("No change matches the filter.")
		w = container.NewCenter(v.empty)
	}
	if len(v.changes.Objects) != 1 || v.changes.Objects[0] != w {
		v.changes.Objects = []fyne.CanvasObject{w}
		v.changes.Refresh()
	}
	if v.tree {
		v.treeW.Refresh()
	} else {
		v.list.Refresh()
	}
	v.restoreSelection()

	text := fmt.Sprintf("%d of %d changes shown", len(v.m.visible), v.m.rows())
	if len(v.m.visible) == v.m.rows() {
		text = plural(len(r.Changes), "change")
	}
	v.shown.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text + "   ·   Up/Down move   n/p next/previous violation   Enter open diff",
		Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText}}}
	v.shown.Refresh()
	v.stage.update()
}

func (v *View) setEmpty(text string) {
	v.empty.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{ColorName: style.Muted, Alignment: fyne.TextAlignCenter}}}
	v.empty.Refresh()
}

// restoreSelection re-selects the selected change in the rebuilt list/tree.
func (v *View) restoreSelection() {
	if v.sel < 0 {
		return
	}
	if v.tree {
		if id, ok := v.m.byIdx[v.sel]; ok {
			v.treeW.Select(id)
		} else {
			v.treeW.UnselectAll()
		}
		return
	}
	if p, ok := v.m.pos[v.sel]; ok {
		v.list.UnselectAll()
		v.list.Select(p)
	} else {
		v.list.UnselectAll()
	}
}

// openDefaultBranches opens the folders that hold violations (all folders
// while a text filter is active), leaving fully allowed folders collapsed.
func (v *View) openDefaultBranches() {
	if !v.tree || v.m.nodes == nil {
		return
	}
	var ids []string
	for id, n := range v.m.nodes {
		if id != "" && len(n.children) > 0 && (n.belowViolations > 0 || v.filter.Text != "") && !v.treeW.IsBranchOpen(id) {
			ids = append(ids, id)
		}
	}
	v.treeW.openBranches(ids)
}
