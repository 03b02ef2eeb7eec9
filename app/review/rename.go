package review

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/quote"
)

// A rename (report.Renames: a removed file and an added one of the same
// or a 90%-alike content) is one row of the list and tree, "old → new",
// at the new path: the removed change has no row of its own. The row is a
// violation when either path is (the allowlist judges each), and its detail
// shows both decisions and the diff from the old content.

// renames pairs the report's rename changes by index.
type renames struct {
	from map[int]int // added change -> removed change
	to   map[int]int // removed change -> added change
	info map[int]textdiff.Rename
}

func newRenames(r *report.Report) renames {
	rn := renames{from: map[int]int{}, to: map[int]int{}, info: map[int]textdiff.Rename{}}
	rs := r.Renames()
	if len(rs) == 0 {
		return rn
	}
	type key struct {
		path string
		kind diff.Kind
	}
	idx := make(map[key]int, len(r.Changes))
	for i := range r.Changes {
		if k := r.Changes[i].Kind; k == diff.Added || k == diff.Removed {
			idx[key{r.Changes[i].Path, k}] = i
		}
	}
	for _, x := range rs {
		a, okA := idx[key{x.To, diff.Added}]
		b, okB := idx[key{x.From, diff.Removed}]
		if okA && okB {
			rn.from[a], rn.to[b], rn.info[a] = b, a, x
			// A report that found its renames anew (reopened from the
			// history, which keeps no rename fields; an older report)
			// records them, so the rows say "renamed" as for a fresh run.
			if add, rem := &r.Changes[a], &r.Changes[b]; add.RenamedFrom == "" && rem.RenamedTo == "" {
				add.RenamedFrom, add.Similarity, add.RenameDiff = x.From, x.Similarity, x.Diff
				rem.RenamedTo, rem.Similarity = x.To, x.Similarity
			}
		}
	}
	return rn
}

// hidden reports whether change i has no row of its own: the removed path
// of a rename.
func (m *model) hidden(i int) bool {
	_, ok := m.ren.to[i]
	return ok
}

// allowed reports whether change i's row is allowed: for a rename, both of
// its paths.
func (m *model) allowed(i int) bool {
	c := &m.r.Changes[i]
	if j, ok := m.ren.from[i]; ok {
		return c.Allowed && m.r.Changes[j].Allowed
	}
	return c.Allowed
}

// rowOf returns the row change i is shown in (a rename's removed path is
// shown in its added path's row).
func (m *model) rowOf(i int) int {
	if j, ok := m.ren.to[i]; ok {
		return j
	}
	return i
}

// matchRow reports whether f shows row i: for a rename, when either of its
// paths matches.
func (m *model) matchRow(f *Filter, i int) bool {
	if m.match(f, i) {
		return true
	}
	j, ok := m.ren.from[i]
	return ok && m.match(f, j)
}

// rowCount is the number of rows the report's changes take.
func (m *model) rowCount() int { return len(m.r.Changes) - len(m.ren.to) }

// rowChange is what row i shows: the change itself, or for a rename a copy
// of its added change that is allowed only when both paths are, with label
// "old → new" (the tree's label: the names alone when both lie in one
// folder, else the old path and the new name).
func (m *model) rowChange(i int, tree bool) (*diff.Change, string) {
	c := &m.r.Changes[i]
	label := c.Path
	if tree {
		label = baseOf(c.Path)
	}
	j, ok := m.ren.from[i]
	if !ok {
		return c, label
	}
	old := m.r.Changes[j]
	cp := *c
	cp.Kind = diff.Changed // drawn as a change of one file, in its colour
	cp.Allowed = c.Allowed && old.Allowed
	if !cp.Allowed && c.Allowed {
		cp.Rule = old.Rule
	}
	switch {
	case !tree:
		label = quote.Path(old.Path) + renameArrow + quote.Path(c.Path)
	case parentOf(old.Path) == parentOf(c.Path):
		label = quote.Path(baseOf(old.Path)) + renameArrow + quote.Path(baseOf(c.Path))
	default:
		label = quote.Path(old.Path) + renameArrow + quote.Path(baseOf(c.Path))
	}
	return &cp, label
}

// renameArrow joins a rename's old and new names in its row label.
const renameArrow = " → "

