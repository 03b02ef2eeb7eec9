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
	"github.com/diffgate/diffgate/core/textdiff"
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
	LineCut    // … cut: 3 more added lines (textdiff.IsCutLine): no line numbers
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
	// pieces is how an added or removed line is drawn when it has
	// word-level changes or whitespace to show (nil: Text as it is); mate
	// is 1 + the index of the line it is paired with (0: none).
	pieces []piece
	mate   int
}

// piece is a part of a changed line after its marker, as drawn: its text
// (tabs expanded, control characters escaped, whitespace to show as · →
// \r), whether it is a changed word, whether it is shown whitespace, and
// its width in columns.
type piece struct {
	text          string
	changed, mark bool
	cols          int
}

// cols is the width of a line in columns.
func (l *DiffLine) cols() int {
	if l.pieces == nil {
		return utf8.RuneCountInString(l.Text)
	}
	n := 1 // the marker
	for _, p := range l.pieces {
		n += p.cols
	}
	return n
}

const tabWidth = 4

// parseUnified splits a unified diff into lines, numbering them from the
// hunk headers. The removed and added lines of each change are paired
// (textdiff.Intraline) and their changed words marked; the whitespace that
// changed, and trailing whitespace and carriage returns, are made visible
// in changed lines.
func parseUnified(s string) []DiffLine {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	raw := strings.Split(s, "\n")
	marks, pair := textdiff.Intraline(raw)
	out := make([]DiffLine, 0, len(raw))
	oldNo, newNo := 0, 0
	inHunk := false
	for i, l := range raw {
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
		case textdiff.IsCutLine(l):
			d.Kind = LineCut
			o, n := textdiff.CutSkips(l)
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
		if d.Kind == LineAdded || d.Kind == LineRemoved {
			d.pieces = drawnPieces(textdiff.Pieces(l[1:], marks[i]))
			if pair[i] >= 0 {
				d.mate = pair[i] + 1
			}
		}
		out = append(out, d)
	}
	return out
}

// drawnPieces turns a changed line's textdiff.Pieces into what is drawn, from
// column 1 (after the marker); nil when there is nothing to mark.
func drawnPieces(ps []textdiff.Piece) []piece {
	if len(ps) == 0 || len(ps) == 1 && !ps[0].Changed && !ps[0].Space {
		return nil
	}
	out := make([]piece, 0, len(ps))
	col := 1
	for _, p := range ps {
		var text string
		start := col
		if p.Space {
			var b strings.Builder
			for _, r := range p.Text {
				switch r {
				case '\t':
					pad := tabWidth - col%tabWidth
					b.WriteString("→" + strings.Repeat(" ", pad-1))
					col += pad
				case '\r':
					b.WriteString(`\r`)
					col += 2
				default:
					b.WriteString(textdiff.VisibleSpace(string(r)))
					col++
				}
			}
			text = b.String()
		} else {
			text, col = printableFrom(p.Text, col)
		}
		out = append(out, piece{text: text, changed: p.Changed, mark: p.Space, cols: col - start})
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
	p, _ := printableFrom(s, 0)
	return p
}

// printableFrom is printable for text that starts at column col; it also
// returns the column after it.
func printableFrom(s string, col int) (string, int) {
	var b strings.Builder
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
	return b.String(), col
}

// DiffView shows a unified diff in monospace with old and new line numbers:
// added lines green, removed lines red, @@ hunk headers muted, the changed
// words of an edited line in a stronger tint, and changed whitespace made
// visible. It shows the diff unified, or side by side (SetSideBySide: old
// on the left, new on the right, edited lines on one row), falling back to
// unified where the view is too narrow for two panes. Only what is in view
// is drawn, rows and columns: long diffs scroll smoothly, and a line of any
// length scrolls horizontally, the line numbers staying in place. It takes
// keyboard focus (Enter in the change list): arrows and Page Up/Down
// scroll, Escape goes back.
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
	// onSplitShown, when set, is called when side by side, asked for,
	// starts or stops being shown (the view's width decides).
	onSplitShown func(shown bool)
	splitShown   bool

	lines   []DiffLine
	maxCols int
	// stop is the change NextChange last went to (an index into
	// changeStops; -1: none yet).
	stop int
	// split asks for side by side; rows are its rows and sideCols the
	// widest line of one side (built on demand).
	split    bool
	rows     []splitRow
	sideCols int
	focused  bool
	scroll   *container.Scroll
	content  *diffContent
}

