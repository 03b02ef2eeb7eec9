//go:build !js

package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// runOptions are how a run is contained and whether it is staged: the
// containment controls and the Stage check.
type runOptions struct {
	u       *UI
	stage   *widget.Check
	contain *containControls
}

// newRunOptions makes the options; workspace is the workspace field's
// value (the containment line names folders relative to it).
func newRunOptions(u *UI, workspace func() string) *runOptions {
	o := &runOptions{u: u}
	o.stage = widget.NewCheck("Stage changes (apply after review)", func(on bool) {
		u.app.Preferences().SetBool(prefStage, on)
	})
	if u.hist == nil {
		// Apply and Discard read the run's record.
		o.stage.SetText("Stage changes (needs the history)")
		o.stage.Disable()
	} else {
		o.stage.SetChecked(u.app.Preferences().BoolWithFallback(prefStage, true))
	}
	o.contain = newContainControls(u, workspace)
	return o
}

// staged reports whether the next run is staged (it needs the history).
func (o *runOptions) staged() bool {
	return o.stage.Checked && o.u.hist != nil
}

// setEnabled enables the options (not while a run runs).
func (o *runOptions) setEnabled(on bool) {
	if o.u.hist != nil {
		setEnabled(o.stage, on)
	}
	o.contain.setEnabled(on)
}

// setEnabled enables or disables w.
func setEnabled(w fyne.Disableable, on bool) {
	if on {
		w.Enable()
	} else {
		w.Disable()
	}
}
