//go:build !js

package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/internal/count"
)

// The allowlist pane's hints.
const (
	hintEmpty  = "Empty, every change is a violation. Start strict and allow paths after review."
	hintPreset = "Preset for this workspace. Entries allow a path, everything under a folder/, or a glob."
)

// lookupDelay is how long the workspace field must rest before the
// allowlist approved for it is looked up (not on every keystroke).
const lookupDelay = 250 * time.Millisecond

// allowPane is the Run tab's allowlist editor with its hint, and what the
// editor was loaded with: a workspace's preset or approved allowlist, and
// the lookup of the allowlist approved for the workspace in the field.
type allowPane struct {
	u         *UI
	allow     *review.AllowlistEditor
	allowHint *widget.RichText
	// presetWS is the workspace whose allowlist the editor was loaded with
	// (the demo's preset, an approved version) and presetEntries those
	// entries ("" and nil once edited away or dropped).
	presetWS      string
	presetEntries []string
	// approvedVersion is the approved allowlist version the editor was
	// loaded with (0: none) and approvedEntries its entries: a run whose
	// allowlist still equals them is recorded as using that version.
	approvedVersion int
	approvedEntries []string
	// lookupN counts the workspace field's changes (the approved
	// allowlist lookup of an older one is dropped); lookedUp is the last
	// one whose lookup was answered.
	lookupN, lookedUp int
}

func newAllowPane(u *UI) *allowPane {
	a := &allowPane{u: u, allow: review.NewAllowlistEditor()}
	a.allowHint = widget.NewRichText()
	a.allowHint.Wrapping = fyne.TextWrapWord
	a.setAllowHint(hintEmpty)
	return a
}

// pane is the allowlist's heading, hint and editor.
func (a *allowPane) pane() fyne.CanvasObject {
	return container.NewBorder(container.NewVBox(heading("Allowlist"), a.allowHint), nil, nil, nil, a.allow)
}

func (a *allowPane) setAllowHint(s string) {
	a.allowHint.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: s,
		Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText}}}
	a.allowHint.Refresh()
}

// setPreset loads entries that come with a workspace (the demo's preset,
// version > 0: an approved version) into the editor: they leave it again
// when the workspace changes, unless the reviewer edited them.
func (a *allowPane) setPreset(workspace string, entries []string, version int) {
	a.allow.SetEntries(entries)
	a.presetWS, a.presetEntries = workspaceKey(workspace), slices.Clone(entries)
	a.approvedVersion, a.approvedEntries = 0, nil
	if version > 0 {
		a.approvedVersion, a.approvedEntries = version, slices.Clone(entries)
	}
}

// dropPreset empties the editor when it holds, unedited, the preset of a
// workspace other than key.
func (a *allowPane) dropPreset(key string) {
	if a.presetWS == "" || key == a.presetWS || !slices.Equal(a.allow.Entries(), a.presetEntries) {
		return
	}
	a.allow.SetEntries(nil)
	a.presetWS, a.presetEntries = "", nil
	a.approvedVersion, a.approvedEntries = 0, nil
	a.setAllowHint(hintEmpty)
}

// lookUp loads, once the field has rested, the newest allowlist approved
// for the workspace ws (key: its workspaceKey), read off the UI goroutine.
func (a *allowPane) lookUp(ws, key string) {
	a.lookupN++
	gen, h := a.lookupN, a.u.hist
	if h == nil || ws == "" {
		return
	}
	time.AfterFunc(lookupDelay, func() {
		al, err := h.LatestAllowlist(key)
		a.u.do(func() {
			if gen != a.lookupN || a.u.closed {
				return // the field changed since
			}
			if err != nil {
				a.u.log.Warn().Err(err).Str("workspace", ws).Msg("read approved allowlist")
				return
			}
			a.lookedUp = gen
			a.lookedUpAllowlist(ws, al)
		})
	})
}

// lookedUpAllowlist takes the answer of a lookup for ws (nil: none approved).
func (a *allowPane) lookedUpAllowlist(ws string, al *history.Allowlist) {
	if al == nil {
		if a.presetWS == "" && len(a.allow.Entries()) == 0 {
			a.setAllowHint("No allowlist approved for this workspace yet: every change is a violation. Approve one after a review.")
		}
		return
	}
	a.setPreset(ws, al.Entries, al.Version)
	a.setAllowHint(fmt.Sprintf("Version %d of the allowlist approved for this workspace (%s, %s).",
		al.Version, al.CreatedAt.Local().Format("2006-01-02 15:04"), count.Of(len(al.Entries), "entry")))
}

// loadApproved takes an allowlist just approved for workspace (al: the
// saved version, nil when the history is unavailable) into the editor.
func (a *allowPane) loadApproved(workspace string, entries []string, al *history.Allowlist) {
	if al == nil {
		a.setPreset(workspace, entries, 0)
		a.setAllowHint("The allowlist you approved (for this session: the history is unavailable).")
		return
	}
	a.setPreset(workspace, al.Entries, al.Version)
	a.setAllowHint(fmt.Sprintf("Version %d of the allowlist approved for this workspace, approved just now (%s).",
		al.Version, count.Of(len(al.Entries), "entry")))
}

// allowlistVersion is the approved version the editor's entries are (0
// when they were edited or none was loaded).
func (a *allowPane) allowlistVersion() int {
	if a.approvedVersion > 0 && slices.Equal(a.allow.Entries(), a.approvedEntries) {
		return a.approvedVersion
	}
	return 0
}

// workspaceKey is the form in which the gate reports, and the history
// stores, the workspace ws: absolute, symlinks resolved.
func workspaceKey(ws string) string {
	k, err := history.WorkspaceKey(strings.TrimSpace(ws))
	if err != nil {
		return ws
	}
	return k
}
