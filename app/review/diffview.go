package review

import (
	"image/color"
	"strconv"
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/report"
)

// LineKind classifies a line of a unified diff.
type LineKind int

// Line kinds.
const (
	LineContext LineKind = iota
	LineAdded
	LineRemoved
	LineHunk   // @@ -a,b +c,d @@
	LineHeader // --- a/x, +++ b/x
	LineNote   // \ No newline at end of file
	LineCut    // … cut: 3 more added lines (report.IsCutLine): no line numbers
)

// DiffLine is one line of a unified diff with its line numbers in the old
// and new file (0 when the line has none there).
type DiffLine struct {
	Kind     LineKind
	Old, New int
	// Text is the line with its marker, tabs expanded and control
	// characters made visible.
	Text string
	// Tag is free for the host's own use (e.g. to tell stderr from stdout
	// in ColorFor).
	Tag int
}

const tabWidth = 4

// ParseUnified splits a unified diff into lines, numbering them from the
// hunk headers.
func ParseUnified(s string) []DiffLine {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	raw := strings.Split(s, "\n")
	out := make([]DiffLine, 0, len(raw))
	oldNo, newNo := 0, 0
	inHunk := false
	for _, l := range raw {
		d := DiffLine{Text: printable(l)}
		switch {
		case strings.HasPrefix(l, "@@"):
			d.Kind = LineHunk
			oldNo, newNo = hunkStart(l)
			inHunk = true
		case !inHunk && (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ")):
			d.Kind = LineHeader
		case strings.HasPrefix(l, "\\"):
			d.Kind = LineNote
		case report.IsCutLine(l):
			d.Kind = LineCut
			o, n := report.CutSkips(l)
			oldNo, newNo = oldNo+o, newNo+n
		case strings.HasPrefix(l, "+"):
			d.Kind, d.New = LineAdded, newNo
			newNo++
		case strings.HasPrefix(l, "-"):
			d.Kind, d.Old = LineRemoved, oldNo
			oldNo++
		default:
			d.Kind, d.Old, d.New = LineContext, oldNo, newNo
			oldNo++
			newNo++
		}
		out = append(out, d)
	}
	return out
}

// hunkStart reads the first line numbers from "@@ -a,b +c,d @@".
func hunkStart(h string) (oldNo, newNo int) {
	for _, f := range strings.Fields(h) {
		if len(f) < 2 || (f[0] != '-' && f[0] != '+') {
			continue
		}
		n, _ := strconv.Atoi(strings.SplitN(f[1:], ",", 2)[0])
		if f[0] == '-' {
			oldNo = n
		} else {
			newNo = n
		}
	}
	return oldNo, newNo
}

// printable expands tabs and shows control characters and invalid UTF-8 as
// escapes, so a line renders on one row in a monospace font.
func printable(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	col := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
			col += 4
		case r == '\t':
			pad := tabWidth - col%tabWidth
			b.WriteString(strings.Repeat(" ", pad))
			col += pad
		case r < 0x20 || r == 0x7f:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			col += len(q) - 2
		default:
			b.WriteRune(r)
			col++
		}
		i += n
	}
	return b.String()
}

// DiffView shows a unified diff in monospace with old and new line numbers:
// added lines green, removed lines red, @@ hunk headers muted. Only the rows
// in view are drawn, so long diffs scroll smoothly. It takes keyboard focus
// (Enter in the change list): arrows and Page Up/Down scroll, Escape goes back.
type DiffView struct {
	widget.BaseWidget

	// OnEscape is called when the reviewer presses Escape while it has focus.
	OnEscape func()
	// OnRune receives typed characters (n / p navigation) while focused.
	OnRune func(r rune)
	// NoGutter hides the line-number columns (for plain logs).
	NoGutter bool
	// ColorFor, when set, overrides the text and background color names
	// of a line ("" background for none).
	ColorFor func(l DiffLine) (text, background fyne.ThemeColorName)

	lines   []DiffLine
	maxCols int
	focused bool
	scroll  *container.Scroll
	content *diffContent
}

