package report

import (
	"fmt"
	"strings"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/count"
)

// DiffCoverage counts the changes of file contents a text diff could show
// (an edited, added or removed non-empty file), how many have one, and why
// the others have none (by diff_note; "" for no note).
type DiffCoverage struct {
	Content, WithDiff int
	Without           map[string]int
}

// Missing counts the content changes without a diff for want of a copy,
// of room or for their size (diff.NoteBeforeMissing), not for being binary.
func (d DiffCoverage) Missing() int {
	n := 0
	for note, k := range d.Without {
		if diff.NoteBeforeMissing(note) {
			n += k
		}
	}
	return n
}

// DiffCoverage returns the report's DiffCoverage.
func (r *Report) DiffCoverage() DiffCoverage {
	cov := DiffCoverage{Without: map[string]int{}}
	file := func(e *snapshot.Entry) bool { return e != nil && e.Type == snapshot.File }
	for i := range r.Changes {
		c := &r.Changes[i]
		switch {
		case c.Kind == diff.Added && file(c.After) && c.After.Size > 0,
			c.Kind == diff.Removed && file(c.Before) && c.Before.Size > 0,
			c.Kind == diff.Changed && file(c.Before) && file(c.After) && c.Has(diff.Content):
		default:
			continue
		}
		cov.Content++
		if c.TextDiff != "" {
			cov.WithDiff++
		} else {
			cov.Without[c.DiffNote]++
		}
	}
	return cov
}

// noteWords are the short reasons of Summary, in its order.
var noteWords = []struct{ note, words string }{
	{diff.NoteBudget, "past the run's budget"}, {diff.NoteKeepBudget, "before-content over the keep budget"},
	{diff.NoteNotKept, "before-content not kept"},
	{diff.NoteTooLarge, "too large"}, {diff.NoteBinary, "binary"}, {"", "without a reason recorded (an older report)"},
}

// noteWordsOf is a diff_note in a few words.
func noteWordsOf(note string) string {
	for _, w := range noteWords {
		if w.note == note {
			return w.words
		}
	}
	return note
}

// Summary says in one line how many content changes have a text diff and
// why the others do not ("273 of 4,788 content changes have a text diff;
// 4,515 past the run's budget"); "" when every one has a diff.
func (d DiffCoverage) Summary() string {
	if d.WithDiff == d.Content {
		return ""
	}
	var why []string
	for _, w := range noteWords {
		if n := d.Without[w.note]; n > 0 {
			why = append(why, fmt.Sprintf("%s %s", count.Digits(n), w.words))
		}
	}
	return fmt.Sprintf("%s of %s content %s have a text diff; %s", count.Digits(d.WithDiff), count.Digits(d.Content),
		count.Word(d.Content, "change"), strings.Join(why, ", "))
}
