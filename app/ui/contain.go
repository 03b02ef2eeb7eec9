//go:build !js

package ui

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/quote"
)

// Preference keys of the containment controls.
const (
	prefContainMode     = "run.contain.mode"
	prefContainNet      = "run.contain.net"
	prefContainWritable = "run.contain.writable"
)

// Labels of the containment modes in the selector.
var containModes = []struct {
	mode  pipeline.ContainMode
	label string
}{
	{pipeline.ContainAuto, "Contained"},
	{pipeline.ContainOn, "Contained (refuse if a layer is missing)"},
	{pipeline.ContainOff, "Not contained"},
}

// containControls are the Run tab's containment settings: the mode, the
// network switch and the extra writable folders, with the policy in plain
// words; after a run, what was enforced.
type containControls struct {
	u        *UI
	mode     *widget.Select
	net      *widget.Check
	folders  *widget.Button
	policy   *widget.RichText
	enforced *widget.RichText
	writable []string
	root     fyne.CanvasObject
	// workspace returns the Run tab's workspace (for the policy's words).
	workspace func() string
}

func newContainControls(u *UI, workspace func() string) *containControls {
	c := &containControls{u: u, workspace: workspace}
	prefs := u.app.Preferences()
	labels := make([]string, len(containModes))
	for i, m := range containModes {
		labels[i] = m.label
	}
	c.mode = widget.NewSelect(labels, func(string) {
		// "Not contained" lasts for this session only: the next start is
		// contained again, never one Ctrl+R from an uncontained run.
		if c.Mode() != pipeline.ContainOff {
			prefs.SetString(prefContainMode, string(c.Mode()))
		}
		c.refresh()
		// A Select is as wide as its placeholder (never shown: a mode is
		// always chosen): the choice's width, so it is not cut ("Not
		// contai…"), and the row laid out again.
		c.mode.PlaceHolder = c.mode.Selected
		if c.root != nil {
			c.root.Refresh()
		}
	})
	c.net = widget.NewCheck("Network", func(on bool) {
		prefs.SetBool(prefContainNet, on)
		c.refresh()
	})
	c.folders = widget.NewButtonWithIcon("Writable folders…", theme.FolderNewIcon(), c.editFolders)
	c.folders.Importance = widget.LowImportance
	c.policy = widget.NewRichText()
	c.enforced = widget.NewRichText()
	c.enforced.Wrapping = fyne.TextWrapWord
	c.enforced.Hide()

	c.writable = prefs.StringList(prefContainWritable)
	c.net.SetChecked(prefs.Bool(prefContainNet))
	mode := pipeline.ContainMode(prefs.StringWithFallback(prefContainMode, string(pipeline.ContainAuto)))
	c.mode.SetSelectedIndex(0)
	for i, m := range containModes {
		if m.mode == mode && mode != pipeline.ContainOff { // an older version kept "off"
			c.mode.SetSelectedIndex(i)
		}
	}
	c.policy.Truncation = fyne.TextTruncateEllipsis
	c.root = container.NewBorder(nil, nil, container.NewHBox(c.mode, c.net, c.folders), nil, c.policy)
	c.refresh()
	return c
}

// Mode is the selected mode.
func (c *containControls) Mode() pipeline.ContainMode {
	if i := c.mode.SelectedIndex(); i >= 0 {
		return containModes[i].mode
	}
	return pipeline.ContainAuto
}

// Policy is the containment policy for a run (the pipeline adds the
// history database to what the script may not read).
func (c *containControls) Policy() pipeline.ContainPolicy {
	return pipeline.ContainPolicy{Mode: c.Mode(), Net: c.net.Checked, Writable: append([]string(nil), c.writable...)}
}

// refresh rewrites the policy line.
func (c *containControls) refresh() {
	on := c.Mode() != pipeline.ContainOff
	for _, w := range []fyne.Disableable{c.net, c.folders} {
		if on {
			w.Enable()
		} else {
			w.Disable()
		}
	}
	text, color := policyWords(c.Mode(), c.net.Checked, c.writable, c.workspace())
	c.policy.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{ColorName: color, SizeName: theme.SizeNameCaptionText, TextStyle: fyne.TextStyle{Bold: !on}}}}
	c.policy.Refresh()
	n := len(c.writable)
	c.folders.SetText("Writable folders…")
	if n > 0 {
		c.folders.SetText("Writable folders (" + strconv.Itoa(n) + ")…")
	}
}

