package report

import (
	"slices"
	"strings"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/internal/count"
)

// The roll-up rule: which folders of changes are one row with their counts
// instead of a row per change. The app's tree (a folder that starts
// collapsed) and the HTML and Markdown reports (RollUpList) follow it.

// RollUpMin is the number of changes from which a folder whose changes
// share a kind or a verdict, none of them risky, rolls up.
const RollUpMin = 50

// RollUpListMin is the number of changes from which a report's list (its
// violations, or its allowed changes) rolls folders up: a shorter list
// shows each change with its diff.
const RollUpListMin = 100

// Tally counts the changes of a folder for its roll-up row.
type Tally struct {
	Added, Removed, Changed int
	// Violations counts the changes the allowlist does not allow, Risky
	// the violations that carry a risk, Edits the violations that change
	// a file that existed before (RankEdit: a rename too).
	Violations, Risky, Edits int
}

// Total is the number of changes counted.
func (t *Tally) Total() int { return t.Added + t.Removed + t.Changed }

// Add counts c.
func (t *Tally) Add(c *diff.Change) {
	switch c.Kind {
	case diff.Added:
		t.Added++
	case diff.Removed:
		t.Removed++
	default:
		t.Changed++
	}
	if !c.Allowed {
		t.Violations++
		if c.Risk != diff.NoRisk {
			t.Risky++
		}
		if Rank(c) == RankEdit {
			t.Edits++
		}
	}
}

// Uniform reports whether the changes share a kind or a verdict.
func (t *Tally) Uniform() bool {
	n := t.Total()
	return t.Added == n || t.Removed == n || t.Changed == n || t.Violations == n || t.Violations == 0
}

// RollsUp reports whether folder, whose changes t counts, is one row: a
// vendor or cache tree (node_modules, .venv, ...: policy.VendorDir), a
// folder without violations, or at least RollUpMin changes that share a
// kind or a verdict, none of them a risk or an edit of a file that
// existed before (those are what a reviewer reads first: Rank).
func RollsUp(folder string, t *Tally) bool {
	if _, vendor := policy.VendorDir(folder); vendor || t.Violations == 0 {
		return true
	}
	return t.Total() >= RollUpMin && t.Uniform() && t.Risky == 0 && t.Edits == 0
}

// String is a folder row's counts: "3,301 added, violations", "12 changed,
// 2 removed, 3 violations, ⚠ 1 risky", "40 added, all allowed".
func (t *Tally) String() string {
	var parts []string
	for _, k := range []struct {
		n    int
		word string
	}{{t.Added, "added"}, {t.Changed, "changed"}, {t.Removed, "removed"}} {
		if k.n > 0 {
			parts = append(parts, count.Digits(k.n)+" "+k.word)
		}
	}
	n := t.Total()
	switch {
	case t.Violations == 0:
		parts = append(parts, "all allowed")
	case t.Violations == n && n == 1:
		parts = append(parts, "violation")
	case t.Violations == n:
		parts = append(parts, "violations")
	default:
		parts = append(parts, count.Of(t.Violations, "violation"))
	}
	if t.Risky > 0 {
		parts = append(parts, "⚠ "+count.Digits(t.Risky)+" risky")
	}
	return strings.Join(parts, ", ")
}

// ListRow is one row of a list of changes: a change of its own (Folder
// "", Changes holds it) or a rolled-up folder (Folder its path, Changes
// what it holds, in the list's order).
type ListRow struct {
	Folder  string
	Changes []*diff.Change
	Tally   Tally
	// Rules are up to 3 of the rules that allowed the folder's changes.
	Rules []string
}

// RollUpList turns a ranked list of changes into rows: a list of
// RollUpListMin changes or more rolls each folder that RollsUp (the
// shallowest one on a change's path, holding two changes or more) into one
// row, placed where its first change was; every other change is a row of
// its own.
func RollUpList(cs []*diff.Change) []ListRow {
	rows := make([]ListRow, 0, len(cs))
	if len(cs) < RollUpListMin {
		for _, c := range cs {
			rows = append(rows, ListRow{Changes: []*diff.Change{c}})
		}
		return rows
	}
	tally := map[string]*Tally{}
	for _, c := range cs {
		for _, f := range folders(c.Path) {
			t := tally[f]
			if t == nil {
				t = &Tally{}
				tally[f] = t
			}
			t.Add(c)
		}
	}
	at := map[string]int{} // a rolled-up folder's row
	for _, c := range cs {
		folder := ""
		for _, f := range folders(c.Path) {
			if t := tally[f]; t.Total() >= 2 && RollsUp(f, t) {
				folder = f
				break
			}
		}
		if folder == "" {
			rows = append(rows, ListRow{Changes: []*diff.Change{c}})
			continue
		}
		i, ok := at[folder]
		if !ok {
			i = len(rows)
			at[folder] = i
			rows = append(rows, ListRow{Folder: folder})
		}
		r := &rows[i]
		r.Changes = append(r.Changes, c)
		r.Tally.Add(c)
		if c.Rule != "" && len(r.Rules) < 3 && !slices.Contains(r.Rules, c.Rule) {
			r.Rules = append(r.Rules, c.Rule)
		}
	}
	return rows
}

// folders lists the folders a change at path may roll up into, the
// shallowest first: each parent, then path itself (a directory's own
// change belongs to its folder).
func folders(path string) []string {
	var out []string
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && i > 0 {
			out = append(out, path[:i])
		}
	}
	return append(out, path)
}
