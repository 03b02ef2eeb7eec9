package review

import (
	"fmt"
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// riskHelp explains each risk in one sentence.
var riskHelp = map[diff.Risk]string{
	diff.SymlinkEscape:  "a symlink that points outside the workspace",
	diff.HardlinkEscape: "a file with another name (a hard link) outside the workspace: writing to it changes that file too",
	diff.Setuid:         "a file that gained the setuid or setgid bit",
	diff.SpecialFile:    "a device node",
	diff.Capability:     "a file that gained file capabilities",
	diff.Automation:     "an added or changed CI workflow or git hook: something runs it later, outside the gate",
}

// detail is the pane for the selected change: what it is, the rule that
// decided it, before/after metadata and the content diff.
type detail struct {
	v *View

	icon     *widget.Icon
	title    *widget.RichText
	status   *widget.RichText
	allowBtn *widget.Button
	meta     *fyne.Container   // the before/after table (or a finding's facts)
	metaSum  *widget.RichText  // the table in one line, while it is collapsed
	metaBtn  *widget.Hyperlink // Details / Hide details: a link, a line lower than a button
	metaBar  *fyne.Container   // metaSum and metaBtn
	metaOpen bool              // the reviewer expanded the table
	body     *fyne.Container   // the diff view or a message card
	diff     *DiffView
	bar      *diffBar // unified / side by side, Load full diff
	card     *fyne.Container
	root     *fyne.Container
	top      *fyne.Container

	change  int // shown change, -1 for none
	folder  string
	suggest []suggestion
	// do runs a function on the UI goroutine (fyne.Do).
	do func(func())
}

func newDetail(v *View) *detail {
	d := &detail{v: v, change: -1, do: v.opts.Do}
	if d.do == nil {
		d.do = fyne.Do
	}
	d.icon = widget.NewIcon(nil)
	d.title = widget.NewRichText()
	d.title.Wrapping = fyne.TextWrapWord // a path wraps after a "/" (pathSegments)
	d.status = widget.NewRichText()
	d.status.Wrapping = fyne.TextWrapWord
	d.allowBtn = widget.NewButtonWithIcon("Allow…", theme.ConfirmIcon(), d.showAllowMenu)
	d.allowBtn.Importance = widget.SuccessImportance
	d.meta = container.New(&tableLayout{})
	d.metaSum = widget.NewRichText()
	d.metaSum.Truncation = fyne.TextTruncateEllipsis
	d.metaBtn = widget.NewHyperlink("Show details", nil)
	d.metaBtn.OnTapped = func() { d.setMetaOpen(!d.metaOpen) }
	d.diff = NewDiffView()
	d.diff.OnEscape = v.focusChanges
	d.diff.OnRune = func(r rune) { v.TypedRune(r) }
	d.bar = newDiffBar(d)
	// One line: the summary, Show details and the diff's modes.
	d.metaBar = container.New(&summaryRow{bar: d.bar}, style.Tight(d.metaSum), style.Tight(d.metaBtn), d.bar.modes)
	d.card = container.NewVBox()
	d.body = container.NewStack()
	head := container.NewBorder(nil, nil, container.NewGridWrap(fyne.NewSquareSize(28), d.icon),
		container.NewVBox(layout.NewSpacer(), d.allowBtn, layout.NewSpacer()), d.title)
	d.top = container.NewVBox(head, style.Tight(d.status), d.metaBar, d.meta)
	d.root = container.New(topFirst{}, d.top, d.body) // no gap: the diff needs every line at 1024×700
	d.clear()
	return d
}

func (d *detail) clear() {
	d.change, d.folder = -1, ""
	d.icon.SetResource(nil)
	d.title.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: "Select a change",
		Style: widget.RichTextStyle{SizeName: theme.SizeNameSubHeadingText, ColorName: style.Muted, Inline: true}}}
	d.title.Refresh()
	d.status.Segments = []widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleParagraph,
		Text: "Use the Up and Down keys to move through the changes, n and p to jump to the next or previous violation, Enter to open the diff."}}
	d.status.Refresh()
	d.allowBtn.Hide()
	d.setMeta(nil, nil)
	d.bar.update() // cancels a full diff under way
	d.setBody(nil)
	d.root.Refresh()
}

