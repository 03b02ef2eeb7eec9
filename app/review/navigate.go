package review

import "github.com/diffgate/diffgate/core/report"

// The selection and the keyboard's way through the change list and tree:
// which row shows what, which folders are open, and moving between rows
// and violations.

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
		v.changes.list.quiet = true
		v.changes.list.UnselectAll()
		v.changes.list.quiet = false
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
	v.changes.list.quiet = true
	v.changes.list.Select(k)
	v.changes.list.quiet = false
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
	v.changes.list.Refresh()
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

// restoreSelection re-selects the selected row in the rebuilt list.
func (v *View) restoreSelection() {
	if k := v.selectedRow(); k >= 0 {
		v.selectRow(k)
		return
	}
	v.changes.list.quiet = true
	v.changes.list.UnselectAll()
	v.changes.list.quiet = false
}
