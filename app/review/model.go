package review

import (
	"slices"
	"strings"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

// Filter says which changes the list shows. The zero Filter hides
// everything; DefaultFilter shows everything.
type Filter struct {
	// Added, Removed and Changed show changes of that kind.
	Added, Removed, Changed bool
	// Violations and Allowed show changes the allowlist does not / does allow.
	Violations, Allowed bool
	// Blocked and Outside show the actions containment blocked and the
	// changes outside the workspace (findings.go).
	Blocked, Outside bool
	// riskyOnly keeps only the changes that carry a risk (the Risky chip:
	// on, it narrows the list to them; it never hides them).
	riskyOnly bool
	// Text keeps only paths containing it (case-insensitive).
	Text string
}

// defaultFilter shows every change.
func defaultFilter() Filter {
	return Filter{Added: true, Removed: true, Changed: true, Violations: true, Allowed: true, Blocked: true, Outside: true}
}

func (f *Filter) kindOn(k diff.Kind) bool {
	switch k {
	case diff.Added:
		return f.Added
	case diff.Removed:
		return f.Removed
	case diff.Changed:
		return f.Changed
	}
	return true
}

// counts tallies changes for a folder's row (report.Tally: the roll-up
// rule is report.RollsUp) and how many of them the reviewer viewed.
type counts struct {
	report.Tally
	viewed int
}

func (c *counts) add(ch *diff.Change, viewed bool) {
	c.Tally.Add(ch)
	if viewed {
		c.viewed++
	}
}

// node is a tree node: a folder, a change, or both (a changed directory).
type node struct {
	name     string
	children []string
	change   int // index into the report's changes, -1 for a pure folder
	// below counts the visible changes in the subtree (itself excluded) and
	// how many of them are violations.
	below, belowViolations int
	// sum tallies the visible changes of the subtree, itself included.
	sum counts
}

func (n *node) folder() bool { return len(n.children) > 0 }

// row is one row of the change list: a node (its id is the path) at a
// depth of the tree (0 in the flat list).
type row struct {
	id    string
	depth int
}

// model is the filtered view of a report's changes: a flat list and a tree
// of folders. It is rebuilt on every filter or allowlist change; with tens
// of thousands of changes that takes milliseconds.
type model struct {
	r      *report.Report
	lower  []string       // lower-cased paths, for the text filter
	index  map[string]int // path -> change index
	sorted []int          // every change index, in natural path order
	// visible are the indices the filter shows, in list order: natural
	// path order, violations first when asked for.
	visible []int
	pos     []int            // change index -> position in visible, -1 when hidden
	nodes   map[string]*node // by node id (the path; "" is the root)
	// violationsFirst puts violations (and folders holding one) first.
	violationsFirst bool
	ren             renames  // one row a rename (rename.go)
	fd              findings // the blocked actions and outside changes shown (findings.go)
}

func newModel(r *report.Report) *model {
	m := &model{r: r, violationsFirst: true, ren: newRenames(r)}
	m.lower = make([]string, len(r.Changes))
	m.sorted = make([]int, len(r.Changes))
	m.index = make(map[string]int, len(r.Changes))
	for i := range r.Changes {
		m.lower[i] = strings.ToLower(r.Changes[i].Path)
		m.sorted[i] = i
		m.index[r.Changes[i].Path] = i
	}
	slices.SortStableFunc(m.sorted, func(a, b int) int { return comparePaths(r.Changes[a].Path, r.Changes[b].Path) })
	m.pos = make([]int, len(r.Changes))
	return m
}

func (m *model) match(f *Filter, i int) bool {
	c := &m.r.Changes[i]
	if !f.kindOn(c.Kind) {
		return false
	}
	if c.Allowed && !f.Allowed || !c.Allowed && !f.Violations || f.riskyOnly && c.Risk == diff.NoRisk {
		return false
	}
	return f.Text == "" || strings.Contains(m.lower[i], strings.ToLower(f.Text))
}

// apply recomputes the visible changes and, when tree is set, the tree;
// viewed says which changes the reviewer marked viewed (nil: none).
func (m *model) apply(f Filter, tree bool, viewed []bool) {
	m.visible = m.visible[:0]
	for i := range m.pos {
		m.pos[i] = -1
	}
	// A rename's removed path has no row of its own (rename.go): its
	// added path's row stands for both.
	pass := func(want func(i int) bool) {
		for _, i := range m.sorted {
			if !m.hidden(i) && (want == nil || want(i)) && m.matchRow(&f, i) {
				m.pos[i] = len(m.visible)
				m.visible = append(m.visible, i)
			}
		}
	}
	if m.violationsFirst { // as the reports rank them (report.Rank)
		for _, allowed := range []bool{false, true} {
			for rank := range report.Ranks {
				pass(func(i int) bool { return m.allowed(i) == allowed && report.Rank(&m.r.Changes[i]) == rank })
			}
		}
	} else {
		pass(nil)
	}
	m.nodes = nil
	if tree {
		m.buildTree(viewed)
	}
	m.applyFindings(&f)
}

// shown reports whether change i passes the filter.
func (m *model) shown(i int) bool { return i >= 0 && i < len(m.pos) && m.pos[i] >= 0 }

// parentOf is p's folder, "" at the top.
func parentOf(p string) string {
	dir, _ := snapshot.SplitPath(p)
	return dir
}

// baseOf is p's last segment.
func baseOf(p string) string {
	_, name := snapshot.SplitPath(p)
	return name
}

func (m *model) buildTree(viewed []bool) {
	m.nodes = map[string]*node{"": {change: -1}}
	get := func(id string) (*node, bool) {
		if n, ok := m.nodes[id]; ok {
			return n, false
		}
		n := &node{name: baseOf(id), change: -1}
		m.nodes[id] = n
		return n, true
	}
	for _, i := range m.visible {
		c, _ := m.rowChange(i, true) // a rename: allowed only when both paths are
		v := i < len(viewed) && viewed[i]
		n, created := get(c.Path)
		n.change = i
		n.sum.add(c, v)
		// Link the nodes this change created to their parents.
		for id := c.Path; created && id != ""; {
			p, pc := get(parentOf(id))
			p.children = append(p.children, id)
			id, created = parentOf(id), pc
		}
		for a := c.Path; a != ""; {
			a = parentOf(a)
			an := m.nodes[a]
			an.below++
			if !c.Allowed {
				an.belowViolations++
			}
			an.sum.add(c, v)
		}
	}
	for _, n := range m.nodes {
		if len(n.children) > 1 {
			slices.SortFunc(n.children, m.compareNodes)
		}
	}
}

// compareNodes orders siblings: violations first (when asked for), then
// folders, then by name in natural order.
func (m *model) compareNodes(a, b string) int {
	na, nb := m.nodes[a], m.nodes[b]
	if m.violationsFirst {
		if va, vb := na.sum.Violations > 0, nb.sum.Violations > 0; va != vb {
			if va {
				return -1
			}
			return 1
		}
	}
	if fa, fb := na.folder(), nb.folder(); fa != fb {
		if fa {
			return -1
		}
		return 1
	}
	if m.violationsFirst && !na.folder() && na.change >= 0 && nb.change >= 0 {
		// Files of a folder as the reports rank them (report.Rank).
		if ra, rb := report.Rank(&m.r.Changes[na.change]), report.Rank(&m.r.Changes[nb.change]); ra != rb {
			return ra - rb
		}
	}
	return compareNames(na.name, nb.name)
}

// rows lists the rows the list shows: the findings' groups first
// (findingRows), then in tree mode the tree depth first, into the folders
// open says are open; else the visible changes.
func (m *model) rows(tree bool, open func(id string, n *node) bool) []row {
	out := m.findingRows(tree && m.nodes != nil, func(id string) bool { return open(id, nil) })
	if !tree || m.nodes == nil {
		for _, i := range m.visible {
			out = append(out, row{id: m.r.Changes[i].Path})
		}
		return out
	}
	var walk func(id string, depth int)
	walk = func(id string, depth int) {
		for _, k := range m.nodes[id].children {
			out = append(out, row{id: k, depth: depth})
			if n := m.nodes[k]; n.folder() && open(k, n) {
				walk(k, depth+1)
			}
		}
	}
	walk("", 0)
	return out
}

// comparePaths orders paths folder by folder, each name in natural order,
// a folder before what it holds.
func comparePaths(a, b string) int {
	for {
		ia, ib := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		ca, cb := a, b
		if ia >= 0 {
			ca = a[:ia]
		}
		if ib >= 0 {
			cb = b[:ib]
		}
		if c := compareNames(ca, cb); c != 0 {
			return c
		}
		switch {
		case ia < 0 && ib < 0:
			return 0
		case ia < 0:
			return -1
		case ib < 0:
			return 1
		}
		a, b = a[ia+1:], b[ib+1:]
	}
}

// compareNames orders names as people do: numbers by value ("mod2.o"
// before "mod10.o") and letters regardless of case ("file" before "Zed");
// names equal but for case or leading zeros in byte order.
func compareNames(a, b string) int {
	x, y := a, b
	for x != "" && y != "" {
		dx, dy := digits(x), digits(y)
		if dx > 0 && dy > 0 {
			nx, ny := strings.TrimLeft(x[:dx], "0"), strings.TrimLeft(y[:dy], "0")
			if len(nx) != len(ny) {
				return len(nx) - len(ny)
			}
			if c := strings.Compare(nx, ny); c != 0 {
				return c
			}
			x, y = x[dx:], y[dy:]
			continue
		}
		if cx, cy := lower(x[0]), lower(y[0]); cx != cy {
			return int(cx) - int(cy)
		}
		x, y = x[1:], y[1:]
	}
	if len(x) != len(y) {
		return len(x) - len(y)
	}
	return strings.Compare(a, b)
}

// naturalLess reports whether name a sorts before b in natural order.
func naturalLess(a, b string) bool { return compareNames(a, b) < 0 }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
