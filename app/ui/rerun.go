//go:build !js

package ui

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/core/netproxy"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/quote"
)

// rerunGrants are what "Rerun with these grants" adds to a failed run:
// the fixes pipeline.ContainHints names for its blocked actions, made concrete.
// They hold for that one run (its containment.grants records them); the
// Run tab's settings stay as they were.
type rerunGrants struct {
	// hosts are --net-allow entries: the hosts the proxy refused as not
	// on the list (HOST:PORT) and the names looked up directly (HOST).
	hosts []string
	// entries are allowlist entries: the profiles of the tool caches the
	// script wrote (preset:go-build gives a private one).
	entries []string
	// writable are --writable folders (absolute): a git directory's, or
	// the folder of a write outside the workspace.
	writable []string
}

// rerunState is the Run tab's part of a rerun: the grants the next start
// adds (once), and the last offer's button and confirmation (for tests).
type rerunState struct {
	grants *rerunGrants
	btn    *widget.Button
	dialog *dialog.ConfirmDialog
	lines  []string
}

func (g rerunGrants) empty() bool {
	return len(g.hosts)+len(g.entries)+len(g.writable) == 0
}

// lines says each grant as the confirmation lists it.
func (g rerunGrants) lines() []string {
	var out []string
	for _, h := range g.hosts {
		out = append(out, "network to "+h+" through the recording proxy (--net-allow "+h+")")
	}
	for _, e := range g.entries {
		p := pipeline.ProfileNamed(strings.TrimPrefix(e, "preset:"))
		what := "its allowlist entries"
		if p != nil {
			what += ", a private cache, its settings and network to " + strings.Join(p.Hosts, ", ")
		}
		out = append(out, "profile "+e+": "+what+" (--allow "+e+")")
	}
	for _, w := range g.writable {
		out = append(out, "write below "+quote.Path(w)+" (--writable)")
	}
	return out
}

// grantsFor computes the grants for a failed run's blocked actions; none
// for a pass, a run without blocked actions, or a report the Run tab
// cannot run again (an inline script, a comparison).
func grantsFor(r *report.Report, home string) rerunGrants {
	var g rerunGrants
	if r == nil || r.Verdict == report.Pass || len(r.Blocked) == 0 || r.Script.Path == "" || r.Script.Inline {
		return g
	}
	add := func(list *[]string, s string) {
		if !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, h := range pipeline.ContainHints(r, home) {
		switch {
		case h.Kind == "net":
			for _, q := range r.Network {
				if !q.Allowed && q.Reason == netproxy.ReasonNotAllowed && q.Host != "" && q.Port > 0 {
					add(&g.hosts, netproxy.Rule{Host: q.Host, Port: q.Port}.String())
				}
			}
			for _, b := range r.Blocked {
				if b.Kind == "dns" && lookedUpName(b.Target) {
					add(&g.hosts, b.Target)
				}
			}
		case h.Entry != "":
			add(&g.entries, h.Entry)
		case strings.HasPrefix(h.Flag, "--writable "):
			dir := strings.TrimPrefix(h.Flag, "--writable ")
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(r.Workspace, dir)
			}
			add(&g.writable, dir)
		}
	}
	return g
}

// lookedUpName reports whether a dns block's target is the name looked
// up (not the name server's ADDR:53, recorded when the name was not seen).
func lookedUpName(t string) bool {
	if _, err := netip.ParseAddrPort(t); err == nil {
		return false
	}
	r, err := netproxy.ParseRule(t)
	return err == nil && !r.Wildcard && !r.Deny && r.Port == 0
}

// rerunButton is the review banner's "Rerun with these grants" for a
// failed run whose blocked actions have a fix to grant (nil otherwise).
func (u *UI) rerunButton(r *report.Report) fyne.CanvasObject {
	home, _ := os.UserHomeDir()
	g := grantsFor(r, home)
	if g.empty() || u.run == nil {
		return nil
	}
	b := widget.NewButtonWithIcon("Rerun with these grants", theme.MediaReplayIcon(), func() { u.confirmRerun(r, g) })
	b.Importance = widget.LowImportance
	u.run.rerunState.btn = b
	return b
}

// confirmRerun lists exactly what the rerun would grant; Rerun runs the
// script again, through the Run tab, with those grants.
func (u *UI) confirmRerun(r *report.Report, g rerunGrants) {
	items := container.NewVBox()
	for _, l := range g.lines() {
		lbl := widget.NewLabel("• " + l)
		lbl.Wrapping = fyne.TextWrapWord
		items.Add(lbl)
	}
	head := widget.NewLabel("Run " + quote.Path(r.Script.Path) + " again in " + quote.Path(r.Workspace) +
		", for this run only, with:")
	head.Wrapping = fyne.TextWrapWord
	foot := widget.NewLabel("Nothing else is granted. The run records each grant.")
	body := container.NewBorder(head, foot, nil, nil, container.NewVScroll(items))
	d := dialog.NewCustomConfirm("Rerun with these grants", "Rerun", "Cancel",
		container.NewGridWrap(fyne.NewSize(560, 80+60*float32(len(g.lines()))), body), func(ok bool) {
			if ok {
				u.run.rerun(r, g)
			}
		}, u.win)
	u.run.rerunState.dialog, u.run.rerunState.lines = d, g.lines()
	u.keys.Modal(d)
	d.Show()
}

// rerun runs r's script again from the Run tab with the grants added to
// its settings for that run.
func (t *runTab) rerun(r *report.Report, g rerunGrants) {
	if t.running {
		return
	}
	if workspaceKey(t.workspace.Text) != workspaceKey(r.Workspace) || t.script.Text != r.Script.Path {
		t.setInputs(r.Workspace, r.Script.Path, nil)
		t.args.SetText(joinArgs(r.Script.Args))
	}
	t.rerunState.grants = &g
	t.u.Tabs.Select(t.u.runItem)
	t.start()
}

// withGrants adds the one-shot grants of a rerun (if any) to a run's
// allowlist and policy, and clears them.
func (t *runTab) withGrants(allow []string, pol pipeline.ContainPolicy) ([]string, pipeline.ContainPolicy) {
	g := t.rerunState.grants
	t.rerunState.grants = nil
	if g == nil {
		return allow, pol
	}
	for _, e := range g.entries {
		if !slices.Contains(allow, e) {
			allow = append(allow, e)
		}
	}
	pol.NetAllow = append(pol.NetAllow, g.hosts...)
	for _, w := range g.writable {
		if !slices.Contains(pol.Writable, w) {
			pol.Writable = append(pol.Writable, w)
		}
	}
	return allow, pol
}

// joinArgs writes arguments back as the Run tab's field splits them
// (splitArgs): each in single quotes when it needs them.
func joinArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
