package web

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/snapshot"
)

// picked is a manifest file chosen in the compare dialog.
type picked struct {
	name string
	m    *snapshot.Manifest
}

// compareState survives closing the dialog, so reopening it keeps the
// files and the allowlist.
type compareState struct {
	before, after picked
	allowlist     string
}

// compareDialog picks a BEFORE and an AFTER manifest and an allowlist and
// shows the resulting report in the review view.
type compareDialog struct {
	x     *App
	d     *dialog.CustomDialog
	state *compareState

	beforeBtn, afterBtn   *widget.Button
	beforeInfo, afterInfo *widget.RichText
	allow                 *review.AllowlistEditor
	msg                   *widget.RichText
	run, cancel           *widget.Button
}

// ShowCompare opens the compare dialog.
func (x *App) ShowCompare() {
	if x.cmp != nil {
		return
	}
	if x.cmpState == nil {
		x.cmpState = &compareState{}
	}
	c := &compareDialog{x: x, state: x.cmpState}
	c.build()
	x.cmp = c
	c.d.Show()
	x.win.Canvas().Focus(c.allow.Entry())
	x.publish()
}

func (c *compareDialog) build() {
	x := c.x
	hint := widget.NewRichText(&widget.TextSegment{
		Text: "Pick two manifests of the same directory, written by “diffgate snapshot DIR -o FILE” or by the seed's snapshot.py. " +
			"They are compared in this tab; nothing is uploaded.",
		Style: widget.RichTextStyle{ColorName: style.Muted}})
	hint.Wrapping = fyne.TextWrapWord

	c.beforeInfo, c.afterInfo = widget.NewRichText(), widget.NewRichText()
	c.beforeInfo.Truncation, c.afterInfo.Truncation = fyne.TextTruncateEllipsis, fyne.TextTruncateEllipsis
	c.beforeBtn = widget.NewButtonWithIcon("Choose file…", theme.FileIcon(), func() { c.pick(&c.state.before, c.beforeInfo) })
	c.afterBtn = widget.NewButtonWithIcon("Choose file…", theme.FileIcon(), func() { c.pick(&c.state.after, c.afterInfo) })
	label := func(s string) fyne.CanvasObject {
		return widget.NewRichText(&widget.TextSegment{Text: s, Style: widget.RichTextStyle{TextStyle: fyne.TextStyle{Bold: true}}})
	}
	form := container.New(layout.NewFormLayout(),
		label("BEFORE"), container.NewBorder(nil, nil, c.beforeBtn, nil, c.beforeInfo),
		label("AFTER"), container.NewBorder(nil, nil, c.afterBtn, nil, c.afterInfo))

	allowTitle := widget.NewRichText(
		&widget.TextSegment{Text: "Allowlist", Style: widget.RichTextStyle{TextStyle: fyne.TextStyle{Bold: true}, Inline: true}},
		&widget.TextSegment{Text: "   one entry per line, as in diffgate run --allowlist; empty allows nothing",
			Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText, Inline: true}})
	c.allow = review.NewAllowlistEditor()
	c.allow.SetText(c.state.allowlist)
	c.allow.OnChanged = func([]string, []review.Problem) {
		c.state.allowlist = c.allow.Text()
		c.update()
	}
	c.msg = widget.NewRichText()
	c.msg.Wrapping = fyne.TextWrapWord
	c.msg.Hide()

	content := container.NewVBox(hint, form, widget.NewSeparator(), allowTitle, c.allow, c.msg)
	c.d = dialog.NewCustomWithoutButtons("Compare two snapshots", content, x.win)
	c.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), c.d.Hide)
	c.run = widget.NewButtonWithIcon("Compare", theme.ConfirmIcon(), c.compare)
	c.run.Importance = widget.HighImportance
	c.d.SetButtons([]fyne.CanvasObject{c.cancel, c.run})
	c.d.SetOnClosed(func() {
		x.cmp = nil
		x.publish()
	})
	c.d.Resize(fyne.NewSize(720, 1))

	x.named["compare-before"] = c.beforeBtn
	x.named["compare-after"] = c.afterBtn
	x.named["compare-allowlist"] = c.allow.Entry()
	x.named["compare-run"] = c.run
	x.named["compare-cancel"] = c.cancel
	c.show(&c.state.before, c.beforeInfo, "")
	c.show(&c.state.after, c.afterInfo, "")
	c.update()
}

// pick asks the browser for a manifest for one side.
func (c *compareDialog) pick(side *picked, info *widget.RichText) {
	c.x.host.PickFile(ReportAccept, func(name string, data []byte, err error) {
		c.x.do(func() {
			if err != nil {
				*side = picked{}
				c.show(side, info, fmt.Sprintf("Could not read %s: %v", name, err))
				return
			}
			m, err := ParseManifest(name, data)
			if err != nil {
				*side = picked{}
				c.show(side, info, err.Error())
				return
			}
			*side = picked{name: name, m: m}
			c.show(side, info, "")
			c.update()
		})
	})
}

// show describes one side: the file and its format, or the error.
func (c *compareDialog) show(side *picked, info *widget.RichText, problem string) {
	switch {
	case problem != "":
		info.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: problem,
			Style: widget.RichTextStyle{ColorName: style.FailColor, TextStyle: fyne.TextStyle{Bold: true}}}}
		c.x.Fail(problem)
	case side.m == nil:
		info.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: "no file chosen",
			Style: widget.RichTextStyle{ColorName: style.Muted}}}
	default:
		info.Segments = []widget.RichTextSegment{
			&widget.TextSegment{Text: side.name, Style: widget.RichTextStyle{TextStyle: fyne.TextStyle{Bold: true}, Inline: true}},
			&widget.TextSegment{Text: "   " + DescribeManifest(side.m), Style: widget.RichTextStyle{ColorName: style.Muted, Inline: true}},
		}
	}
	info.Refresh()
	c.update()
}

// update enables Compare once both files are read and the allowlist parses.
func (c *compareDialog) update() {
	if c.run == nil {
		return
	}
	if c.state.before.m != nil && c.state.after.m != nil && len(c.allow.Problems()) == 0 {
		c.run.Enable()
	} else {
		c.run.Disable()
	}
}

func (c *compareDialog) compare() {
	r, err := Compare(c.state.before.m, c.state.after.m, c.allow.Text())
	if err != nil {
		c.msg.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: err.Error(),
			Style: widget.RichTextStyle{ColorName: style.FailColor}}}
		c.msg.Show()
		c.msg.Refresh()
		c.x.Fail("Could not compare: " + err.Error())
		return
	}
	c.d.Hide()
	c.x.Show(c.state.before.name+" vs "+c.state.after.name, r)
}
