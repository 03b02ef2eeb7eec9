package review

import "slices"

// The reviewer's "viewed" marks: a row at a time or a folder's changes,
// counted above the list and kept by the host through Options.OnViewed.

// updateReviewed shows "x of N reviewed" above the list.
func (v *View) updateReviewed() {
	total := 0
	if v.r != nil {
		total = v.m.rowCount() // a rename is one row, and one mark
	}
	v.changes.showReviewed(v.nViewed, total)
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
	v.changes.list.Refresh()
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
