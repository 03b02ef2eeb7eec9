package report

import (
	"cmp"
	"slices"

	"github.com/diffgate/diffgate/core/diff"
)

// Ranks of a change (Rank): what a reviewer must read first comes first in
// every report, in the app, and in the run's budget for diffs.
const (
	RankRisk    = iota // a risky change (diff.Risk)
	RankEdit           // a change to a file that existed before (a rename too)
	RankRemoved        // a removal
	RankAdded          // an added file
	// Ranks is the number of ranks.
	Ranks
)

// Rank is c's rank: risks, then changes to what existed before, then
// removals, then additions.
func Rank(c *diff.Change) int {
	switch {
	case c.Risk != "":
		return RankRisk
	case c.Kind == diff.Changed || c.RenamedFrom != "" || c.RenamedTo != "":
		return RankEdit
	case c.Kind == diff.Removed:
		return RankRemoved
	}
	return RankAdded
}

// compareRank orders two changes: violations before allowed changes, then
// by Rank; 0 for two of the same standing (their order stays).
func compareRank(a, b *diff.Change) int {
	if a.Allowed != b.Allowed {
		if !a.Allowed {
			return -1
		}
		return 1
	}
	return cmp.Compare(Rank(a), Rank(b))
}

// RankOrder returns the indices of cs in the order reports and the diff
// budget take them: violations first, each part by Rank, the report's
// order (by path) within a rank.
func RankOrder(cs []diff.Change) []int {
	order := make([]int, len(cs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return compareRank(&cs[a], &cs[b]) })
	return order
}