func (d *detail) setBody(o fyne.CanvasObject) {
	if o == nil {
		d.body.Objects = nil
	} else {
		d.body.Objects = []fyne.CanvasObject{o}
	}
	d.body.Refresh()
}

func seg(text string, colorName fyne.ThemeColorName, ts fyne.TextStyle) *widget.TextSegment {
	return &widget.TextSegment{Text: text, Style: widget.RichTextStyle{ColorName: colorName, TextStyle: ts, Inline: true}}
}

// arrow is a "→" in a segment of its own: Fyne draws the arrow from a
// fallback font that has no space glyph, so spaces must not share its run.
func arrow(colorName fyne.ThemeColorName) *widget.TextSegment {
	return seg("→", colorName, fyne.TextStyle{})
}

func code(text string) *widget.TextSegment {
	return &widget.TextSegment{Text: text, Style: widget.RichTextStyleCodeInline}
}

// decision says what the allowlist decided about c: allowed by an entry,
// denied by one, or not covered.
func decision(c *diff.Change) []widget.RichTextSegment {
	switch {
	case c.Allowed:
		return []widget.RichTextSegment{seg("Allowed by entry ", style.Muted, fyne.TextStyle{}), code(c.Rule)}
	case c.Rule != "":
		return []widget.RichTextSegment{seg("Violation: denied by entry ", style.FailColor, fyne.TextStyle{Bold: true}), code(c.Rule)}
	}
	return []widget.RichTextSegment{seg("Violation: no allowlist entry covers this change", style.FailColor, fyne.TextStyle{Bold: true})}
}

// show displays change i of the report.
func (d *detail) show(i int) {
	if j, ok := d.v.m.ren.from[i]; ok {
		d.showRename(i, j)
		return
	}
	r := d.v.r
	c := &r.Changes[i]
	d.change, d.folder = i, ""
	th := d.v.Theme()
	name := style.ChangeColor(c)
	kindName := style.KindColor(c.Kind)

	d.icon.SetResource(style.Colored(style.KindIcon(c.Kind), kindName))
	d.title.Segments = pathSegments(quote.Path(c.Path), widget.RichTextStyle{
		SizeName: theme.SizeNameSubHeadingText, ColorName: name, TextStyle: fyne.TextStyle{Bold: true, Monospace: true}})
	d.title.Refresh()

	st := []widget.RichTextSegment{seg(strings.ToUpper(string(c.Kind)), kindName, fyne.TextStyle{Bold: true})}
	if len(c.Aspects) > 0 {
		as := make([]string, len(c.Aspects))
		for k, a := range c.Aspects {
			as[k] = string(a)
		}
		st = append(st, seg(" ("+strings.Join(as, ", ")+")", kindName, fyne.TextStyle{}))
	}
	st = append(st, seg("   ", "", fyne.TextStyle{}))
	st = append(st, decision(c)...)
	if c.Risk != diff.NoRisk {
		st = append(st, &widget.TextSegment{Style: widget.RichTextStyleParagraph},
			seg("⚠ "+string(c.Risk), style.Risk, fyne.TextStyle{Bold: true}),
			seg(": "+riskHelp[c.Risk]+". Only an entry naming the risk allows it, e.g. ", style.Muted, fyne.TextStyle{}),
			code(string(c.Risk)+":"+policy.EscapeGlob(c.Path)))
	}
	d.status.Segments = st
	d.status.Refresh()

	d.suggest = nil
	if !c.Allowed {
		d.suggest = suggestions(c)
	}
	d.showAllowButton()

	d.setMeta(metaRows(th, c), metaSummary(c.Before, c.After, style.KindColor(c.Kind)))
	d.setBody(d.content(th, c))
	d.root.Refresh()
}