// policyWords says the policy in plain words: "Network: off · Writes:
// this folder only · Secrets: hidden".
func policyWords(mode pipeline.ContainMode, net bool, writable []string, ws string) (string, fyne.ThemeColorName) {
	if mode == pipeline.ContainOff {
		return "Not contained: the script can do anything you can (write anywhere, reach the network, read your keys). Only the diff judges it.", style.FailColor
	}
	netWord := "off"
	if net {
		netWord = "on"
	}
	writes := "this folder only"
	if len(writable) > 0 {
		names := make([]string, 0, len(writable))
		for _, w := range writable {
			names = append(names, shortPath(w, ws))
		}
		writes = "this folder and " + strings.Join(names, ", ")
	}
	line := "Network: " + netWord + " · Writes: " + writes + " · Secrets: hidden · .git hooks: read-only"
	if mode == pipeline.ContainOn {
		line += " · Refuses to run if this machine cannot enforce all of it"
	}
	return line, style.Muted
}

// shortPath names a writable folder: relative to the workspace when it
// lies inside it, else with ~ for the home directory.
func shortPath(p, ws string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	if ws != "" && fspath.Within(p, ws) {
		if rel, err := filepath.Rel(ws, p); err == nil {
			return rel
		}
	}
	return quote.Path(homeRel(p))
}

// editFolders lets the user add and remove extra writable folders.
func (c *containControls) editFolders() {
	list := container.NewVBox()
	var fill func()
	fill = func() {
		list.Objects = nil
		if len(c.writable) == 0 {
			list.Add(widget.NewLabel("None: the script writes only to its workspace and a private temporary folder."))
		}
		for _, w := range c.writable {
			rm := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() {
				c.setWritable(slices.DeleteFunc(slices.Clone(c.writable), func(x string) bool { return x == w }))
				fill()
			})
			rm.Importance = widget.LowImportance
			list.Add(container.NewBorder(nil, nil, nil, rm, widget.NewLabel(quote.Path(w))))
		}
		list.Refresh()
	}
	fill()
	add := widget.NewButtonWithIcon("Add folder…", theme.ContentAddIcon(), func() {
		pickFolder(c.u.win, c.workspace(), "A folder the contained script may write to", func(p string) {
			if p != "" && !slices.Contains(c.writable, p) {
				c.setWritable(append(slices.Clone(c.writable), p))
				fill()
			}
		})
	})
	body := container.NewBorder(
		widget.NewLabel("Besides its workspace, a contained script may write only to these folders (and below them)."),
		add, nil, nil, container.NewVScroll(list))
	d := dialog.NewCustom("Writable folders", "Done", container.NewGridWrap(fyne.NewSize(520, 260), body), c.u.win)
	c.u.keys.Modal(d) // Escape closes it
	d.Show()
}

func (c *containControls) setWritable(ws []string) {
	c.writable = ws
	c.u.app.Preferences().SetStringList(prefContainWritable, ws)
	c.refresh()
}

// setEnforced shows what the last run enforced ("" hides the line): as
// loudly as a failed verdict when the script was not fully contained.
func (c *containControls) setEnforced(ct *report.Containment) {
	if ct == nil {
		c.enforced.Hide()
		return
	}
	text, color := "Enforced: "+ct.Summary(), style.PassColor
	if !ct.Contained {
		color = style.FailColor
	}
	c.enforced.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{ColorName: color, SizeName: theme.SizeNameCaptionText, TextStyle: fyne.TextStyle{Bold: !ct.Contained}}}}
	c.enforced.Show()
	c.enforced.Refresh()
}

// setEnabled enables or disables the controls (disabled while running).
func (c *containControls) setEnabled(on bool) {
	if on {
		c.mode.Enable()
		c.refresh()
		return
	}
	for _, w := range []fyne.Disableable{c.mode, c.net, c.folders} {
		w.Disable()
	}
}
