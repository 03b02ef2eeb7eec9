package review

import (
	"fmt"
	"strings"

	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/quote"
)

// indentWidth is how far a tree level is indented.
const indentWidth = 14

// wheelRows is how many rows one step of the scroll wheel moves; wheelStep
// is how far Fyne scrolls for one step (on Linux and Windows).
const (
	wheelRows = 3
	wheelStep = 25
)

// changeRow is one row of the change list: the viewed check, the tree's
// indentation and disclosure arrow, a colored kind icon, the path (or
// name) in the kind's color, and a badge on the right (risk, detail, the
// allowing rule, or a folder's counts).
type changeRow struct {
	widget.BaseWidget
	l      *changeList
	id     string // the node shown
	check  *tapIcon
	arrow  *tapIcon
	icon   *widget.Icon
	name   *widget.RichText
	seg    *widget.TextSegment
	full   string // a change's whole path or name, cut in the middle to fit (CutMiddle); "" for other rows
	badge  *canvas.Text
	depth  int
	folder bool
	box    *fyne.Container
}

func newChangeRow(l *changeList) *changeRow {
	r := &changeRow{l: l, icon: widget.NewIcon(nil), badge: canvas.NewText("", color.Black)}
	r.check = newTapIcon(func() { l.v.toggleViewed(r.id) })
	r.arrow = newTapIcon(func() { l.v.toggleOpen(r.id) })
	r.seg = &widget.TextSegment{Style: widget.RichTextStyleInline}
	r.name = widget.NewRichText(r.seg)
	r.name.Truncation = fyne.TextTruncateEllipsis
	r.badge.TextSize = theme.SizeForWidget(theme.SizeNameCaptionText, r.name)
	r.box = container.New(&rowLayout{r: r}, r.check, r.arrow, r.icon, style.Tight(r.name), r.badge)
	r.ExtendBaseWidget(r)
	return r
}

// CreateRenderer implements fyne.Widget.
func (r *changeRow) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(r.box) }

// Scrolled implements fyne.Scrollable: a step of the wheel moves wheelRows
// rows, not a third of one.
func (r *changeRow) Scrolled(ev *fyne.ScrollEvent) {
	l := r.l
	l.ScrollToOffset(l.GetScrollOffset() - ev.Scrolled.DY/wheelStep*wheelRows*l.rowH)
}

// set shows node id of the model at depth (tree mode), or a change of the
// flat list by its path (depth < 0).
func (r *changeRow) set(v *View, id string, depth int) {
	th := r.l.Theme()
	r.id = id
	r.depth = max(depth, 0)
	r.full = ""
	if isFinding(id) {
		r.folder = v.tree && isGroup(id)
		r.setFinding(th, v, id)
		r.box.Refresh()
		return
	}
	r.check.Hidden = false
	n := v.m.nodes[id]
	r.folder = depth >= 0 && n != nil && n.folder()
	var viewedAll, viewedSome bool
	switch {
	case r.folder:
		viewedAll, viewedSome = n.sum.viewed == n.sum.Total(), n.sum.viewed > 0
	default:
		i := v.indexOf(id)
		viewedAll = i >= 0 && v.viewed[i]
	}
	r.setCheck(viewedAll, viewedSome)
	r.arrow.Hidden = !r.folder
	if r.folder {
		if v.isOpen(id, n) {
			r.arrow.set(theme.MenuDropDownIcon())
		} else {
			r.arrow.set(theme.MenuExpandIcon())
		}
		r.setFolder(th, n, id)
	} else if i := v.indexOf(id); i >= 0 {
		c, label := v.m.rowChange(i, depth >= 0 && n != nil)
		r.setChange(th, c, label)
	}
	r.box.Refresh()
}

func (r *changeRow) setCheck(all, some bool) {
	switch {
	case all:
		r.check.setColored(theme.CheckButtonCheckedIcon(), style.PassColor)
	case some:
		r.check.setColored(theme.CheckButtonFillIcon(), style.Muted)
	default:
		r.check.setColored(theme.CheckButtonIcon(), style.Muted)
	}
}