// minSplitCols is the narrowest text column (in characters) of a side by
// side pane: below it the view shows the diff unified. Each pane scrolls
// sideways; 16 lets side by side work in a 1024 px window.
const minSplitCols = 16

// NewDiffView returns an empty diff view.
func NewDiffView() *DiffView {
	v := &DiffView{stop: -1}
	v.content = &diffContent{view: v}
	v.content.ExtendBaseWidget(v.content)
	v.scroll = container.NewScroll(v.content)
	v.scroll.OnScrolled = func(fyne.Position) { v.content.Refresh() }
	v.ExtendBaseWidget(v)
	return v
}

// setDiff shows the unified diff text (may be empty).
func (v *DiffView) setDiff(unified string) {
	v.SetLines(parseUnified(unified))
}

// SetLines shows already parsed lines.
func (v *DiffView) SetLines(lines []DiffLine) {
	v.lines = lines
	v.maxCols = 0
	for i := range lines {
		v.maxCols = max(v.maxCols, lines[i].cols())
	}
	v.rows = nil
	v.stop = -1
	v.scroll.ScrollToOffset(fyne.Position{})
	v.content.Refresh()
	v.scroll.Refresh()
}

// ChangeStop is a place NextChange goes to: a line and the column (after
// the marker, from 1) of a change in it.
type ChangeStop struct{ Line, Col int }

// changeStops are the changes of the diff, in order: each changed word of
// a removed line (its paired added line has them at about the same
// place, one row below), each changed word of an added line not paired
// with a removed one, and the first line of each run of changed lines
// without marked words.
func (v *DiffView) changeStops() []ChangeStop {
	var out []ChangeStop
	for i, l := range v.lines {
		if l.Kind != LineAdded && l.Kind != LineRemoved {
			continue
		}
		if l.Kind == LineAdded && l.mate > 0 && v.lines[l.mate-1].Kind == LineRemoved {
			continue // shown with its removed line
		}
		marked := false
		col := 1
		for _, p := range l.pieces {
			if p.changed {
				out = append(out, ChangeStop{i, col})
				marked = true
			}
			col += p.cols
		}
		if !marked && (i == 0 || (v.lines[i-1].Kind != LineAdded && v.lines[i-1].Kind != LineRemoved)) {
			out = append(out, ChangeStop{i, 1})
		}
	}
	return out
}

// nextChange scrolls to the next (dir > 0) or previous change of the diff
// (changeStops), its changed words in view however far along a long line
// they are; it reports whether there was one.
func (v *DiffView) nextChange(dir int) bool {
	stops := v.changeStops()
	k := v.stop + dir
	if v.stop < 0 && dir < 0 {
		k = len(stops) - 1
	}
	if k < 0 || k >= len(stops) {
		return false
	}
	v.stop = k
	s := stops[k]
	row := s.Line
	if v.SideBySideShown() {
		for j, r := range v.splitRows() {
			if r.left == s.Line || r.right == s.Line {
				row = j
				break
			}
		}
	}
	lh, cw := v.content.lineHeight(), v.content.charWidth()
	// The change a third down the view, a few columns of what comes
	// before it on its left.
	y := float32(row)*lh - v.scroll.Size().Height/3
	x := float32(max(0, s.Col-8)) * cw
	v.ScrollTo(fyne.NewPos(x, y))
	return true
}

// Stop is the change NextChange went to last (ok false before the first).
func (v *DiffView) Stop() (s ChangeStop, ok bool) {
	stops := v.changeStops()
	if v.stop < 0 || v.stop >= len(stops) {
		return ChangeStop{}, false
	}
	return stops[v.stop], true
}

// Lines returns the lines shown.
func (v *DiffView) Lines() []DiffLine { return v.lines }