// NewDiffView returns an empty diff view.
func NewDiffView() *DiffView {
	v := &DiffView{}
	v.content = &diffContent{view: v}
	v.content.ExtendBaseWidget(v.content)
	v.scroll = container.NewScroll(v.content)
	v.scroll.OnScrolled = func(fyne.Position) { v.content.Refresh() }
	v.ExtendBaseWidget(v)
	return v
}

// SetDiff shows the unified diff text (may be empty).
func (v *DiffView) SetDiff(unified string) {
	v.SetLines(ParseUnified(unified))
}

// SetLines shows already parsed lines.
func (v *DiffView) SetLines(lines []DiffLine) {
	v.lines = lines
	v.maxCols = 0
	for _, l := range lines {
		if n := utf8.RuneCountInString(l.Text); n > v.maxCols {
			v.maxCols = n
		}
	}
	v.scroll.ScrollToOffset(fyne.Position{})
	v.content.Refresh()
	v.scroll.Refresh()
}

// Lines returns the lines shown.
func (v *DiffView) Lines() []DiffLine { return v.lines }

// Text returns the lines shown, joined by newlines.
func (v *DiffView) Text() string {
	var b strings.Builder
	for i, l := range v.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.Text)
	}
	return b.String()
}

// Append adds lines at the end, keeps at most maxLines (0: no bound) by
// dropping the oldest, and follows the end when the view was already there.
func (v *DiffView) Append(lines []DiffLine, maxLines int) {
	if len(lines) == 0 {
		return
	}
	follow := v.atEnd()
	v.lines = append(v.lines, lines...)
	if over := len(v.lines) - maxLines; maxLines > 0 && over > 0 {
		v.lines = append(v.lines[:0], v.lines[over:]...)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l.Text); n > v.maxCols {
			v.maxCols = n
		}
	}
	if follow {
		v.ScrollToEnd()
	} else {
		v.content.Refresh()
	}
}

// atEnd reports whether the last line is in view.
func (v *DiffView) atEnd() bool {
	return v.scroll.Offset.Y+v.scroll.Size().Height >= v.content.Size().Height-v.content.lineHeight()
}

// ScrollToEnd shows the last lines.
func (v *DiffView) ScrollToEnd() {
	v.ScrollTo(fyne.NewPos(0, v.content.MinSize().Height))
}

// CreateRenderer implements fyne.Widget.
func (v *DiffView) CreateRenderer() fyne.WidgetRenderer {
	border := canvas.NewRectangle(color.Transparent)
	border.StrokeWidth = 2
	border.CornerRadius = 4
	bg := canvas.NewRectangle(color.Transparent)
	bg.CornerRadius = 4
	return &diffViewRenderer{v: v, bg: bg, border: border,
		objects: []fyne.CanvasObject{bg, v.scroll, border}}
}

type diffViewRenderer struct {
	v          *DiffView
	bg, border *canvas.Rectangle
	objects    []fyne.CanvasObject
}

func (r *diffViewRenderer) Layout(s fyne.Size) {
	for _, o := range r.objects {
		o.Resize(s)
		o.Move(fyne.Position{})
	}
}

func (r *diffViewRenderer) MinSize() fyne.Size { return fyne.NewSize(120, 80) }

func (r *diffViewRenderer) Refresh() {
	r.bg.FillColor = style.ColorFor(r.v, theme.ColorNameInputBackground)
	r.border.StrokeColor = color.Transparent
	if r.v.focused {
		r.border.StrokeColor = style.ColorFor(r.v, theme.ColorNameFocus)
	}
	r.bg.Refresh()
	r.border.Refresh()
	r.v.content.Refresh()
}

func (r *diffViewRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *diffViewRenderer) Destroy()                     {}

// FocusGained implements fyne.Focusable.
func (v *DiffView) FocusGained() { v.focused = true; v.Refresh() }

// FocusLost implements fyne.Focusable.
func (v *DiffView) FocusLost() { v.focused = false; v.Refresh() }

// Focused reports whether the view has keyboard focus.
func (v *DiffView) Focused() bool { return v.focused }

// TypedRune implements fyne.Focusable.
func (v *DiffView) TypedRune(r rune) {
	if v.OnRune != nil {
		v.OnRune(r)
	}
}

