package review

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// Bounds of Load full diff, stated next to the button.
const (
	// FullDiffMax is the largest file Load full diff compares.
	FullDiffMax = textdiff.MaxFullInput
	// fullDiffHunks is how many hunks of a full diff are shown.
	fullDiffHunks = 500
	// fullDiffBytes bounds the text of a full diff shown (CutDiff).
	fullDiffBytes = 16 << 20
)

// fullDiffBound says what Load full diff does, in one line.
var fullDiffBound = fmt.Sprintf("Computed in the background: files up to %d MiB, the diff shown up to %d hunks.", FullDiffMax>>20, fullDiffHunks)

// ContentLoader returns the before and after contents of a change of r (nil
// for a side that does not exist), each checked against its SHA-256, or an
// error saying why they cannot be had. It runs off the UI goroutine and
// stops when ctx is done.
type ContentLoader func(ctx context.Context, r *report.Report, c *diff.Change) (before, after []byte, err error)

// diffBar is the strip above a diff: unified or side by side (the choice
// lasts the session), and Load full diff for a diff that the run cut short
// or could not compute, with what it is doing or did.
type diffBar struct {
	d              *detail
	root, modes    *fyne.Container
	unified, split *widget.Button
	// uniIcon and splitIcon are the modes without their labels, for a
	// narrow detail (summaryRow picks one pair).
	uniIcon, splitIcon *widget.Button
	wide, narrow       *fyne.Container
	load, cancel       *widget.Button
	status             *widget.RichText
	loading            bool
	gen                int // counts loads: a late result of an old one is dropped
	stop               context.CancelFunc
	// of is the change the last load was for: the report it came from
	// and the change's path (never its position in the list, which another
	// report reuses); note is what came of it, and full the full diff it
	// gave ("" for none).
	of         loadKey
	note, full string
	noteColor  fyne.ThemeColorName
}

// loadKey names a change across reports: the report (by identity) and the
// change's path. The zero key names none.
type loadKey struct {
	r    *report.Report
	path string
}

// keyOf is the key of change i of the report shown (zero for none).
func (b *diffBar) keyOf(i int) loadKey {
	r := b.d.v.r
	if r == nil || i < 0 || i >= len(r.Changes) {
		return loadKey{}
	}
	return loadKey{r, r.Changes[i].Path}
}

func newDiffBar(d *detail) *diffBar {
	b := &diffBar{d: d}
	b.unified = widget.NewButtonWithIcon("Unified", theme.ListIcon(), func() { b.setSplit(false) })
	b.split = widget.NewButtonWithIcon("Side by side", theme.GridIcon(), func() { b.setSplit(true) })
	b.load = widget.NewButtonWithIcon("Load full diff", theme.DownloadIcon(), func() { b.start(d.change) })
	b.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() { b.abort(); b.update() })
	b.cancel.Importance = widget.LowImportance
	b.status = widget.NewRichText()
	b.status.Wrapping = fyne.TextWrapWord
	b.uniIcon = widget.NewButtonWithIcon("", theme.ListIcon(), func() { b.setSplit(false) })
	b.splitIcon = widget.NewButtonWithIcon("", theme.GridIcon(), func() { b.setSplit(true) })
	b.wide = container.NewHBox(b.unified, b.split)
	b.narrow = container.NewHBox(b.uniIcon, b.splitIcon)
	b.narrow.Hide()
	b.modes = container.NewWithoutLayout(b.wide, b.narrow) // laid out by metaRow
	d.diff.onSplitShown = func(bool) { b.splitLabel() }
	// The modes sit on the detail's summary line (newDetail): a row of
	// their own cost the diff the 60% of the pane it needs at 1024×700.
	b.root = container.NewBorder(nil, nil, nil, container.NewHBox(b.load, b.cancel), b.status)
	b.setSplit(false)
	return b
}

// setSplit shows the diff unified or side by side.
func (b *diffBar) setSplit(on bool) {
	b.d.diff.SetSideBySide(on)
	if on && b.d.diff.Size().Width > 0 && b.d.diff.Size().Width < roomySplit {
		b.d.v.roomForSplit() // a small window: the detail takes what the other panes spare
	}
	b.unified.Importance, b.split.Importance = widget.HighImportance, widget.LowImportance
	if on {
		b.unified.Importance, b.split.Importance = widget.LowImportance, widget.HighImportance
	}
	b.uniIcon.Importance, b.splitIcon.Importance = b.unified.Importance, b.split.Importance
	for _, x := range []*widget.Button{b.unified, b.split, b.uniIcon, b.splitIcon} {
		x.Refresh()
	}
	b.splitLabel()
}

// roomySplit is the diff's width (px) below which turning side by side on
// widens the detail pane.
const roomySplit = 640

// splitLabel says on the side by side button when the pane is too narrow
// for it (the diff is then shown unified).
func (b *diffBar) splitLabel() {
	text := "Side by side"
	if b.d.diff.sideBySide() && !b.d.diff.SideBySideShown() && b.d.diff.Size().Width > 0 {
		text = "Side by side: too narrow"
	}
	if b.split.Text != text {
		b.split.SetText(text)
	}
}

// canLoad reports whether Load full diff is offered for c: the host can
// load contents, and c is a text change whose diff was cut (long lines,
// hunks left out) or not computed for its size or for want of a kept copy.
func (b *diffBar) canLoad(c *diff.Change) bool {
	if b.d.v.opts.LoadContents == nil || !isFileChange(c) {
		return false
	}
	if c.TextDiff != "" {
		return strings.Contains(c.TextDiff, "\n"+textdiff.CutPrefix) // a line or hunks left out
	}
	return diff.NoteBeforeMissing(c.DiffNote)
}

