package review

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
)

// changeRow is one row of the change list or tree: a colored kind icon, the
// path (or name) in the kind's color, and a badge on the right (risk,
// detail or the allowing rule).
type changeRow struct {
	widget.BaseWidget
	icon  *widget.Icon
	name  *widget.RichText
	seg   *widget.TextSegment
	badge *canvas.Text
	box   *fyne.Container
}

func newChangeRow() fyne.CanvasObject {
	r := &changeRow{icon: widget.NewIcon(nil), badge: canvas.NewText("", color.Black)}
	r.seg = &widget.TextSegment{Style: widget.RichTextStyleInline}
	r.name = widget.NewRichText(r.seg)
	r.name.Truncation = fyne.TextTruncateEllipsis
	r.badge.TextSize = theme.SizeForWidget(theme.SizeNameCaptionText, r.name)
	r.box = container.New(&rowLayout{}, r.icon, r.name, r.badge)
	r.ExtendBaseWidget(r)
	return r
}

// CreateRenderer implements fyne.Widget.
func (r *changeRow) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(r.box) }

func rowOf(o fyne.CanvasObject) *changeRow { return o.(*changeRow) }

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
	r.seg.Text = report.QuotePath(label)
	r.seg.Style.ColorName = name
	r.seg.Style.TextStyle = fyne.TextStyle{Bold: !c.Allowed}
	r.name.Segments = []widget.RichTextSegment{r.seg}
	if c.RenamedFrom != "" {
		r.name.Segments = renameSegments(r.seg, label) // "old → new", quoted already
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

// setFolder shows a folder that only contains changes.
func (r *changeRow) setFolder(th fyne.Theme, n *node) {
	name := fyne.ThemeColorName(theme.ColorNameForeground)
	if n.belowViolations == 0 {
		name = style.Muted
	}
	r.icon.SetResource(style.Colored(theme.FolderIcon(), name))
	r.seg.Text = report.QuotePath(n.name)
	r.seg.Style.ColorName = name
	r.seg.Style.TextStyle = fyne.TextStyle{}
	r.name.Segments = []widget.RichTextSegment{r.seg}
	r.badge.TextStyle.Bold = false
	if n.belowViolations > 0 {
		r.badge.Text = plural(n.belowViolations, "violation")
		r.badge.Color = style.Color(th, style.FailColor)
	} else {
		r.badge.Text = plural(n.below, "change") + " allowed"
		r.badge.Color = style.Color(th, style.Muted)
	}
	r.refresh()
}

func (r *changeRow) refresh() {
	r.name.Refresh()
	r.badge.Refresh()
	r.box.Refresh()
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
	if d := report.ChangeDetail(c); d != "" {
		return d
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

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// rowLayout: icon | name (takes the rest, truncated) | badge.
type rowLayout struct{}

func (rowLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	icon, name, badge := objs[0], objs[1], objs[2]
	is := fyne.NewSquareSize(theme.IconInlineSize())
	icon.Resize(is)
	icon.Move(fyne.NewPos(0, (s.Height-is.Height)/2))
	b := badge.MinSize()
	bw := fyne.Min(b.Width, s.Width*0.45)
	badge.Resize(fyne.NewSize(bw, b.Height))
	badge.Move(fyne.NewPos(s.Width-bw-4, (s.Height-b.Height)/2))
	nm := name.MinSize()
	x := is.Width + 2
	name.Resize(fyne.NewSize(fyne.Max(0, s.Width-x-bw-8), nm.Height))
	name.Move(fyne.NewPos(x, (s.Height-nm.Height)/2))
}

func (rowLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	h := fyne.Max(objs[1].MinSize().Height, theme.IconInlineSize())
	return fyne.NewSize(theme.IconInlineSize()+80, h)
}

// changeList is the flat list; it routes keys to the view so up/down move
// the selection, Enter opens the detail and n / p jump between violations.
type changeList struct {
	widget.List
	v *View
}

func newChangeList(v *View) *changeList {
	l := &changeList{v: v}
	l.Length = func() int { return len(v.m.visible) }
	l.CreateItem = newChangeRow
	l.UpdateItem = func(id widget.ListItemID, o fyne.CanvasObject) {
		if id < len(v.m.visible) {
			c, label := v.m.rowChange(v.m.visible[id], false)
			rowOf(o).setChange(l.Theme(), c, label)
		}
	}
	l.OnSelected = func(id widget.ListItemID) {
		if id < len(v.m.visible) {
			v.showChange(v.m.visible[id])
		}
	}
	l.ExtendBaseWidget(l)
	return l
}

// TypedKey implements fyne.Focusable.
func (l *changeList) TypedKey(ev *fyne.KeyEvent) {
	switch ev.Name {
	case fyne.KeyUp:
		l.v.move(-1)
	case fyne.KeyDown:
		l.v.move(1)
	default:
		if !l.v.TypedKey(ev) {
			l.List.TypedKey(ev)
		}
	}
}

// TypedRune implements fyne.Focusable.
func (l *changeList) TypedRune(r rune) { l.v.TypedRune(r) }

// changeTree is the folder tree, with the same keys as changeList (left and
// right collapse and expand folders).
type changeTree struct {
	widget.Tree
	v          *View
	navigating bool
	batch      bool
}

// openBranches opens the folders ids with a single refresh (Tree.OpenBranch
// refreshes, i.e. walks the whole tree, on every call).
func (t *changeTree) openBranches(ids []string) {
	if len(ids) == 0 {
		return
	}
	t.batch = true
	for _, id := range ids {
		t.OpenBranch(id)
	}
	t.batch = false
	t.Refresh()
}

func newChangeTree(v *View) *changeTree {
	t := &changeTree{v: v}
	t.ChildUIDs = func(id widget.TreeNodeID) []widget.TreeNodeID {
		if t.batch {
			return nil // opening many branches: skip the walk each one triggers
		}
		if n := v.m.nodes[id]; n != nil {
			return n.children
		}
		return nil
	}
	t.IsBranch = func(id widget.TreeNodeID) bool {
		if id == "" {
			return true
		}
		n := v.m.nodes[id]
		return n != nil && len(n.children) > 0
	}
	t.CreateNode = func(bool) fyne.CanvasObject { return newChangeRow() }
	t.UpdateNode = func(id widget.TreeNodeID, _ bool, o fyne.CanvasObject) {
		n := v.m.nodes[id]
		if n == nil {
			return
		}
		if n.change >= 0 {
			c, label := v.m.rowChange(n.change, true)
			rowOf(o).setChange(t.Theme(), c, label)
		} else {
			rowOf(o).setFolder(t.Theme(), n)
		}
	}
	t.OnSelected = func(id widget.TreeNodeID) {
		if n := v.m.nodes[id]; n != nil {
			if n.change >= 0 {
				v.showChange(n.change)
			} else {
				v.showFolder(id)
			}
		}
	}
	t.OnHighlighted = func(id widget.TreeNodeID) {
		if t.navigating {
			t.Select(id)
		}
	}
	t.ExtendBaseWidget(t)
	return t
}

// TypedKey implements fyne.Focusable.
func (t *changeTree) TypedKey(ev *fyne.KeyEvent) {
	switch ev.Name {
	case fyne.KeyUp, fyne.KeyDown, fyne.KeyLeft, fyne.KeyRight:
		t.navigating = true
		t.Tree.TypedKey(ev)
		t.navigating = false
	default:
		if !t.v.TypedKey(ev) {
			t.Tree.TypedKey(ev)
		}
	}
}

// TypedRune implements fyne.Focusable.
func (t *changeTree) TypedRune(r rune) { t.v.TypedRune(r) }