// showFolder displays a folder of the tree that only holds changes.
func (d *detail) showFolder(id string) {
	n := d.v.m.nodes[id]
	if n == nil {
		d.clear()
		return
	}
	d.change, d.folder = -1, id
	d.icon.SetResource(theme.FolderIcon())
	d.title.Segments = pathSegments(quote.Path(id)+"/", widget.RichTextStyle{
		SizeName: theme.SizeNameSubHeadingText, TextStyle: fyne.TextStyle{Bold: true, Monospace: true}})
	d.title.Refresh()
	colorName := style.Muted
	if n.belowViolations > 0 {
		colorName = style.FailColor
	}
	d.status.Segments = []widget.RichTextSegment{
		seg(fmt.Sprintf("%s below this folder, %s.", count.Grouped(n.below, "change"), count.Grouped(n.belowViolations, "violation")), colorName, fyne.TextStyle{Bold: n.belowViolations > 0}),
	}
	d.status.Refresh()
	d.suggest = nil
	if n.belowViolations > 0 {
		folder := policy.EscapeGlob(id) + "/"
		if policy.NeedsDotSlash(folder) {
			folder = "./" + folder
		}
		d.suggest = []suggestion{{Label: "Folder " + id + "/", Entry: folder}}
	}
	d.showAllowButton()
	d.setMeta(nil, nil)
	d.bar.update() // cancels a full diff under way
	d.setBody(nil)
	d.root.Refresh()
}

// showAllowButton shows Allow… when there is an entry to suggest and the
// view may edit the allowlist.
func (d *detail) showAllowButton() {
	if len(d.suggest) > 0 && !d.v.opts.ReadOnly {
		d.allowBtn.Show()
	} else {
		d.allowBtn.Hide()
	}
}

func (d *detail) showAllowMenu() {
	if len(d.suggest) == 0 {
		return
	}
	items := make([]*fyne.MenuItem, 0, len(d.suggest)+1)
	for _, s := range d.suggest {
		entry := s.Entry
		items = append(items, fyne.NewMenuItem(s.Label+":   "+entry, func() { d.v.Allow(entry) }))
	}
	c := fyne.CurrentApp().Driver().CanvasForObject(d.allowBtn)
	if c == nil {
		return
	}
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(d.allowBtn)
	pos.Y += d.allowBtn.Size().Height
	widget.ShowPopUpMenuAtPosition(fyne.NewMenu("", items...), c, pos)
}

