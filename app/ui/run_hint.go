//go:build !js

package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// demoHint is the callout above the Run tab's form that invites to run
// the demo, shown while the demo's workspace is chosen.
type demoHint struct {
	// hint is a *fyne.Container (box): empty, or the hint, or its space.
	hint fyne.CanvasObject
	// hintHeld: hint holds the space of the demo's hint, not the hint
	// (holdHintSpace).
	hintHeld bool
	// relayout refreshes the tab (the hint changes the height of the top
	// area).
	relayout func()
}

func newDemoHint(relayout func()) *demoHint {
	return &demoHint{hint: container.NewVBox(), relayout: relayout}
}

func (d *demoHint) box() *fyne.Container { return d.hint.(*fyne.Container) }

// holdHintSpace replaces the demo's hint, when it is shown, by empty space
// of its height: the hint has said what it had to, and the form below it
// stays where it is until the workspace changes.
func (d *demoHint) holdHintSpace() {
	c := d.box()
	if len(c.Objects) == 0 || d.hintHeld {
		return
	}
	space := canvas.NewRectangle(color.Transparent)
	space.SetMinSize(fyne.NewSize(0, c.Size().Height))
	c.Objects = []fyne.CanvasObject{space}
	d.hintHeld = true
	c.Refresh()
}

func (d *demoHint) showDemoHint(on bool) {
	if d.hintHeld { // the space of a hint that was shown
		d.hintHeld = false
		d.box().Objects = nil
		d.relayout()
	}
	if shown := len(d.box().Objects) > 0; shown == on {
		return
	}
	if !on {
		d.box().Objects = nil
		d.relayout()
		return
	}
	msg := widget.NewRichTextFromMarkdown("**Try the demo.** `demo.sh` was asked to write `logs/run.log`, which the allowlist `logs/` permits. " +
		"It also edits `config.json`, makes a file executable, deletes a lock file and leaves `sleep 300` running, and still exits 0. " +
		"Press **Run** (Ctrl+R) and see what the gate makes of it.")
	msg.Wrapping = fyne.TextWrapWord
	d.box().Objects = []fyne.CanvasObject{callout(msg, theme.ColorNamePrimary)}
	d.relayout()
}