// TypedKey implements fyne.Focusable: arrows, Page Up/Down, Home and End
// scroll; Escape hands focus back.
func (v *DiffView) TypedKey(ev *fyne.KeyEvent) {
	line := v.content.lineHeight()
	off := v.scroll.Offset
	page := v.scroll.Size().Height - line
	switch ev.Name {
	case fyne.KeyUp:
		off.Y -= line
	case fyne.KeyDown:
		off.Y += line
	case fyne.KeyLeft:
		off.X -= 4 * v.content.charWidth()
	case fyne.KeyRight:
		off.X += 4 * v.content.charWidth()
	case fyne.KeyPageUp:
		off.Y -= page
	case fyne.KeyPageDown, fyne.KeySpace:
		off.Y += page
	case fyne.KeyHome:
		off = fyne.Position{}
	case fyne.KeyEnd:
		off.Y = v.content.MinSize().Height
	case fyne.KeyEscape:
		if v.OnEscape != nil {
			v.OnEscape()
		}
		return
	default:
		return
	}
	v.ScrollTo(off)
}

// ScrollTo moves the view to the offset, clamped to the content.
func (v *DiffView) ScrollTo(off fyne.Position) {
	min, size := v.content.MinSize(), v.scroll.Size()
	// Size the content now: the scroll clamps against its current size,
	// which otherwise only catches up at the next frame.
	v.content.Resize(fyne.NewSize(fyne.Max(min.Width, size.Width), fyne.Max(min.Height, size.Height)))
	off.X = fyne.Max(0, fyne.Min(off.X, min.Width-size.Width))
	off.Y = fyne.Max(0, fyne.Min(off.Y, min.Height-size.Height))
	v.scroll.ScrollToOffset(off)
	v.content.Refresh()
}

// Tapped focuses the view.
func (v *DiffView) Tapped(*fyne.PointEvent) {
	if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil {
		c.Focus(v)
	}
}

// diffContent is the scrolled area; its renderer keeps row objects only for
// the rows in view.
type diffContent struct {
	widget.BaseWidget
	view *DiffView
}

func (c *diffContent) textSize() float32 { return c.Theme().Size(theme.SizeNameText) }

func (c *diffContent) charWidth() float32 {
	return fyne.MeasureText("M", c.textSize(), fyne.TextStyle{Monospace: true}).Width
}

func (c *diffContent) lineHeight() float32 {
	return fyne.MeasureText("M", c.textSize(), fyne.TextStyle{Monospace: true}).Height + 2
}

func (c *diffContent) gutterCols() int {
	if c.view.NoGutter {
		return 0
	}
	maxNo := 0
	for _, l := range c.view.lines {
		maxNo = max(maxNo, l.Old, l.New)
	}
	return max(3, len(strconv.Itoa(maxNo)))
}

func (c *diffContent) MinSize() fyne.Size {
	c.ExtendBaseWidget(c)
	cw := c.charWidth()
	pad := c.Theme().Size(theme.SizeNameInnerPadding)
	w := float32(c.view.maxCols+2)*cw + pad + c.gutterWidth()
	return fyne.NewSize(w, float32(len(c.view.lines))*c.lineHeight()+pad)
}

// gutterWidth is the width of the line-number columns (0 without them).
func (c *diffContent) gutterWidth() float32 {
	if c.view.NoGutter {
		return 0
	}
	return float32(2*c.gutterCols()+1)*c.charWidth() + 2*c.Theme().Size(theme.SizeNameInnerPadding)
}

func (c *diffContent) CreateRenderer() fyne.WidgetRenderer {
	return &diffContentRenderer{c: c}
}

type diffRow struct {
	bg            *canvas.Rectangle
	old, new, txt *canvas.Text
}

type diffContentRenderer struct {
	c       *diffContent
	rows    []*diffRow
	gutter  *canvas.Rectangle
	objects []fyne.CanvasObject
}

func (r *diffContentRenderer) Layout(fyne.Size) { r.Refresh() }

func (r *diffContentRenderer) MinSize() fyne.Size { return r.c.MinSize() }

func (r *diffContentRenderer) Objects() []fyne.CanvasObject { return r.objects }

func (r *diffContentRenderer) Destroy() {}