// SetSideBySide switches between the unified view (false) and side by
// side (true).
func (v *DiffView) SetSideBySide(on bool) {
	if v.split == on {
		return
	}
	v.split = on
	v.scroll.ScrollToOffset(fyne.Position{X: 0, Y: v.scroll.Offset.Y})
	v.content.Refresh()
	v.scroll.Refresh()
}

// sideBySide reports whether side by side was asked for.
func (v *DiffView) sideBySide() bool { return v.split }

// SideBySideShown reports whether the diff is shown side by side: asked
// for, and the view wide enough for two panes of minSplitCols characters.
func (v *DiffView) SideBySideShown() bool {
	if !v.split || v.NoGutter {
		return false
	}
	w := v.scroll.Size().Width
	return w <= 0 || v.content.paneTextWidth(w) >= minSplitCols*v.content.charWidth()
}

// splitRows returns the side by side rows, building them on first use.
func (v *DiffView) splitRows() []splitRow {
	if v.rows == nil {
		v.rows, v.sideCols = sideBySide(v.lines)
	}
	return v.rows
}

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
	for i := range lines {
		v.maxCols = max(v.maxCols, lines[i].cols())
	}
	v.rows = nil
	if follow {
		v.scrollToEnd()
	} else {
		v.content.Refresh()
	}
}

// atEnd reports whether the last line is in view.
func (v *DiffView) atEnd() bool {
	return v.scroll.Offset.Y+v.scroll.Size().Height >= v.content.Size().Height-v.content.lineHeight()
}

