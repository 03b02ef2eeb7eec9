package review

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/internal/count"
)

// changesPane is the left pane: "x of N reviewed" and Violations first
// over the list, the bar saying what the filters hide (with Clear), the
// change list or tree (or why there is none) and the list's keys under it.
type changesPane struct {
	reviewed   *widget.RichText
	violFirst  *widget.Check
	hiddenBar  *fyne.Container
	hiddenText *widget.RichText
	clearBtn   *widget.Button
	list       *changeList
	stack      *fyne.Container // the list, or empty centered
	empty      *widget.RichText
	shown      *widget.RichText // the list's keys
	root       *fyne.Container
}

func newChangesPane(v *View) *changesPane {
	p := &changesPane{}
	p.shown = widget.NewRichText()
	p.shown.Wrapping = fyne.TextWrapWord
	p.reviewed = widget.NewRichText()
	p.violFirst = widget.NewCheck("Violations first", func(on bool) {
		v.m.violationsFirst = on
		v.refilter()
	})
	p.violFirst.Checked = true
	p.hiddenText = widget.NewRichText()
	p.clearBtn = widget.NewButtonWithIcon("Clear", theme.ContentClearIcon(), func() { v.SetFilter(defaultFilter()) })
	p.clearBtn.Importance = widget.LowImportance
	p.hiddenBar = container.NewBorder(nil, nil, nil, p.clearBtn, p.hiddenText)
	p.hiddenBar.Hide()

	p.list = newChangeList(v)
	p.empty = widget.NewRichText()
	p.stack = container.NewStack()

	listHead := container.NewVBox(container.NewBorder(nil, nil, p.reviewed, p.violFirst), p.hiddenBar)
	p.root = container.NewBorder(listHead, p.shown, nil, nil, p.stack)
	return p
}

// setContent shows w (the list, or a line saying why there is none).
func (p *changesPane) setContent(w fyne.CanvasObject) {
	if len(p.stack.Objects) != 1 || p.stack.Objects[0] != w {
		p.stack.Objects = []fyne.CanvasObject{w}
		p.stack.Refresh()
	}
}

func (p *changesPane) setEmpty(text string) {
	p.empty.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{ColorName: style.Muted, Alignment: fyne.TextAlignCenter}}}
	p.empty.Refresh()
}

// showHidden shows the bar saying what the filters hide (changes, blocked
// actions, changes outside the workspace), or hides it when they hide
// nothing.
func (p *changesPane) showHidden(m *model) {
	hidden := m.rowCount() - len(m.visible)
	var what []string
	if hidden > 0 || m.fd.hiddenBlocked+m.fd.hiddenOutside == 0 {
		what = append(what, count.Grouped(hidden, "change"))
	}
	if n := m.fd.hiddenBlocked; n > 0 {
		what = append(what, count.Grouped(n, "blocked action"))
	}
	if n := m.fd.hiddenOutside; n > 0 {
		what = append(what, count.Grouped(n, "change")+" outside the workspace")
	}
	hidden += m.fd.hiddenBlocked + m.fd.hiddenOutside
	if p.hiddenBar.Hidden != (hidden == 0) {
		p.hiddenBar.Hidden = hidden == 0
		p.root.Refresh() // the bar takes or gives back its row
	}
	p.hiddenText.Segments = []widget.RichTextSegment{&widget.TextSegment{
		Text:  fmt.Sprintf("%s hidden by filters —", strings.Join(what, ", ")),
		Style: widget.RichTextStyle{ColorName: theme.ColorNameWarning, TextStyle: fyne.TextStyle{Bold: true}, Inline: true}}}
	p.hiddenText.Refresh()
	p.hiddenBar.Refresh()
}

// showReviewed shows "x of N reviewed" above the list, in the pass color
// once every row is.
func (p *changesPane) showReviewed(viewed, total int) {
	c := style.Muted
	if total > 0 && viewed == total {
		c = style.PassColor
	}
	p.reviewed.Segments = []widget.RichTextSegment{&widget.TextSegment{
		Text:  fmt.Sprintf("%s of %s reviewed", count.Digits(viewed), count.Digits(total)),
		Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Bold: viewed > 0}, Inline: true}}}
	p.reviewed.Refresh()
}

// showKeys shows the list's keys under it.
func (p *changesPane) showKeys(tree bool) {
	keys := "Up/Down PgUp/PgDn  n/p violation  v viewed  Enter diff"
	if tree {
		keys = "Up/Down PgUp/PgDn  n/p violation  v viewed  Enter open"
	}
	p.shown.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: keys,
		Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText}}}
	p.shown.Refresh()
}