// setChange shows change c; label is the path (list) or base name (tree).
func (r *changeRow) setChange(th fyne.Theme, c *diff.Change, label string) {
	name := style.ChangeColor(c)
	r.icon.SetResource(style.Colored(style.KindIcon(c.Kind), name))
	if c.IsDir() && c.Kind != diff.Changed {
		r.icon.SetResource(style.Colored(theme.FolderIcon(), name))
	}
	if c.RenamedFrom != "" {
		r.icon.SetResource(style.Colored(theme.ContentRedoIcon(), name))
	}
	r.seg.Text = quote.Path(label)
	r.full = r.seg.Text
	r.seg.Style.ColorName = name
	r.seg.Style.TextStyle = fyne.TextStyle{Bold: !c.Allowed}
	r.name.Segments = []widget.RichTextSegment{r.seg}
	if c.RenamedFrom != "" {
		r.name.Segments = renameSegments(r.seg, label) // "old → new", quoted already
		r.full = ""
	}
	switch {
	case c.Risk != diff.NoRisk && !c.Allowed:
		r.badge.Text = "⚠ " + string(c.Risk)
		r.badge.Color = style.Color(th, style.Risk)
		r.badge.TextStyle.Bold = true
	case c.Allowed:
		r.badge.Text = "allowed · " + c.Rule
		r.badge.Color = style.Color(th, style.Muted)
		r.badge.TextStyle.Bold = false
	case c.RenamedFrom != "":
		r.badge.Text = renameBadge(c)
		r.badge.Color = style.Color(th, style.Muted)
		r.badge.TextStyle.Bold = false
	default:
		r.badge.Text = rowDetail(c)
		r.badge.Color = style.Color(th, style.Muted)
		r.badge.TextStyle.Bold = false
	}
	r.refresh()
}

// setFolder shows a folder with the counts of what it holds
// ("node_modules/", "3,301 added, violations"); a changed directory's
// icon is drawn in its change's color.
func (r *changeRow) setFolder(th fyne.Theme, n *node, id string) {
	name := fyne.ThemeColorName(theme.ColorNameForeground)
	if n.sum.Violations == 0 {
		name = style.Muted
	}
	icon := name
	if n.change >= 0 {
		icon = style.ChangeColor(&r.l.v.r.Changes[n.change])
	}
	r.icon.SetResource(style.Colored(theme.FolderIcon(), icon))
	r.seg.Text = quote.Path(n.name) + "/"
	r.name.Segments = []widget.RichTextSegment{r.seg}
	r.seg.Style.ColorName = name
	r.seg.Style.TextStyle = fyne.TextStyle{Bold: n.sum.Violations > 0}
	r.badge.Text = n.sum.String()
	r.badge.TextStyle.Bold = n.sum.Violations > 0
	r.badge.Color = style.Color(th, style.Muted)
	if n.sum.Violations > 0 {
		r.badge.Color = style.Color(th, style.FailColor)
	}
	r.refresh()
}

func (r *changeRow) refresh() {
	r.name.Refresh()
	r.badge.Refresh()
}

// rowDetail is the short badge of a violation: what changed besides content.
func rowDetail(c *diff.Change) string {
	if c.Kind != diff.Changed {
		if c.Before != nil && c.After == nil {
			return string(c.Before.Type)
		}
		if c.After != nil {
			return string(c.After.Type)
		}
		return ""
	}
	lines := ""
	if c.Has(diff.Content) && c.TextDiff != "" {
		// The size alone says nothing of an edit: its line counts do.
		add, del, partial := textdiff.Counts(c.TextDiff)
		lines = fmt.Sprintf("+%d −%d", add, del)
		if partial {
			lines += "…"
		}
	}
	if d := report.ChangeDetail(c); d != "" {
		return strings.TrimPrefix(lines+", "+d, ", ")
	}
	if lines != "" {
		return lines
	}
	parts := ""
	for i, a := range c.Aspects {
		if i > 0 {
			parts += ", "
		}
		parts += string(a)
	}
	return parts
}

// rowLayout: check | indent | arrow | icon | name (takes the rest,
// truncated) | badge. The arrow's column is kept in tree mode so names
// of folders and files line up.
type rowLayout struct{ r *changeRow }

func (l *rowLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	check, arrow, icon, name, badge := objs[0], objs[1], objs[2], objs[3], objs[4]
	is := fyne.NewSquareSize(theme.IconInlineSize())
	mid := func(h float32) float32 { return (s.Height - h) / 2 }
	x := float32(0)
	check.Resize(is)
	check.Move(fyne.NewPos(x, mid(is.Height)))
	x += is.Width + 2
	if l.r.l.v.tree {
		x += float32(l.r.depth) * indentWidth
		arrow.Resize(is)
		arrow.Move(fyne.NewPos(x, mid(is.Height)))
		x += is.Width
	}
	icon.Resize(is)
	icon.Move(fyne.NewPos(x, mid(is.Height)))
	x += is.Width + 2
	b := badge.MinSize()
	bw := fyne.Min(b.Width, s.Width*0.45)
	badge.Resize(fyne.NewSize(bw, b.Height))
	badge.Move(fyne.NewPos(s.Width-bw-4, mid(b.Height)))
	nm := name.MinSize()
	nw := fyne.Max(0, s.Width-x-bw-8)
	l.r.fit(nw - 2*tightPad)
	name.Resize(fyne.NewSize(nw, nm.Height))
	name.Move(fyne.NewPos(x, mid(nm.Height)))
}

