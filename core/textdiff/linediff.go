package textdiff

import (
	"context"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/lcs"
)

// maxRefine bounds how deep lineEdits re-diffs what the LCS left coarse.
const maxRefine = 64

// lineEdits returns the line edits from old to new for udiff's unified
// writer. The LCS search (lcs.DiffLines) stops after 50 differences and
// covers the rest of the file with one replacement: 49 edited lines of a
// file of 10,000 would show as 4,900 lines removed and added. Each such
// block is diffed again, as deep as maxRefine, so that every difference is
// found. It stops with ctx's error.
func lineEdits(ctx context.Context, old, new string) ([]udiff.Edit, error) {
	a, b := splitLines(old), splitLines(new)
	ds, err := refine(ctx, a, b, 0, 0, lcs.DiffLines(a, b), 0)
	if err != nil {
		return nil, err
	}
	offs := make([]int, len(a)+1)
	for i, l := range a {
		offs[i+1] = offs[i] + len(l)
	}
	edits := make([]udiff.Edit, len(ds))
	for i, d := range ds {
		edits[i] = udiff.Edit{Start: offs[d.Start], End: offs[d.End], New: strings.Join(b[d.ReplStart:d.ReplEnd], "")}
	}
	return edits, nil
}

// refine re-diffs the blocks of ds (diffs of a and b) that replace more
// than one line by more than one line, and returns the diffs with offsets
// ao and bo added.
func refine(ctx context.Context, a, b []string, ao, bo int, ds []lcs.Diff, depth int) ([]lcs.Diff, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]lcs.Diff, 0, len(ds))
	for _, d := range ds {
		if d.End-d.Start > 1 && d.ReplEnd-d.ReplStart > 1 && depth < maxRefine {
			sa, sb := a[d.Start:d.End], b[d.ReplStart:d.ReplEnd]
			sub := lcs.DiffLines(sa, sb)
			if !(len(sub) == 1 && sub[0] == lcs.Diff{Start: 0, End: len(sa), ReplStart: 0, ReplEnd: len(sb)}) {
				r, err := refine(ctx, sa, sb, ao+d.Start, bo+d.ReplStart, sub, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, r...)
				continue
			}
		}
		out = append(out, lcs.Diff{Start: d.Start + ao, End: d.End + ao, ReplStart: d.ReplStart + bo, ReplEnd: d.ReplEnd + bo})
	}
	return out, nil
}

// splitLines splits s after each newline; a last line without one is kept.
func splitLines(s string) []string {
	ls := strings.SplitAfter(s, "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// unifiedDiff is udiff.Unified with lineEdits: every difference found.
func unifiedDiff(ctx context.Context, labelA, labelB, old, new string) (udiff.UnifiedDiff, error) {
	edits, err := lineEdits(ctx, old, new)
	if err != nil {
		return udiff.UnifiedDiff{}, err
	}
	return udiff.ToUnifiedDiff(labelA, labelB, old, edits, udiff.DefaultContextLines)
}