// content is the body under the metadata: the diff (the full diff once
// loaded), or a card saying why there is none; above either, the diff bar.
func (d *detail) content(th fyne.Theme, c *diff.Change) fyne.CanvasObject {
	if full := d.bar.fullDiff(d.change); full != "" {
		d.diff.setDiff(full)
		return d.bar.wrap(d.diff, true)
	}
	if c.TextDiff != "" {
		d.diff.setDiff(c.TextDiff)
		return d.bar.wrap(d.diff, true)
	}
	d.diff.SetLines(nil)
	b, a := c.Before, c.After
	var lines []fyne.CanvasObject
	add := func(t *widget.RichText) { lines = append(lines, t) }
	para := func(segs ...widget.RichTextSegment) *widget.RichText {
		t := widget.NewRichText(segs...)
		t.Wrapping = fyne.TextWrapWord
		return t
	}
	isFile := func(e *snapshot.Entry) bool { return e != nil && e.Type == snapshot.File }
	// why says why a content change has no diff (the report's diff_note).
	why := func(fallback string) string {
		if n := report.DiffNoteText(c.DiffNote); n != "" {
			return n
		}
		return fallback
	}
	switch {
	case c.Has(diff.Content) && isFile(b) && isFile(a):
		add(para(seg("Content changed; "+why("no text diff (binary or large file)")+".", "", fyne.TextStyle{Bold: true})))
		add(para(seg("Size "+report.Size(b.Size)+" ", "", fyne.TextStyle{}), arrow(""),
			seg(" "+report.Size(a.Size)+" ("+signedBytes(a.Size-b.Size)+")", "", fyne.TextStyle{})))
	case c.Kind == diff.Added && isFile(a):
		text := "New file, " + report.Size(a.Size) + ". No text preview (binary, large or not kept)."
		if c.DiffNote != "" {
			text = "New file, " + report.Size(a.Size) + "; " + why("") + "."
		}
		add(para(seg(text, "", fyne.TextStyle{Bold: true})))
	case c.Kind == diff.Removed && isFile(b):
		text := "Deleted file, " + report.Size(b.Size) + "."
		if c.DiffNote != "" {
			text = "Deleted file, " + report.Size(b.Size) + "; " + why("") + "."
		}
		add(para(seg(text, "", fyne.TextStyle{Bold: true})))
	case c.Kind != diff.Changed && c.IsDir():
		text := "Directory " + string(c.Kind) + "."
		if n := d.v.m.nodes[c.Path]; n != nil && n.below > 0 {
			// The counts its row shows (the directory itself counted), then
			// what is below it: "4,601 added" and "4,600 below" agree.
			text = fmt.Sprintf("Directory %s. With what it holds: %s (the directory and %s below it).", c.Kind, n.sum.String(), count.Grouped(n.below, "change"))
		}
		add(para(seg(text, "", fyne.TextStyle{Bold: true})))
	case (a != nil && a.Type == snapshot.Symlink) || (b != nil && b.Type == snapshot.Symlink):
		segs := []widget.RichTextSegment{seg("Symlink to ", "", fyne.TextStyle{Bold: true})}
		if b != nil && b.Type == snapshot.Symlink {
			segs = append(segs, code(quote.Path(b.Target)))
		}
		if a != nil && a.Type == snapshot.Symlink {
			if len(segs) > 1 {
				segs = append(segs, seg(" ", "", fyne.TextStyle{}), arrow(style.Changed), seg(" ", "", fyne.TextStyle{}))
			}
			segs = append(segs, code(quote.Path(a.Target)))
		}
		add(para(segs...))
	case !c.Has(diff.Content) && b != nil && a != nil:
		add(para(seg("Content unchanged.", "", fyne.TextStyle{Bold: true})))
	}
	if c.Has(diff.Mode) && b != nil && a != nil {
		add(para(seg("Mode ", "", fyne.TextStyle{}),
			code(fmt.Sprintf("%s %s", b.ModeString(), report.Symbolic(b))), seg("  ", "", fyne.TextStyle{}), arrow(style.Changed), seg("  ", "", fyne.TextStyle{}),
			code(fmt.Sprintf("%s %s", a.ModeString(), report.Symbolic(a)))))
	}
	if d.v.opts.LoadContents == nil && isFileChange(c) && diff.NoteBeforeMissing(c.DiffNote) {
		add(para(seg(noFullDiff, style.Muted, fyne.TextStyle{})))
	}
	bg := canvas.NewRectangle(style.Color(th, theme.ColorNameInputBackground))
	bg.CornerRadius = 4
	return d.bar.wrap(container.NewStack(bg, container.NewPadded(container.NewVBox(lines...))), false)
}

// noFullDiff says why a view without contents (the browser's: a report
// only) offers no Load full diff.
var noFullDiff = fmt.Sprintf("A full diff needs the files themselves, which a report does not hold: open the run in the desktop app, which diffs files up to %d MiB.", FullDiffMax>>20)

// setMeta shows objs as the metadata table. With a summary (a change's
// before/after table) the table collapses to that one line, with Details to
// expand it (the diff needs the room in a small window); the choice holds
// from change to change. Without one (a finding's facts) the table shows.
func (d *detail) setMeta(objs []fyne.CanvasObject, summary []widget.RichTextSegment) {
	d.meta.Objects = objs
	if summary == nil {
		d.metaBar.Hide()
		d.meta.Show()
		d.meta.Refresh()
		return
	}
	d.metaSum.Segments = summary
	d.metaSum.Refresh()
	d.metaBar.Show()
	d.setMetaOpen(d.metaOpen)
}

// setMetaOpen expands (open) or collapses the before/after table.
func (d *detail) setMetaOpen(open bool) {
	d.metaOpen = open
	if !d.metaBar.Visible() {
		return
	}
	if open {
		d.meta.Show()
		d.metaSum.Hide()
		d.metaBtn.SetText("Hide details")
	} else {
		d.meta.Hide()
		d.metaSum.Show()
		d.metaBtn.SetText("Show details")
	}
	d.meta.Refresh()
	d.top.Refresh()
}