// isFileChange reports whether c is about a regular file's content (an
// added, removed or changed file).
func isFileChange(c *diff.Change) bool {
	isFile := func(e *snapshot.Entry) bool { return e != nil && e.Type == snapshot.File }
	switch c.Kind {
	case diff.Added:
		return isFile(c.After)
	case diff.Removed:
		return isFile(c.Before)
	}
	return isFile(c.Before) && isFile(c.After) && c.Has(diff.Content)
}

// fullDiff returns the full diff loaded for change i, "" for none.
func (b *diffBar) fullDiff(i int) string {
	if k := b.keyOf(i); k != (loadKey{}) && b.of == k {
		return b.full
	}
	return ""
}

// reset forgets every load (a load under way is cancelled): another run or
// report opens.
func (b *diffBar) reset() {
	b.abort()
	b.of, b.note, b.full, b.noteColor = loadKey{}, "", "", ""
}

// wrap puts the bar above o, the diff (withDiff) or a card, for the change
// shown; the mode buttons only go with a diff, and a card with nothing to
// load or say gets no bar.
func (b *diffBar) wrap(o fyne.CanvasObject, withDiff bool) fyne.CanvasObject {
	b.update()
	if withDiff {
		b.modes.Show()
	} else {
		b.modes.Hide()
	}
	if !b.load.Visible() && !b.cancel.Visible() && b.Status() == "" {
		return o
	}
	return container.NewBorder(b.root, nil, nil, nil, o)
}

// update shows the bar for the change shown: a load under way, what the
// last load of this change gave, or Load full diff with its bound.
func (b *diffBar) update() {
	i := b.d.change
	var c *diff.Change
	if r := b.d.v.r; r != nil && i >= 0 && i < len(r.Changes) {
		c = &r.Changes[i]
	}
	k := b.keyOf(i)
	if b.of != k {
		b.abort() // the selection moved on
	}
	b.load.Hide()
	b.cancel.Hide()
	switch {
	case b.loading:
		b.cancel.Show()
	case k != (loadKey{}) && b.of == k && b.note != "":
		b.setStatus(b.note, b.noteColor)
		if b.full == "" && c != nil && b.canLoad(c) {
			b.load.Show() // try again
		}
	case c != nil && b.canLoad(c):
		b.load.Show()
		b.setStatus(fullDiffBound, style.Muted)
	default:
		b.setStatus("", "")
	}
}

func (b *diffBar) setStatus(text string, c fyne.ThemeColorName) {
	b.status.Segments = nil
	if text != "" {
		b.status.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
			Style: widget.RichTextStyle{ColorName: c, SizeName: theme.SizeNameCaptionText, Inline: true}}}
	}
	b.status.Refresh()
}

// Status is what the bar says (the bound, the load's progress or result).
func (b *diffBar) Status() string {
	if len(b.status.Segments) == 0 {
		return ""
	}
	return b.status.Segments[0].Textual()
}

// start loads change i's contents and computes its full diff off the UI
// goroutine; the outcome is shown through fyne.Do, unless the selection
// moved on (which cancels the load) or another load started.
func (b *diffBar) start(i int) {
	v := b.d.v
	if v.r == nil || i < 0 || i >= len(v.r.Changes) || v.opts.LoadContents == nil {
		return
	}
	b.abort()
	r, c := v.r, v.r.Changes[i]
	ctx, stop := context.WithCancel(context.Background())
	b.gen++
	gen := b.gen
	b.stop, b.loading, b.of, b.note, b.full = stop, true, b.keyOf(i), "", ""
	b.setStatus(fmt.Sprintf("Loading the full diff of %s…", quote.Path(c.Path)), style.Muted)
	b.update()
	b.d.root.Refresh()
	load, do := v.opts.LoadContents, b.d.do
	go func() {
		defer stop()
		before, after, err := load(ctx, r, &c)
		var d string
		var hunks int
		if err == nil {
			d, hunks, err = textdiff.Full(ctx, before, after, c.Path, fullDiffHunks, fullDiffBytes)
		}
		do(func() {
			if gen != b.gen {
				return // cancelled, or another load started
			}
			b.stop, b.loading = nil, false
			b.finish(d, hunks, err)
		})
	}()
}

// finish keeps a load's outcome and shows it.
func (b *diffBar) finish(d string, hunks int, err error) {
	b.noteColor = style.Muted
	switch {
	case errors.Is(err, context.Canceled):
		b.note = "Cancelled."
	case err != nil:
		b.note, b.noteColor = "Full diff unavailable: "+err.Error()+".", style.FailColor
	case d == "":
		b.note = "The full diff is empty: the two contents are the same."
	case hunks > fullDiffHunks:
		b.note, b.full = fmt.Sprintf("Full diff: the first %d of %d hunks.", fullDiffHunks, hunks), d
	default:
		b.note, b.full = fmt.Sprintf("Full diff: %s.", count.Grouped(hunks, "hunk")), d
	}
	if i := b.d.change; i >= 0 && b.keyOf(i) == b.of {
		b.d.show(i)
	}
}

// abort cancels a load under way.
func (b *diffBar) abort() {
	if b.stop != nil {
		b.stop()
		b.stop = nil
	}
	if b.loading {
		b.loading = false
		b.gen++
		b.note, b.noteColor = "Cancelled.", style.Muted
	}
}

// diffStatus is what the bar above the detail's diff says ("" for nothing).
func (v *View) diffStatus() string { return v.detail.bar.Status() }

// SetSideBySide shows the detail's diffs side by side (or unified), as the
// diff bar's toggle does.
func (v *View) SetSideBySide(on bool) { v.detail.bar.setSplit(on) }