func (r *diffContentRenderer) Refresh() {
	c, v := r.c, r.c.view
	th := c.Theme()
	lh, cw := c.lineHeight(), c.charWidth()
	pad := th.Size(theme.SizeNameInnerPadding)
	ts := c.textSize()
	size := c.Size()
	viewH := v.scroll.Size().Height
	if viewH <= 0 {
		viewH = size.Height
	}
	first := int((v.scroll.Offset.Y - pad/2) / lh)
	first = max(0, first)
	last := min(len(v.lines), int((v.scroll.Offset.Y+viewH)/lh)+2)
	n := max(0, last-first)

	if r.gutter == nil {
		r.gutter = canvas.NewRectangle(color.Transparent)
	}
	for len(r.rows) < n {
		row := &diffRow{bg: canvas.NewRectangle(color.Transparent),
			old: canvas.NewText("", color.Black), new: canvas.NewText("", color.Black), txt: canvas.NewText("", color.Black)}
		for _, t := range []*canvas.Text{row.old, row.new, row.txt} {
			t.TextStyle = fyne.TextStyle{Monospace: true}
		}
		row.old.Alignment, row.new.Alignment = fyne.TextAlignTrailing, fyne.TextAlignTrailing
		r.rows = append(r.rows, row)
	}

	gcols := c.gutterCols()
	gutterW := c.gutterWidth()
	width := fyne.Max(size.Width, v.scroll.Size().Width)
	muted := style.Color(th, style.Muted)
	fg := style.Color(th, theme.ColorNameForeground)

	objs := make([]fyne.CanvasObject, 0, 1+4*n)
	r.gutter.FillColor = style.Tint(style.Color(th, theme.ColorNameHeaderBackground), 0xff)
	r.gutter.Move(fyne.NewPos(0, 0))
	r.gutter.Resize(fyne.NewSize(gutterW, fyne.Max(size.Height, float32(len(v.lines))*lh+pad)))
	if v.NoGutter {
		r.gutter.Resize(fyne.Size{})
	}
	objs = append(objs, r.gutter)
	for k := 0; k < n; k++ {
		i := first + k
		l := v.lines[i]
		row := r.rows[k]
		y := pad/2 + float32(i)*lh
		bgName, textName := fyne.ThemeColorName(""), theme.ColorNameForeground
		switch l.Kind {
		case LineAdded:
			bgName, textName = style.ColorNameAddedBackground, style.Added
		case LineRemoved:
			bgName, textName = style.ColorNameRemovedBackground, style.Removed
		case LineHunk:
			bgName, textName = style.ColorNameHunkBackground, style.Muted
		case LineHeader, LineNote, LineCut:
			textName = style.Muted
		}
		if v.ColorFor != nil {
			textName, bgName = v.ColorFor(l)
			if textName == "" {
				textName = theme.ColorNameForeground
			}
		}
		row.bg.FillColor = color.Transparent
		if bgName != "" {
			row.bg.FillColor = style.Color(th, bgName)
		}
		row.bg.Move(fyne.NewPos(0, y))
		row.bg.Resize(fyne.NewSize(width, lh))

		row.old.Text, row.new.Text = lineNo(l.Old), lineNo(l.New)
		if v.NoGutter {
			row.old.Text, row.new.Text = "", ""
		}
		for j, t := range []*canvas.Text{row.old, row.new} {
			t.Color, t.TextSize = muted, ts
			t.Move(fyne.NewPos(pad/2+float32(j*(gcols+1))*cw, y+1))
			t.Resize(fyne.NewSize(float32(gcols)*cw, lh))
		}
		row.txt.Text = l.Text
		row.txt.Color = style.Color(th, textName)
		if textName == theme.ColorNameForeground {
			row.txt.Color = fg
		}
		row.txt.TextStyle.Bold = l.Kind == LineHeader
		row.txt.TextSize = ts
		row.txt.Move(fyne.NewPos(gutterW+pad/2, y+1))
		row.txt.Resize(fyne.NewSize(float32(utf8.RuneCountInString(l.Text)+1)*cw, lh))
		for _, o := range []fyne.CanvasObject{row.bg, row.old, row.new, row.txt} {
			o.Refresh()
		}
		objs = append(objs, row.bg, row.old, row.new, row.txt)
	}
	// The gutter background is drawn first, the row tints over it.
	r.objects = objs
}

func lineNo(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}
