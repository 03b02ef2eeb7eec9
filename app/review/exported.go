package review

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/internal/quote"
)

// exported is the line under the export buttons: where the last export was
// saved, with Open folder (when the host can open one), or why it was not.
type exported struct {
	text *widget.RichText
	open *widget.Button
	path string
	root *fyne.Container
}

func newExported(openFolder func(path string)) *exported {
	e := &exported{text: widget.NewRichText()}
	e.text.Wrapping = fyne.TextWrapBreak
	e.open = widget.NewButtonWithIcon("Open folder", theme.FolderOpenIcon(), func() {
		if e.path != "" && openFolder != nil {
			openFolder(e.path)
		}
	})
	e.open.Importance = widget.LowImportance
	e.open.Hide()
	e.root = container.NewBorder(nil, nil, nil, e.open, e.text)
	e.root.Hide()
	if openFolder == nil {
		e.open = nil
	}
	return e
}

// saved shows that the export went to path.
func (e *exported) saved(path string) {
	e.path = path
	e.set(seg("Saved to ", style.Muted, fyne.TextStyle{}),
		&widget.TextSegment{Text: quote.Path(path), Style: widget.RichTextStyle{Inline: true, ColorName: style.PassColor,
			TextStyle: fyne.TextStyle{Monospace: true}}})
	if e.open != nil {
		e.open.Show()
	}
}

// failed shows one line of what went wrong (saving, or opening the folder:
// the path stays when there is one).
func (e *exported) failed(msg string) {
	segs := []widget.RichTextSegment{}
	if e.path != "" && e.open != nil && e.open.Visible() {
		segs = append(segs, e.text.Segments[:min(2, len(e.text.Segments))]...)
		segs = append(segs, seg("  ", "", fyne.TextStyle{}))
	}
	segs = append(segs, seg(msg, style.FailColor, fyne.TextStyle{Bold: true}))
	e.set(segs...)
}

func (e *exported) clear() {
	e.path = ""
	e.text.Segments = nil
	if e.open != nil {
		e.open.Hide()
	}
	e.root.Hide()
}

func (e *exported) set(segs ...widget.RichTextSegment) {
	e.text.Segments = segs
	e.text.Refresh()
	e.root.Show()
	e.root.Refresh()
}

// SetExported says where an export was saved (path), or, when problem is
// not "", why it was not (one line); Open folder then opens path's folder
// through Options.OpenFolder.
func (v *View) SetExported(path, problem string) {
	if problem != "" {
		v.side.exported.path = ""
		if v.side.exported.open != nil {
			v.side.exported.open.Hide()
		}
		v.side.exported.failed("Not saved: " + problem)
		return
	}
	v.side.exported.saved(path)
}

// SetExportProblem adds one line of trouble (opening the folder failed) to
// the export line, keeping the saved path.
func (v *View) SetExportProblem(msg string) { v.side.exported.failed(msg) }
