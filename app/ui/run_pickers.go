//go:build !js

package ui

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
)

// runPickers are the Run tab's pickers and fields: the workspace and the
// script (each with its recent list and a Browse button), the demo's
// button, the script's arguments and the timeout.
type runPickers struct {
	workspace, script  *keys.SelectEntry
	wsBrowse, scBrowse *widget.Button
	demoBtn            *widget.Button
	args, timeout      *keys.Entry
	// lastWS is the workspace field's last value (trimmed) that
	// workspaceChanged followed.
	lastWS string
}

// newRunPickers makes the inputs; onWorkspace and onScript follow the two
// pickers, onDemo is the demo's button.
func newRunPickers(u *UI, onWorkspace, onScript, onDemo func()) *runPickers {
	in := &runPickers{}
	prefs := u.app.Preferences()
	in.workspace = keys.NewSelectEntry(prefs.StringList(prefWorkspaces))
	in.workspace.SetPlaceHolder("Folder the script runs in (drop a folder on the window)")
	in.workspace.OnChanged = func(string) { onWorkspace() }
	in.script = keys.NewSelectEntry(prefs.StringList(prefScripts))
	in.script.SetPlaceHolder("Script to run, e.g. generated_script.sh")
	in.script.OnChanged = func(string) { onScript() }
	in.wsBrowse = widget.NewButtonWithIcon("Browse…", theme.FolderOpenIcon(), func() {
		pickFolder(u.win, in.workspace.Text, "Choose the workspace", func(p string) { in.workspace.SetText(p) })
	})
	in.scBrowse = widget.NewButtonWithIcon("Browse…", theme.FileIcon(), func() {
		start := filepath.Dir(in.script.Text)
		if in.script.Text == "" {
			start = in.workspace.Text
		}
		pickFile(u.win, start, "Choose the script", "", func(p string) { in.script.SetText(p) })
	})
	in.demoBtn = widget.NewButtonWithIcon("Load demo", theme.MediaReplayIcon(), onDemo)
	in.demoBtn.Importance = widget.LowImportance

	in.args = keys.NewEntry()
	in.args.SetPlaceHolder("arguments (optional)")
	in.timeout = keys.NewEntry()
	in.timeout.SetText(prefs.StringWithFallback(prefTimeout, "10m"))
	in.timeout.Validator = func(s string) error { _, err := parseTimeout(s); return err }
	return in
}

// disableables are the inputs a run disables.
func (in *runPickers) disableables() []fyne.Disableable {
	return []fyne.Disableable{in.workspace, in.script, in.wsBrowse, in.scBrowse, in.demoBtn, in.args, in.timeout}
}

// runRequest is what the inputs ask a run to do.
type runRequest struct {
	workspace, script string
	args              []string
	timeout           time.Duration
}

// request reads the inputs; problems says what keeps them from a run.
func (in *runPickers) request() (req runRequest, problems []string) {
	req.workspace, req.script = strings.TrimSpace(in.workspace.Text), strings.TrimSpace(in.script.Text)
	if req.workspace == "" {
		problems = append(problems, "choose a workspace folder")
	}
	if req.script == "" {
		problems = append(problems, "choose a script")
	}
	var err error
	if req.timeout, err = parseTimeout(in.timeout.Text); err != nil {
		problems = append(problems, err.Error())
	}
	if req.args, err = splitArgs(in.args.Text); err != nil {
		problems = append(problems, err.Error())
	}
	return req, problems
}

func parseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("timeout: a duration such as 30s or 2m")
	}
	return d, nil
}

// splitArgs splits an argument line on spaces, honouring "double" and
// 'single' quotes and backslash escapes.
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inArg, quote := false, rune(0)
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc, inArg = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				out = append(out, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 || esc {
		return nil, errors.New("arguments: unterminated quote or escape")
	}
	if inArg {
		out = append(out, cur.String())
	}
	return out, nil
}