// metaSummary is the before/after table of entries b and a in one line
// (report.MetaRows, the table's own rows): what differs ("Size 114 B →
// 113 B", or "SHA-256 changed" at the same size), or, when nothing does,
// the values of the entry there is ("file · 114 B · 0644 rw-r--r--").
func metaSummary(b, a *snapshot.Entry, changed fyne.ThemeColorName) []widget.RichTextSegment {
	var out []widget.RichTextSegment
	sep := func() {
		if len(out) > 0 {
			out = append(out, seg("  ·  ", style.Muted, fyne.TextStyle{}))
		}
	}
	for _, r := range report.MetaChanges(b, a) {
		sep()
		out = append(out, seg(r.Label+" ", style.Muted, fyne.TextStyle{}))
		if r.Label == "SHA-256" {
			out = append(out, seg("changed", changed, fyne.TextStyle{Bold: true}))
			continue
		}
		out = append(out, seg(r.Before+" ", changed, fyne.TextStyle{Bold: true, Monospace: r.Mono}), arrow(changed),
			seg(" "+r.After, changed, fyne.TextStyle{Bold: true, Monospace: r.Mono}))
	}
	if len(out) > 0 {
		return out
	}
	if b == nil && a == nil {
		return []widget.RichTextSegment{seg("No metadata", style.Muted, fyne.TextStyle{})}
	}
	for _, r := range report.MetaRows(b, a, false) {
		v := r.After
		if a == nil {
			v = r.Before
		}
		if v != "—" && r.Label != "SHA-256" && r.Label != "Owner" {
			sep()
			out = append(out, seg(v, "", fyne.TextStyle{Monospace: r.Mono}))
		}
	}
	if b != nil && a != nil {
		sep()
		out = append(out, seg("metadata unchanged", style.Muted, fyne.TextStyle{}))
	}
	return out
}

// metaRows builds the before/after table of change c.
func metaRows(_ fyne.Theme, c *diff.Change) []fyne.CanvasObject {
	return entryRows(c.Before, c.After, style.KindColor(c.Kind), false)
}

// entryRows builds the before/after table of entries b and a (either may
// be nil: report.MetaRows), a value that differs drawn in changed; stat
// adds the rows of a stat-only record (times, inode, links: a change
// outside the workspace).
func entryRows(b, a *snapshot.Entry, changed fyne.ThemeColorName, stat bool) []fyne.CanvasObject {
	head := func(t string) fyne.CanvasObject {
		return styledText(t, style.Muted, theme.SizeNameCaptionText, fyne.TextStyle{Bold: true})
	}
	objs := []fyne.CanvasObject{head(""), head("BEFORE"), head("AFTER")}
	for _, r := range report.MetaRows(b, a, stat) {
		cell := func(v string) fyne.CanvasObject {
			colorName := fyne.ThemeColorName(theme.ColorNameForeground)
			if r.Changed {
				colorName = changed
			}
			t := widget.NewRichText(&widget.TextSegment{Text: v, Style: widget.RichTextStyle{
				ColorName: colorName, Inline: true, TextStyle: fyne.TextStyle{Monospace: r.Mono, Bold: r.Changed}}})
			t.Truncation = fyne.TextTruncateEllipsis
			return t
		}
		objs = append(objs, styledText(r.Label, style.Muted, "", fyne.TextStyle{}), cell(r.Before), cell(r.After))
	}
	for i, o := range objs {
		objs[i] = style.Tight(o)
	}
	return objs
}

func signedBytes(n int64) string {
	if n >= 0 {
		return "+" + report.Size(n)
	}
	return "−" + report.Size(-n)
}

// topFirst lays out two objects: the first at the top, as high as its
// minimum, the second below it filling the rest, with no gap between.
type topFirst struct{}

func (topFirst) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	h := objs[0].MinSize().Height
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(fyne.NewSize(s.Width, h))
	objs[1].Move(fyne.NewPos(0, h))
	objs[1].Resize(fyne.NewSize(s.Width, fyne.Max(0, s.Height-h)))
}

