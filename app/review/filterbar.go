package review

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/report"
)

// filterBar is the row above the changes: the chips that filter by kind
// and by verdict (with their counts), the path filter and the switch
// between the folder tree and the flat list.
type filterBar struct {
	added, removed, changed, violations, all *Chip
	blockedChip, outsideChip                 *Chip // shown when the report has any
	riskyChip                                *Chip // on: only risky changes; shown when the report has any
	search                                   *keys.Entry
	treeBtn, listBtn                         *widget.Button
	root                                     *fyne.Container
}

func newFilterBar(v *View) *filterBar {
	f := &filterBar{}
	toggle := func(set func(bool)) func(bool) {
		return func(on bool) { set(on); v.refilter() }
	}
	f.added = newChip("Added", style.Added, toggle(func(b bool) { v.filter.Added = b }))
	f.removed = newChip("Removed", style.Removed, toggle(func(b bool) { v.filter.Removed = b }))
	f.changed = newChip("Changed", style.Changed, toggle(func(b bool) { v.filter.Changed = b }))
	f.violations = newChip("Violations", style.FailColor, toggle(func(b bool) { v.filter.Violations = b }))
	f.all = newChip("Allowed", style.Allowed, toggle(func(b bool) { v.filter.Allowed = b }))
	f.blockedChip = newChip("Blocked", style.Blocked, toggle(func(b bool) { v.filter.Blocked = b }))
	f.outsideChip = newChip("Outside", style.Outside, toggle(func(b bool) { v.filter.Outside = b }))
	f.riskyChip = newChip("Risky", style.Risk, toggle(func(b bool) { v.filter.riskyOnly = b }))
	f.riskyChip.On = false
	for _, c := range []*Chip{f.added, f.removed, f.changed, f.violations, f.all, f.blockedChip, f.outsideChip, f.riskyChip} {
		c.OnRune = func(r rune) { v.TypedRune(r) }
	}
	f.blockedChip.Hide() // until a report has blocked actions
	f.riskyChip.Hide()
	f.outsideChip.Hide()

	f.search = keys.NewEntry()
	f.search.OnEscape = v.focusChanges
	f.search.SetPlaceHolder("Filter paths…")
	f.search.ActionItem = widget.NewIcon(theme.SearchIcon())
	f.search.OnChanged = func(s string) { v.filter.Text = s; v.refilter() }

	f.treeBtn = widget.NewButtonWithIcon("Tree", theme.FolderIcon(), func() { v.setTreeMode(true) })
	f.listBtn = widget.NewButtonWithIcon("List", theme.ListIcon(), func() { v.setTreeMode(false) })

	chips := container.NewHBox(f.added, f.removed, f.changed, widget.NewSeparator(), f.violations, f.all, f.riskyChip, f.blockedChip, f.outsideChip)
	modeBtns := container.NewHBox(f.treeBtn, f.listBtn)
	f.root = container.NewBorder(nil, nil, chips, modeBtns, f.search)
	return f
}

// show sets the chips and the path filter to filt (the path filter
// without calling back: the view refilters once, after).
func (f *filterBar) show(v *View, filt Filter) {
	f.added.setOn(filt.Added)
	f.removed.setOn(filt.Removed)
	f.changed.setOn(filt.Changed)
	f.violations.setOn(filt.Violations)
	f.all.setOn(filt.Allowed)
	f.blockedChip.setOn(filt.Blocked)
	f.outsideChip.setOn(filt.Outside)
	f.riskyChip.setOn(filt.riskyOnly)
	if f.search.Text != filt.Text {
		f.search.OnChanged = nil
		f.search.SetText(filt.Text)
		f.search.OnChanged = func(s string) { v.filter.Text = s; v.refilter() }
	}
}

// setCounts shows the report's counts on the chips (the blocked, outside
// and risky chips only when there are any) and which of tree and list is
// on.
func (f *filterBar) setCounts(r *report.Report, tree bool) {
	n := r.Count()
	f.added.setCount(n.Added)
	f.removed.setCount(n.Removed)
	f.changed.setCount(n.Changed)
	f.violations.setCount(n.Violations)
	f.all.setCount(n.Allowed)
	for _, c := range []struct {
		chip *Chip
		n    int
	}{{f.blockedChip, len(r.Blocked)}, {f.outsideChip, len(r.Outside)}, {f.riskyChip, n.Risky}} {
		c.chip.setCount(c.n)
		if c.chip.Visible() != (c.n > 0) {
			c.chip.Hidden = c.n == 0
			c.chip.Refresh()
		}
	}

	f.treeBtn.Importance, f.listBtn.Importance = widget.LowImportance, widget.LowImportance
	if tree {
		f.treeBtn.Importance = widget.HighImportance
	} else {
		f.listBtn.Importance = widget.HighImportance
	}
	f.treeBtn.Refresh()
	f.listBtn.Refresh()
}
