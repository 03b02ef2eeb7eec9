package report

import (
	"strconv"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/quote"
)

// Renames returns the report's renames: those recorded on its changes
// (textdiff.MarkRenames), or, for a report without any (written by an older
// diffgate, or reopened from the history), those found from the hashes and
// from the contents the changes' text diffs hold.
func (r *Report) Renames() []textdiff.Rename {
	var out []textdiff.Rename
	for i := range r.Changes {
		c := &r.Changes[i]
		if c.Kind == diff.Added && c.RenamedFrom != "" {
			out = append(out, textdiff.Rename{From: c.RenamedFrom, To: c.Path, Similarity: c.Similarity, Diff: c.RenameDiff})
		}
	}
	if out != nil {
		return out
	}
	return textdiff.FindRenames(r.Changes)
}

// renameNote is what the reports say of one path of a rename: "renamed to
// NEW" for the removed one, "renamed from OLD" for the added one (with the
// similarity of a rename with edits: "renamed from OLD, 96% alike"), and
// for the added one of a rename with edits, the diff from the old content.
type renameNote struct {
	text, diff string
	// shownWith, set on the removed half of a rename and on the added half
	// of a rename with the same content, says why the change shows no
	// diff of its own: the content is the other half's (a rename is one
	// file, not a removal and an addition of its whole text).
	shownWith string
}

// diffToShow is the diff a report shows for c: a rename's diff from the
// old file for the added half of a rename with edits (from is then set),
// none for the removed half or a rename without edits (why says so), else
// c's own text diff.
func diffToShow(c *diff.Change, notes map[string]renameNote) (td string, from bool, why string) {
	rn, ok := notes[c.Path]
	switch {
	case !ok:
		return c.TextDiff, false, ""
	case rn.diff != "":
		return rn.diff, true, ""
	case rn.shownWith != "":
		return "", false, rn.shownWith
	}
	return c.TextDiff, false, ""
}

// renameNotes maps each path of a rename to its note.
func (r *Report) renameNotes() map[string]renameNote {
	rs := r.Renames()
	if len(rs) == 0 {
		return nil
	}
	m := make(map[string]renameNote, 2*len(rs))
	for _, rn := range rs {
		alike := ""
		if rn.Similarity < 100 {
			alike = ", " + strconv.Itoa(rn.Similarity) + "% alike"
		}
		from := renameNote{text: "renamed to " + quote.Path(rn.To) + alike,
			shownWith: "no text diff: renamed to " + quote.Path(rn.To) + "; its diff there shows what changed"}
		to := renameNote{text: "renamed from " + quote.Path(rn.From) + alike, diff: rn.Diff}
		if rn.Similarity == 100 {
			from.shownWith = "no text diff: renamed to " + quote.Path(rn.To) + " with the same content"
			to.shownWith = "no text diff: renamed from " + quote.Path(rn.From) + " with the same content"
		}
		m[rn.From], m[rn.To] = from, to
	}
	return m
}

// detailWith is changeDetail led by the change's rename note, if any.
func detailWith(c *diff.Change, notes map[string]renameNote) string {
	d := changeDetail(c)
	if n, ok := notes[c.Path]; ok {
		if d == "" {
			return n.text
		}
		return n.text + ", " + d
	}
	return d
}