func (topFirst) MinSize(objs []fyne.CanvasObject) fyne.Size {
	a, b := objs[0].MinSize(), objs[1].MinSize()
	return fyne.NewSize(fyne.Max(a.Width, b.Width), a.Height+b.Height)
}

// tableLayout lays out its objects in rows of three: a label column as wide
// as its widest label, then two equal value columns.
type tableLayout struct{}

// spanMark in a row's third cell lets its second cell take both columns
// (a fact, not a before/after pair).
type spanMark struct{ *canvas.Rectangle }

func newSpanMark() spanMark { return spanMark{canvas.NewRectangle(color.Transparent)} }

func (tableLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	const pad = 8
	lw := float32(0)
	for i := 0; i < len(objs); i += 3 {
		lw = fyne.Max(lw, objs[i].MinSize().Width)
	}
	cw := fyne.Max(0, (s.Width-lw-2*pad)/2)
	y := float32(0)
	for i := 0; i+2 < len(objs); i += 3 {
		h := fyne.Max(objs[i].MinSize().Height, fyne.Max(objs[i+1].MinSize().Height, objs[i+2].MinSize().Height))
		objs[i].Move(fyne.NewPos(0, y))
		objs[i].Resize(fyne.NewSize(lw, h))
		objs[i+1].Move(fyne.NewPos(lw+pad, y))
		objs[i+1].Resize(fyne.NewSize(cw, h))
		if _, ok := objs[i+2].(spanMark); ok { // one value across both columns
			objs[i+1].Resize(fyne.NewSize(2*cw+pad, h))
		}
		objs[i+2].Move(fyne.NewPos(lw+pad+cw+pad, y))
		objs[i+2].Resize(fyne.NewSize(cw, h))
		y += h
	}
}

func (tableLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var lw, h float32
	for i := 0; i+2 < len(objs); i += 3 {
		lw = fyne.Max(lw, objs[i].MinSize().Width)
		h += fyne.Max(objs[i].MinSize().Height, fyne.Max(objs[i+1].MinSize().Height, objs[i+2].MinSize().Height))
	}
	return fyne.NewSize(lw+200, h)
}

// summaryRow lays out the detail's summary line: the summary, Show details
// and the diff's modes on the right. The modes carry their labels when the
// summary keeps summaryRoom beside them, else only their icons (a
// 1024 px window).
type summaryRow struct{ bar *diffBar }

// summaryRoom is the width the summary keeps before the modes drop their
// labels.
const summaryRoom = 200

func (m *summaryRow) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	sum, link, modes := objs[0], objs[1], objs[2]
	gap := theme.Padding() + theme.InnerPadding() // the summary and link draw over their cells (style.Tight)
	b := m.bar
	x := s.Width
	if modes.Visible() {
		wide := b.wide.MinSize()
		compact := s.Width-wide.Width-link.MinSize().Width-2*gap < summaryRoom
		b.wide.Hidden, b.narrow.Hidden = compact, !compact
		mine := b.wide
		if compact {
			mine = b.narrow
		}
		ms := mine.MinSize()
		mine.Move(fyne.NewPos(0, 0))
		mine.Resize(fyne.NewSize(ms.Width, s.Height))
		x -= ms.Width
		modes.Move(fyne.NewPos(x, 0))
		modes.Resize(fyne.NewSize(ms.Width, s.Height))
		x -= gap
	}
	lw := link.MinSize().Width
	x -= lw
	link.Move(fyne.NewPos(x, 0))
	link.Resize(fyne.NewSize(lw, s.Height))
	sum.Move(fyne.NewPos(0, 0))
	sum.Resize(fyne.NewSize(max(0, x-gap), s.Height))
}

func (m *summaryRow) MinSize(objs []fyne.CanvasObject) fyne.Size {
	sum, link, modes := objs[0].MinSize(), objs[1].MinSize(), fyne.Size{}
	if objs[2].Visible() {
		modes = m.bar.narrow.MinSize()
		modes.Height = max(modes.Height, m.bar.wide.MinSize().Height)
	}
	return fyne.NewSize(sum.Width+link.Width+modes.Width+2*(theme.Padding()+theme.InnerPadding()), max(sum.Height, link.Height, modes.Height))
}
