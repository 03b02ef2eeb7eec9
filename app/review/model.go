package review

import (
	"sort"
	"strings"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
)

// Filter says which changes the list shows. The zero Filter hides
// everything; DefaultFilter shows everything.
type Filter struct {
	// Added, Removed and Changed show changes of that kind.
	Added, Removed, Changed bool
	// Violations and Allowed show changes the allowlist does not / does allow.
	Violations, Allowed bool
	// Text keeps only paths containing it (case-insensitive).
	Text string
}

// DefaultFilter shows every change.
func DefaultFilter() Filter {
	return Filter{Added: true, Removed: true, Changed: true, Violations: true, Allowed: true}
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

// node is a tree node: a folder, a change, or both (a changed directory).
type node struct {
	name     string
	children []string
	change   int // index into the report's changes, -1 for a pure folder
	// below counts the visible changes in the subtree (itself excluded) and
	// how many of them are violations.
	below, belowViolations int
}

// model is the filtered view of a report's changes: a flat list in path order
// and a tree of folders. It is rebuilt on every filter or allowlist change;
// with tens of thousands of changes that takes milliseconds.
type model struct {
	r       *report.Report
	lower   []string // lower-cased paths, for the text filter
	visible []int    // indices into r.Changes, in path order
	pos     map[int]int
	nodes   map[string]*node // by node id (the path; "" is the root)
	byIdx   map[int]string   // change index -> node id
	ren     renames          // one row a rename (rename.go)
}

func newModel(r *report.Report) *model {
	m := &model{r: r, ren: newRenames(r)}
	m.lower = make([]string, len(r.Changes))
	for i := range r.Changes {
		m.lower[i] = strings.ToLower(r.Changes[i].Path)
	}
	return m
}

func (m *model) match(f *Filter, i int) bool {
	c := &m.r.Changes[i]
	if !f.kindOn(c.Kind) {
		return false
	}
	if c.Allowed && !f.Allowed || !c.Allowed && !f.Violations {
		return false
	}
	return f.Text == "" || strings.Contains(m.lower[i], strings.ToLower(f.Text))
}

// apply recomputes the visible changes and, when tree is set, the tree.
func (m *model) apply(f Filter, tree bool) {
	m.visible = m.visible[:0]
	for i := range m.r.Changes {
		if !m.hidden(i) && m.matchRow(&f, i) {
			m.visible = append(m.visible, i)
		}
	}
	m.pos = make(map[int]int, len(m.visible))
	for p, i := range m.visible {
		m.pos[i] = p
	}
	m.nodes, m.byIdx = nil, nil
	if tree {
		m.buildTree()
	}
}

func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func baseOf(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

func (m *model) buildTree() {
	m.nodes = map[string]*node{"": {change: -1}}
	m.byIdx = make(map[int]string, len(m.visible))
	linked := make(map[string]bool, len(m.visible))
	get := func(id string) *node {
		if n, ok := m.nodes[id]; ok {
			return n
		}
		n := &node{name: baseOf(id), change: -1}
		m.nodes[id] = n
		return n
	}
	for _, i := range m.visible {
		c := &m.r.Changes[i]
		id := c.Path
		get(id).change = i
		m.byIdx[i] = id
		for child := id; child != ""; {
			parent := parentOf(child)
			pn := get(parent)
			pn.below++
			if !m.allowed(i) {
				pn.belowViolations++
			}
			if !linked[child] {
				linked[child] = true
				pn.children = append(pn.children, child)
			}
			child = parent
		}
	}
	for _, n := range m.nodes {
		if len(n.children) > 1 {
			kids := n.children
			sort.Slice(kids, func(a, b int) bool {
				fa, fb := len(m.nodes[kids[a]].children) > 0, len(m.nodes[kids[b]].children) > 0
				if fa != fb {
					return fa
				}
				return naturalLess(kids[a], kids[b])
			})
		}
	}
}

// treeOrder lists the change indices in the order the tree shows them
// (depth first, folders first), which is the order keyboard navigation and
// n / p follow in tree mode.
func (m *model) treeOrder() []int {
	out := make([]int, 0, len(m.visible))
	var walk func(id string)
	walk = func(id string) {
		n := m.nodes[id]
		if n.change >= 0 {
			out = append(out, n.change)
		}
		for _, k := range n.children {
			walk(k)
		}
	}
	walk("")
	return out
}

// naturalLess orders names as people do: "mod2.o" before "mod10.o".
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