// scrollToEnd shows the last lines.
func (v *DiffView) scrollToEnd() {
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

// TypedRune implements fyne.Focusable: ] and [ go to the next and the
// previous change (NextChange); other characters go to OnRune.
func (v *DiffView) TypedRune(r rune) {
	switch r {
	case ']':
		v.nextChange(1)
		return
	case '[':
		v.nextChange(-1)
		return
	}
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

// splitRow is a row of the side by side view: the indices of the lines
// on the left (old) and right (new), -1 for none; a hunk header, file
// header, note or cut line spans both panes (full).
type splitRow struct {
	left, right int
	full        bool
}

// sideBySide lays lines out in rows: context on both sides, each change's
// removed lines on the left and added lines on the right, a removed and an
// added line that were paired (ParseUnified) on one row; it also returns
// the widest line of a side, in columns.
func sideBySide(lines []DiffLine) ([]splitRow, int) {
	var rows []splitRow
	cols := 0
	side := func(l, r int) {
		rows = append(rows, splitRow{left: l, right: r})
		for _, i := range []int{l, r} {
			if i >= 0 {
				cols = max(cols, lines[i].cols())
			}
		}
	}
	for i := 0; i < len(lines); {
		switch lines[i].Kind {
		case LineContext:
			side(i, i)
			i++
			continue
		case LineRemoved, LineAdded:
		default:
			rows = append(rows, splitRow{left: i, right: -1, full: true})
			i++
			continue
		}
		var del, add, other []int
		j := i
	block:
		for ; j < len(lines); j++ {
			switch lines[j].Kind {
			case LineRemoved:
				del = append(del, j)
			case LineAdded:
				add = append(add, j)
			case LineCut, LineNote:
				other = append(other, j)
			default:
				break block
			}
		}
		a, b := 0, 0
		for a < len(del) || b < len(add) {
			switch {
			case b >= len(add):
				side(del[a], -1)
				a++
			case a >= len(del):
				side(-1, add[b])
				b++
			case lines[del[a]].mate == add[b]+1 || lines[del[a]].mate == 0 && lines[add[b]].mate == 0:
				side(del[a], add[b]) // paired, or two unpaired lines side by side
				a, b = a+1, b+1
			case lines[del[a]].mate > add[b]+1 || lines[del[a]].mate == 0:
				side(-1, add[b]) // del[a] pairs with a later added line
				b++
			default:
				side(del[a], -1)
				a++
			}
		}
		for _, o := range other {
			rows = append(rows, splitRow{left: o, right: -1, full: true})
		}
		i = j
	}
	return rows, cols
}

// diffContent is the scrolled area; its renderer keeps objects only for the
// rows and columns in view.
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

// gutterWidth is the width of the unified view's two line-number columns
// (0 without them).
func (c *diffContent) gutterWidth() float32 {
	if c.view.NoGutter {
		return 0
	}
	return float32(2*c.gutterCols()+1)*c.charWidth() + 2*c.Theme().Size(theme.SizeNameInnerPadding)
}

// sideGutterWidth is the width of a side by side pane's line numbers.
func (c *diffContent) sideGutterWidth() float32 {
	return float32(c.gutterCols())*c.charWidth() + 2*c.Theme().Size(theme.SizeNameInnerPadding)
}

// paneTextWidth is the width left for text in a side by side pane of a
// view w wide.
func (c *diffContent) paneTextWidth(w float32) float32 {
	return w/2 - c.sideGutterWidth() - c.Theme().Size(theme.SizeNameInnerPadding)
}

// MinSize is the height of every row and the width that lets the longest
// line scroll into view: the text scrolls by columns while the gutter
// stays where it is, so the content is the view's width plus what the
// text lacks.
func (c *diffContent) MinSize() fyne.Size {
	c.ExtendBaseWidget(c)
	v := c.view
	cw := c.charWidth()
	pad := c.Theme().Size(theme.SizeNameInnerPadding)
	rows := len(v.lines)
	w := float32(v.maxCols+2)*cw + pad + c.gutterWidth()
	if v.SideBySideShown() {
		rows = len(v.splitRows())
		view := v.scroll.Size().Width
		w = view + fyne.Max(0, float32(v.sideCols+2)*cw-c.paneTextWidth(view))
	}
	return fyne.NewSize(w, float32(rows)*c.lineHeight()+pad)
}

func (c *diffContent) CreateRenderer() fyne.WidgetRenderer {
	return &diffContentRenderer{c: c}
}

// diffContentRenderer draws the rows in view from pools of rectangles and
// texts, reused on every refresh.
type diffContentRenderer struct {
	c       *diffContent
	rects   []*canvas.Rectangle
	texts   []*canvas.Text
	nr, nt  int
	objects []fyne.CanvasObject
}

func (r *diffContentRenderer) Layout(fyne.Size) { r.Refresh() }

func (r *diffContentRenderer) MinSize() fyne.Size { return r.c.MinSize() }

func (r *diffContentRenderer) Objects() []fyne.CanvasObject { return r.objects }

func (r *diffContentRenderer) Destroy() {}

// rect places the next pooled rectangle.
func (r *diffContentRenderer) rect(c color.Color, x, y, w, h float32) {
	if r.nr == len(r.rects) {
		r.rects = append(r.rects, canvas.NewRectangle(color.Transparent))
	}
	o := r.rects[r.nr]
	r.nr++
	o.FillColor = c
	o.Move(fyne.NewPos(x, y))
	o.Resize(fyne.NewSize(w, h))
	o.Refresh()
	r.objects = append(r.objects, o)
}

// text places the next pooled monospace text.
func (r *diffContentRenderer) text(s string, c color.Color, bold bool, align fyne.TextAlign, x, y, w, h float32) {
	if r.nt == len(r.texts) {
		t := canvas.NewText("", color.Black)
		t.TextStyle.Monospace = true
		r.texts = append(r.texts, t)
	}
	t := r.texts[r.nt]
	r.nt++
	t.Text, t.Color, t.TextStyle.Bold, t.Alignment = s, c, bold, align
	t.TextSize = r.c.textSize()
	t.Move(fyne.NewPos(x, y))
	t.Resize(fyne.NewSize(w, h))
	t.Refresh()
	r.objects = append(r.objects, t)
}

// lineColors are the colors a line is drawn in.
type lineColors struct {
	text, bg, word color.Color // bg and word may be nil
}

func (r *diffContentRenderer) colorsOf(th fyne.Theme, l DiffLine) lineColors {
	v := r.c.view
	bgName, textName, wordName := fyne.ThemeColorName(""), fyne.ThemeColorName(theme.ColorNameForeground), fyne.ThemeColorName("")
	switch l.Kind {
	case LineAdded:
		bgName, textName, wordName = style.ColorNameAddedBackground, style.Added, style.ColorNameAddedWordBackground
	case LineRemoved:
		bgName, textName, wordName = style.ColorNameRemovedBackground, style.Removed, style.ColorNameRemovedWordBackground
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
	lc := lineColors{text: style.Color(th, textName)}
	if bgName != "" {
		lc.bg = style.Color(th, bgName)
	}
	if wordName != "" {
		lc.word = style.Color(th, wordName)
	}
	return lc
}

// diffFrame is what one Refresh of the diff's content draws: the theme's
// measures, the visible rows and the scroll offset.
type diffFrame struct {
	th            fyne.Theme
	lh, cw, pad   float32
	viewW, height float32
	first, last   int     // the rows in view
	col0          int     // the first text column in view
	x0            float32 // the horizontal scroll offset
	muted         color.Color
	gutterBg      color.Color
	gcols         int
}

func (r *diffContentRenderer) Refresh() {
	f, split := r.frame()
	r.nr, r.nt = 0, 0
	r.objects = r.objects[:0]
	if split {
		r.drawSplit(f)
	} else {
		r.drawUnified(f)
	}
}

// frame measures what is in view; split says whether the lines show side
// by side (the view's OnSplitShown hears of a change).
func (r *diffContentRenderer) frame() (f diffFrame, split bool) {
	c, v := r.c, r.c.view
	th := c.Theme()
	f.th, f.lh, f.cw = th, c.lineHeight(), c.charWidth()
	f.pad = th.Size(theme.SizeNameInnerPadding)
	size := c.Size()
	viewW, viewH := v.scroll.Size().Width, v.scroll.Size().Height
	if viewW <= 0 {
		viewW = size.Width
	}
	if viewH <= 0 {
		viewH = size.Height
	}
	f.viewW = viewW
	off := v.scroll.Offset
	split = v.SideBySideShown()
	if split != v.splitShown {
		v.splitShown = split
		if v.onSplitShown != nil {
			v.onSplitShown(split)
		}
	}
	n := len(v.lines)
	if split {
		n = len(v.splitRows())
	}
	f.first = max(0, int((off.Y-f.pad/2)/f.lh))
	f.last = min(n, int((off.Y+viewH)/f.lh)+2)
	// The lines' text scrolls by whole columns; everything else (the line
	// numbers, and the lines that are not file content: headers, notes,
	// cuts) stays in view.
	f.col0 = max(0, int(off.X/f.cw))
	f.x0 = off.X
	f.muted = style.Color(th, style.Muted)
	f.gutterBg = style.Tint(style.Color(th, theme.ColorNameHeaderBackground), 0xff)
	f.height = fyne.Max(size.Height, float32(n)*f.lh+f.pad)
	f.gcols = c.gutterCols()
	return f, split
}

// drawSplit draws the rows in view side by side: before on the left,
// after on the right, each with its line numbers.
func (r *diffContentRenderer) drawSplit(f diffFrame) {
	c, v := r.c, r.c.view
	half := f.viewW / 2
	gw := c.sideGutterWidth()
	textCols := int(c.paneTextWidth(f.viewW) / f.cw) // never into the right pane
	r.rect(f.gutterBg, f.x0, 0, gw, f.height)
	r.rect(f.gutterBg, f.x0+half, 0, gw, f.height)
	for k := f.first; k < f.last; k++ {
		row := v.rows[k]
		y := f.pad/2 + float32(k)*f.lh
		if row.full {
			l := v.lines[row.left]
			lc := r.colorsOf(f.th, l)
			if lc.bg != nil {
				r.rect(lc.bg, f.x0, y, f.viewW, f.lh)
			}
			r.drawLine(l, lc, f.x0+f.pad/2, y, 0, int((f.viewW-f.pad)/f.cw)+1)
			continue
		}
		for s, i := range []int{row.left, row.right} {
			if i < 0 {
				continue
			}
			l := v.lines[i]
			px := f.x0 + float32(s)*half
			lc := r.colorsOf(f.th, l)
			if lc.bg != nil {
				r.rect(lc.bg, px+gw, y, half-gw, f.lh)
			}
			no := l.Old
			if s == 1 {
				no = l.New
			}
			r.text(lineNo(no), f.muted, false, fyne.TextAlignTrailing, px+f.pad/2, y+1, float32(f.gcols)*f.cw, f.lh)
			r.drawLine(l, lc, px+gw+f.pad/2, y, f.col0, textCols)
		}
	}
}

// drawUnified draws the lines in view one under the other, with both
// line numbers in the gutter (unless the view has none).
func (r *diffContentRenderer) drawUnified(f diffFrame) {
	c, v := r.c, r.c.view
	gutterW := c.gutterWidth()
	if !v.NoGutter {
		r.rect(f.gutterBg, f.x0, 0, gutterW, f.height)
	}
	textCols := int((f.viewW-gutterW-f.pad/2)/f.cw) + 1
	for i := f.first; i < f.last; i++ {
		l := v.lines[i]
		y := f.pad/2 + float32(i)*f.lh
		lc := r.colorsOf(f.th, l)
		if lc.bg != nil {
			r.rect(lc.bg, f.x0, y, f.viewW, f.lh)
		}
		if !v.NoGutter {
			for j, no := range []int{l.Old, l.New} {
				r.text(lineNo(no), f.muted, false, fyne.TextAlignTrailing, f.x0+f.pad/2+float32(j*(f.gcols+1))*f.cw, y+1, float32(f.gcols)*f.cw, f.lh)
			}
		}
		c0 := f.col0
		if l.Kind != LineContext && l.Kind != LineAdded && l.Kind != LineRemoved && !v.NoGutter {
			c0 = 0 // headers, hunk headers, notes and cuts stay in view
		}
		r.drawLine(l, lc, f.x0+gutterW+f.pad/2, y, c0, textCols)
	}
}

// drawLine draws columns [col0, col0+cols) of line l with its first column
// at x: the line as one text, or its marker and pieces, the changed words
// on their tint and shown whitespace muted.
func (r *diffContentRenderer) drawLine(l DiffLine, lc lineColors, x, y float32, col0, cols int) {
	cw, lh := r.c.charWidth(), r.c.lineHeight()
	bold := l.Kind == LineHeader
	if l.pieces == nil {
		if s := runeSlice(l.Text, col0, cols); s != "" {
			r.text(s, lc.text, bold, fyne.TextAlignLeading, x, y+1, float32(utf8.RuneCountInString(s)+1)*cw, lh)
		}
		return
	}
	if col0 == 0 {
		r.text(l.Text[:1], lc.text, false, fyne.TextAlignLeading, x, y+1, 2*cw, lh)
	}
	muted := style.Color(r.c.Theme(), style.Muted)
	at := 1 // the column the piece starts at
	for _, p := range l.pieces {
		from, to := max(at, col0), min(at+p.cols, col0+cols)
		if from < to {
			px := x + float32(from-col0)*cw
			if p.changed && lc.word != nil {
				r.rect(lc.word, px, y, float32(to-from)*cw, lh)
			}
			if p.mark {
				// One marker a text (a marker's columns are its runes): the
				// arrow comes from a fallback font whose spaces would not
				// keep to the columns.
				k := at
				for _, m := range p.text {
					if k >= from && k < to && m != ' ' {
						r.text(string(m), muted, false, fyne.TextAlignLeading, x+float32(k-col0)*cw, y+1, 2*cw, lh)
					}
					k++
				}
			} else {
				s := runeSlice(p.text, from-at, to-from)
				r.text(s, lc.text, false, fyne.TextAlignLeading, px, y+1, float32(to-from+1)*cw, lh)
			}
		}
		at += p.cols
	}
}

// runeSlice returns n runes of s from rune index i.
func runeSlice(s string, i, n int) string {
	if i == 0 && utf8.RuneCountInString(s) <= n {
		return s
	}
	start := -1
	k := 0
	for b := range s {
		if k == i {
			start = b
		}
		if k == i+n {
			return s[start:b]
		}
		k++
	}
	if start < 0 {
		return ""
	}
	return s[start:]
}

func lineNo(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}