// tightPad is the room style.Tight leaves on each side of a text.
const tightPad = 2

// fit cuts the change's path in the middle to fit width w, keeping its
// file name ("node_modules/pk…/index.js"), rather than cut its end.
func (r *changeRow) fit(w float32) {
	if r.full == "" || w <= 0 {
		return
	}
	size := theme.SizeForWidget(theme.SizeNameText, r.name)
	ts := r.seg.Style.TextStyle
	text := cutMiddle(r.full, func(s string) bool { return fyne.MeasureText(s, size, ts).Width <= w })
	if r.seg.Text != text {
		r.seg.Text = text
		r.name.Refresh()
	}
}

func (l *rowLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	h := fyne.Max(objs[3].MinSize().Height, theme.IconInlineSize())
	return fyne.NewSize(3*theme.IconInlineSize()+80, h)
}

// tapIcon is an icon that does something when tapped (the row's viewed
// check and disclosure arrow): a tap on it does not select the row.
type tapIcon struct {
	widget.BaseWidget
	icon  *widget.Icon
	onTap func()
}

func newTapIcon(onTap func()) *tapIcon {
	t := &tapIcon{icon: widget.NewIcon(nil), onTap: onTap}
	t.ExtendBaseWidget(t)
	return t
}

func (t *tapIcon) set(res fyne.Resource) { t.icon.SetResource(res) }

func (t *tapIcon) setColored(res fyne.Resource, c fyne.ThemeColorName) {
	t.icon.SetResource(style.Colored(res, c))
}

// CreateRenderer implements fyne.Widget.
func (t *tapIcon) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(t.icon) }

// Tapped implements fyne.Tappable.
func (t *tapIcon) Tapped(*fyne.PointEvent) { t.onTap() }

// Cursor implements desktop.Cursorable.
func (t *tapIcon) Cursor() desktop.Cursor { return desktop.PointerCursor }

// changeList shows the rows of the change list or tree and routes keys to
// the view: up/down and page up/down move the selection, left/right close
// and open folders, Enter opens the detail (or a folder), n / p jump
// between violations, v marks the selected row viewed.
type changeList struct {
	widget.List
	v *View
	// quiet is set while the view selects a row itself, so OnSelected
	// does not show it a second time.
	quiet bool
	rowH  float32 // a row's height with the gap below it
}

func newChangeList(v *View) *changeList {
	l := &changeList{v: v}
	l.Length = func() int { return len(v.rows) }
	l.CreateItem = func() fyne.CanvasObject {
		r := newChangeRow(l)
		l.rowH = r.MinSize().Height + l.Theme().Size(theme.SizeNamePadding)
		return r
	}
	l.UpdateItem = func(id widget.ListItemID, o fyne.CanvasObject) {
		if id < len(v.rows) {
			rw := v.rows[id]
			depth := rw.depth
			if !v.tree {
				depth = -1
			}
			o.(*changeRow).set(v, rw.id, depth)
		}
	}
	l.OnSelected = func(id widget.ListItemID) {
		if !l.quiet && id < len(v.rows) {
			v.showRow(id)
		}
	}
	l.ExtendBaseWidget(l)
	return l
}

// pageRows is how many rows a page up or down moves: the rows that fit,
// less one kept in view.
func (l *changeList) pageRows() int {
	if l.rowH <= 0 {
		return 1
	}
	return max(1, int(l.Size().Height/l.rowH)-1)
}

// TypedKey implements fyne.Focusable.
func (l *changeList) TypedKey(ev *fyne.KeyEvent) {
	switch ev.Name {
	case fyne.KeyLeft:
		l.v.left()
	case fyne.KeyRight:
		l.v.right()
	default:
		if !keys.PassFunctionKey(l, ev) && !l.v.TypedKey(ev) {
			l.List.TypedKey(ev)
		}
	}
}

// TypedRune implements fyne.Focusable.
func (l *changeList) TypedRune(r rune) { l.v.TypedRune(r) }