// renameSegments draws a rename row's label ("old → new") in the style of
// seg, the arrow in a segment of its own (see arrow: its font has no
// space).
func renameSegments(seg *widget.TextSegment, label string) []widget.RichTextSegment {
	old, cur, ok := strings.Cut(label, renameArrow)
	if !ok {
		return []widget.RichTextSegment{&widget.TextSegment{Text: label, Style: seg.Style}}
	}
	part := func(s string) *widget.TextSegment { return &widget.TextSegment{Text: s, Style: seg.Style} }
	return []widget.RichTextSegment{part(old), part(" "), part("→"), part(" "), part(cur)}
}

// renameBadge is a rename row's badge: "renamed", with its similarity when
// edited.
func renameBadge(c *diff.Change) string {
	if c.Similarity > 0 && c.Similarity < 100 {
		return fmt.Sprintf("renamed, %d%% alike", c.Similarity)
	}
	return "renamed"
}

// showRename displays the rename whose added change is i and removed
// change j: both paths, each one's decision, the metadata from the old
// file to the new, and the diff from the old content (a card for the same
// content).
func (d *detail) showRename(i, j int) {
	r := d.v.r
	add, rem := &r.Changes[i], &r.Changes[j]
	rn := d.v.m.ren.info[i]
	d.change, d.folder = i, ""
	th := d.v.Theme()
	allowed := add.Allowed && rem.Allowed
	name := style.Changed
	if allowed {
		name = style.Allowed
	}
	d.icon.SetResource(style.Colored(theme.ContentRedoIcon(), name))
	mono := fyne.TextStyle{Bold: true, Monospace: true}
	pathStyle := widget.RichTextStyle{SizeName: theme.SizeNameSubHeadingText, ColorName: name, TextStyle: mono}
	d.title.Segments = append(pathSegments(quote.Path(rem.Path), pathStyle),
		&widget.TextSegment{Text: " ", Style: widget.RichTextStyle{SizeName: theme.SizeNameSubHeadingText, Inline: true}},
		&widget.TextSegment{Text: "→", Style: widget.RichTextStyle{SizeName: theme.SizeNameSubHeadingText, ColorName: name, Inline: true}},
		&widget.TextSegment{Text: " ", Style: widget.RichTextStyle{SizeName: theme.SizeNameSubHeadingText, Inline: true}})
	d.title.Segments = append(d.title.Segments, pathSegments(quote.Path(add.Path), pathStyle)...)
	d.title.Refresh()

	what := "RENAMED"
	if rn.Similarity < 100 {
		what += fmt.Sprintf(" (%d%% alike)", rn.Similarity)
	} else {
		what += " (same content)"
	}
	st := []widget.RichTextSegment{seg(what, style.Changed, fyne.TextStyle{Bold: true}),
		seg("   Each path is judged on its own:", style.Muted, fyne.TextStyle{})}
	for _, side := range []struct {
		word string
		c    *diff.Change
	}{{"removed", rem}, {"added", add}} {
		st = append(st, &widget.TextSegment{Style: widget.RichTextStyleParagraph}, code(quote.Path(side.c.Path)), seg(" ("+side.word+"): ", style.Muted, fyne.TextStyle{}))
		st = append(st, decision(side.c)...)
	}
	d.status.Segments = st
	d.status.Refresh()

	d.suggest = nil
	for _, c := range []*diff.Change{rem, add} {
		if !c.Allowed {
			d.suggest = append(d.suggest, suggestions(c)...)
		}
	}
	d.showAllowButton()
	both := diff.Change{Path: add.Path, Kind: diff.Changed, Before: rem.Before, After: add.After}
	d.setMeta(metaRows(th, &both), metaSummary(both.Before, both.After, style.KindColor(diff.Changed)))
	if full := d.bar.fullDiff(i); full != "" {
		d.diff.setDiff(full)
		d.setBody(d.bar.wrap(d.diff, true))
	} else if rn.Diff != "" {
		d.diff.setDiff(rn.Diff)
		d.setBody(d.bar.wrap(d.diff, true))
	} else {
		d.diff.SetLines(nil)
		d.bar.update()
		text := "Same content: the file was moved from " + quote.Path(rem.Path) + " to " + quote.Path(add.Path) + "."
		if rn.Similarity < 100 {
			text = fmt.Sprintf("%d%% alike; the diff from the old content was not kept.", rn.Similarity)
		}
		t := widget.NewRichText(seg(text, "", fyne.TextStyle{Bold: true}))
		t.Wrapping = fyne.TextWrapWord
		bg := canvas.NewRectangle(style.Color(th, theme.ColorNameInputBackground))
		bg.CornerRadius = 4
		d.setBody(container.NewStack(bg, container.NewPadded(t)))
	}
	d.root.Refresh()
}
