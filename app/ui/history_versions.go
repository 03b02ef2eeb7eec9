//go:build !js

package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/oneline"
)

// versionsWorkspace is the workspace whose allowlists are shown: the
// filter's, else the selected run's, else the most recent run's.
func (t *historyTab) versionsWorkspace() string {
	if t.wsFilter != "" {
		return t.wsFilter
	}
	if i := t.indexOf(t.selected); i >= 0 {
		return t.rows[i].Workspace
	}
	if len(t.all) > 0 {
		return t.all[0].Workspace
	}
	return ""
}

// showVersions lists the workspace's approved allowlist versions, newest
// first, each with what it added (+, green) and removed (−, red) compared
// with the version before; read off the UI goroutine (the cards of the
// same workspace stay until the answer replaces them).
func (t *historyTab) showVersions() {
	ws := t.versionsWorkspace()
	if ws == "" || t.u.hist == nil {
		t.versionsFor = ""
		t.versionsN++ // an answer still under way is stale
		t.versions.Objects = nil
		t.versions.Refresh()
		t.versionsWS.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: "Select a run or a workspace.",
			Style: widget.RichTextStyle{ColorName: style.Muted}}}
		t.versionsWS.Refresh()
		return
	}
	if ws != t.versionsFor {
		t.versionsFor = ws
		t.versions.Objects = nil
		t.versions.Refresh()
		t.versionsWS.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: ws,
			Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText, TextStyle: fyne.TextStyle{Monospace: true}}}}
		t.versionsWS.Refresh()
	}
	h := t.u.hist
	background(t, &t.versionsN, func() ([]history.Allowlist, error) { return h.Allowlists(ws) }, func(list []history.Allowlist, err error) {
		t.versions.Objects = nil
		defer t.versions.Refresh()
		if err != nil {
			t.versions.Add(wrapped("Cannot read the allowlists: "+oneline.Flat(err.Error()), style.FailColor, false))
			return
		}
		if len(list) == 0 {
			t.versions.Add(wrapped("No allowlist approved for this workspace yet. Approve one from the Review tab.", style.Muted, false))
			return
		}
		for i := len(list) - 1; i >= 0; i-- {
			var prev *history.Allowlist
			if i > 0 {
				prev = &list[i-1]
			}
			t.versions.Add(versionCard(prev, &list[i], i == len(list)-1))
		}
	})
}

// versionCard shows one allowlist version and its change from prev.
func versionCard(prev, cur *history.Allowlist, latest bool) fyne.CanvasObject {
	added, removed := history.DiffAllowlists(prev, cur)
	segs := []widget.RichTextSegment{
		&widget.TextSegment{Text: fmt.Sprintf("Version %d", cur.Version), Style: widget.RichTextStyle{Inline: true, TextStyle: fyne.TextStyle{Bold: true}}},
		&widget.TextSegment{Text: "   " + cur.CreatedAt.Local().Format("2006-01-02 15:04") + "   " + count.Of(len(cur.Entries), "entry"),
			Style: widget.RichTextStyle{Inline: true, ColorName: style.Muted}},
	}
	if latest {
		segs = append(segs, &widget.TextSegment{Text: "   latest", Style: widget.RichTextStyle{Inline: true, ColorName: style.PassColor, TextStyle: fyne.TextStyle{Bold: true}}})
	}
	objs := []fyne.CanvasObject{widget.NewRichText(segs...)}
	if cur.Note != "" {
		objs = append(objs, wrapped("“"+cur.Note+"”", style.Muted, false))
	}
	mono := func(s string, c fyne.ThemeColorName) fyne.CanvasObject {
		r := widget.NewRichText(&widget.TextSegment{Text: s, Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Monospace: true}}})
		r.Wrapping = fyne.TextWrapBreak
		return r
	}
	for _, e := range added {
		objs = append(objs, mono("+ "+e, style.Added))
	}
	for _, e := range removed {
		objs = append(objs, mono("− "+e, style.Removed))
	}
	if len(added) == 0 && len(removed) == 0 {
		objs = append(objs, wrapped("Same entries as version "+fmt.Sprint(prevVersion(prev)), style.Muted, false))
	}
	return container.NewPadded(callout(container.New(&tightVBox{}, objs...), theme.ColorNameSeparator))
}

func prevVersion(a *history.Allowlist) int {
	if a == nil {
		return 0
	}
	return a.Version
}

// tightVBox stacks objects vertically without padding (rich text already
// pads itself).
type tightVBox struct{}

func (tightVBox) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	y := float32(0)
	for _, o := range objs {
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(s.Width, h))
		y += h - 2*theme.Padding()
	}
}

func (tightVBox) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var w, h float32
	for _, o := range objs {
		m := o.MinSize()
		w = max(w, m.Width)
		h += m.Height - 2*theme.Padding()
	}
	return fyne.NewSize(w, h+2*theme.Padding())
}
