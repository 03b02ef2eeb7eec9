package review

import (
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// The change list shows, besides the workspace's changes, the run's other
// findings in groups of their own, first: the actions containment blocked
// (report.Blocked, violet) and the changes found outside the workspace in
// the watched paths (report.Outside, orange). Each is a violation no
// allowlist allows. A third group lists the requests through the gate's
// proxy (report.Network, --net-allow): an allowed one is no violation, a
// refused one is among the blocked actions too. Their rows' ids start with a NUL byte, which no path
// holds: "\x00blocked" is the group, "\x00blocked\x003" its fourth action.
const (
	groupBlocked = "\x00blocked"
	groupOutside = "\x00outside"
	groupNetwork = "\x00network"
)

// isFinding reports whether row id is a finding's group or one of its items.
func isFinding(id string) bool { return strings.HasPrefix(id, "\x00") }

// isGroup reports whether row id is a findings group.
func isGroup(id string) bool { return id == groupBlocked || id == groupOutside || id == groupNetwork }

// isViolation reports whether a finding row stands for a violation: every
// blocked action and outside change, no request (a refused one is listed
// among the blocked actions).
func isViolation(id string) bool {
	return isFinding(id) && id != groupNetwork && !strings.HasPrefix(id, groupNetwork+"\x00")
}

func findingID(group string, k int) string { return group + "\x00" + strconv.Itoa(k) }

// parseFinding splits an item's id into its group and index (ok false for
// anything else).
func parseFinding(id string) (group string, k int, ok bool) {
	for _, g := range []string{groupBlocked, groupOutside, groupNetwork} {
		if rest, found := strings.CutPrefix(id, g+"\x00"); found {
			k, err := strconv.Atoi(rest)
			return g, k, err == nil
		}
	}
	return "", 0, false
}

// findings are the finding rows the filter lets through.
type findings struct {
	blocked, outside []int // indices into Report.Blocked / Report.Outside
	network          []int // indices into Report.Network
	// hiddenBlocked and hiddenOutside count those the filter hides.
	hiddenBlocked, hiddenOutside int
}

// applyFindings picks the blocked actions and outside changes f shows:
// their group's chip on, Violations on (each is one), an outside change's
// kind on, and the text filter in the target, command or path.
func (m *model) applyFindings(f *Filter) {
	m.fd = findings{}
	text := strings.ToLower(f.Text)
	has := func(ss ...string) bool {
		if text == "" {
			return true
		}
		for _, s := range ss {
			if strings.Contains(strings.ToLower(s), text) {
				return true
			}
		}
		return false
	}
	for k := range m.r.Blocked {
		b := &m.r.Blocked[k]
		if f.Blocked && f.Violations && has(b.Target, b.Cmd, b.Kind, b.Op) {
			m.fd.blocked = append(m.fd.blocked, k)
		} else {
			m.fd.hiddenBlocked++
		}
	}
	for k := range m.r.Network {
		q := &m.r.Network[k]
		if has(q.Host, q.Cmd, q.Method, q.Reason) {
			m.fd.network = append(m.fd.network, k)
		}
	}
	for k := range m.r.Outside {
		o := &m.r.Outside[k]
		if f.Outside && f.Violations && f.kindOn(o.Kind) && has(o.Path) {
			m.fd.outside = append(m.fd.outside, k)
		} else {
			m.fd.hiddenOutside++
		}
	}
}

// findingRows are the findings' rows, before the changes': each group
// that shows anything, then (when open, and always in the flat list) its
// items.
func (m *model) findingRows(tree bool, open func(id string) bool) []row {
	var out []row
	for _, g := range []struct {
		id    string
		items []int
	}{{groupBlocked, m.fd.blocked}, {groupOutside, m.fd.outside}, {groupNetwork, m.fd.network}} {
		if len(g.items) == 0 {
			continue
		}
		out = append(out, row{id: g.id})
		if tree && !open(g.id) {
			continue
		}
		for _, k := range g.items {
			out = append(out, row{id: findingID(g.id, k), depth: 1})
		}
	}
	return out
}

// groupTitle and groupColor are how a group's row reads and is drawn.
func groupTitle(id string) string {
	switch id {
	case groupBlocked:
		return "Blocked actions"
	case groupNetwork:
		return "Network"
	}
	return "Outside the workspace"
}

func groupColor(id string) fyne.ThemeColorName {
	switch id {
	case groupBlocked:
		return style.Blocked
	case groupNetwork:
		return theme.ColorNamePrimary
	}
	return style.Outside
}

func groupIcon(id string) fyne.Resource {
	switch id {
	case groupBlocked:
		return theme.CancelIcon()
	case groupNetwork:
		return theme.ComputerIcon()
	}
	return theme.WarningIcon()
}

// outOfRange reports whether item k of group g is past the report's list
// (a row of a report shown before, until the rows are rebuilt).
func outOfRange(r *report.Report, g string, k int) bool {
	switch g {
	case groupBlocked:
		return k >= len(r.Blocked)
	case groupOutside:
		return k >= len(r.Outside)
	case groupNetwork:
		return k >= len(r.Network)
	}
	return true
}

// networkBadge is "CONNECT · 1.2 MB in" or "refused: host not allowed".
func networkBadge(q *report.NetRequest) string {
	if !q.Allowed {
		return "refused: " + quote.Text(q.Reason)
	}
	return quote.Text(q.Method) + " · " + report.Size(q.BytesIn) + " in · " + report.Size(q.BytesOut) + " out"
}

// setFinding shows a findings group or one of its items.
func (r *changeRow) setFinding(th fyne.Theme, v *View, id string) {
	r.check.Hidden = true // viewed marks are for the workspace's changes
	g, k, item := parseFinding(id)
	if !item {
		g = id
	}
	c := groupColor(g)
	r.seg.Style.ColorName = c
	r.seg.Style.TextStyle = fyne.TextStyle{Bold: true}
	r.badge.Color = style.Color(th, c)
	r.badge.TextStyle.Bold = false
	if !item {
		r.arrow.Hidden = !v.tree
		if v.isOpen(id, nil) {
			r.arrow.set(theme.MenuDropDownIcon())
		} else {
			r.arrow.set(theme.MenuExpandIcon())
		}
		r.icon.SetResource(style.Colored(groupIcon(g), c))
		r.seg.Text = groupTitle(g)
		n, what := len(v.m.fd.blocked), "action"
		switch g {
		case groupOutside:
			n, what = len(v.m.fd.outside), "change"
		case groupNetwork:
			n, what = len(v.m.fd.network), "request"
		}
		r.badge.Text = count.Grouped(n, what) // short: the title must show
		r.badge.TextStyle.Bold = true
	} else {
		r.arrow.Hidden = true
		r.icon.SetResource(style.Colored(groupIcon(g), c))
		switch {
		case v.r == nil || outOfRange(v.r, g, k):
			// a row of the report shown before, until the rows are rebuilt
			r.seg.Text, r.badge.Text = "", ""
		case g == groupBlocked:
			b := &v.r.Blocked[k]
			r.seg.Text = quote.Text(b.Kind) + " " + quote.Path(b.Target)
			r.badge.Text = blockedBadge(b)
		case g == groupNetwork:
			q := &v.r.Network[k]
			r.seg.Text = quote.Text(q.Target())
			r.badge.Text = networkBadge(q)
		default:
			o := &v.r.Outside[k]
			r.seg.Text = string(o.Kind) + " " + quote.Path(o.Path)
			r.badge.Text = o.Detail()
		}
	}
	r.name.Segments = []widget.RichTextSegment{r.seg}
	r.refresh()
}

// blockedBadge is "openat · 3 times" for a blocked action's row.
func blockedBadge(b *report.Blocked) string {
	var parts []string
	if b.Op != "" {
		parts = append(parts, quote.Text(b.Op))
	}
	if b.Count > 1 {
		parts = append(parts, fmt.Sprintf("%s times", count.Digits(b.Count)))
	}
	return strings.Join(parts, " · ")
}

// showFinding shows a findings group or item in the detail.
func (v *View) showFinding(id string) {
	v.sel = -1
	v.detail.showFinding(id)
}

// showFinding displays a blocked action, a change outside the workspace,
// or what one of their groups holds.
func (d *detail) showFinding(id string) {
	r := d.v.r
	g, k, item := parseFinding(id)
	if !item {
		g = id
	}
	if r == nil || item && outOfRange(r, g, k) {
		d.clear()
		return
	}
	d.change, d.folder = -1, ""
	c := groupColor(g)
	d.icon.SetResource(style.Colored(groupIcon(g), c))
	d.suggest = nil // no allowlist entry allows a finding
	d.showAllowButton()
	d.setMeta(nil, nil)
	d.bar.update() // cancels a full diff under way
	switch {
	case !item:
		d.showGroup(r, g, c)
	case g == groupNetwork:
		d.showRequest(&r.Network[k], c)
	case g == groupBlocked:
		d.showBlocked(&r.Blocked[k], c)
	default:
		d.showOutside(&r.Outside[k], c)
	}
	d.setBody(nil)
	d.root.Refresh()
}

// setFindingTitle shows text as the detail's title in the group's color;
// mono for a path or an address, which wraps after a "/" only.
func (d *detail) setFindingTitle(text string, mono bool, c fyne.ThemeColorName) {
	st := widget.RichTextStyle{SizeName: theme.SizeNameSubHeadingText, ColorName: c, TextStyle: fyne.TextStyle{Bold: true, Monospace: mono}}
	d.title.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text, Style: st}}
	if mono {
		d.title.Segments = pathSegments(text, st)
	}
	d.title.Refresh()
}

// setStatus shows segs as the detail's status line.
func (d *detail) setStatus(segs ...widget.RichTextSegment) {
	d.status.Segments = segs
	d.status.Refresh()
}

// showGroup says what a group of findings holds.
func (d *detail) showGroup(r *report.Report, g string, c fyne.ThemeColorName) {
	d.setFindingTitle(groupTitle(g), false, c)
	switch g {
	case groupBlocked:
		d.setStatus(seg(count.Grouped(len(r.Blocked), "action")+" the containment refused, each a violation no allowlist allows: "+
			"the script tried to reach beyond what it may (a write outside the workspace, the network, a secret, a limit).", c, fyne.TextStyle{Bold: true}))
	case groupNetwork:
		d.setStatus(seg(quote.Text(r.NetworkSummary())+": requests through the gate's proxy (--net-allow); a refused one is among the blocked actions.", c, fyne.TextStyle{Bold: true}))
	default:
		d.setStatus(seg(count.Grouped(len(r.Outside), "change")+" found in the watched paths outside the workspace (stat only, before and after the run), "+
			"each a violation no allowlist allows: the allowlist speaks of the workspace only.", c, fyne.TextStyle{Bold: true}))
	}
}

// showRequest shows a network request through the gate's proxy.
func (d *detail) showRequest(q *report.NetRequest, c fyne.ThemeColorName) {
	d.setFindingTitle(quote.Text(q.Target()), true, c)
	if q.Allowed {
		d.setStatus(seg("ALLOWED "+quote.Text(q.Method), c, fyne.TextStyle{Bold: true}))
	} else {
		d.setStatus(seg("REFUSED "+quote.Text(q.Method), style.FailColor, fyne.TextStyle{Bold: true}),
			seg("   "+quote.Text(q.Reason), "", fyne.TextStyle{}))
	}
	d.setMeta(factRows([][2]string{
		{"Host", quote.Text(q.Target())},
		{"Address", quote.Text(q.Addr)},
		{"Method", quote.Text(q.Method)},
		{"Bytes out", report.Size(q.BytesOut)},
		{"Bytes in", report.Size(q.BytesIn)},
		{"Process", processText(&report.Blocked{PID: q.PID, Cmd: q.Cmd})},
		{"Reason", quote.Text(q.Reason)},
	}), nil)
}

// showBlocked shows an action the containment refused.
func (d *detail) showBlocked(b *report.Blocked, c fyne.ThemeColorName) {
	d.setFindingTitle(quote.Path(b.Target), true, c)
	st := []widget.RichTextSegment{seg("BLOCKED "+strings.ToUpper(quote.Text(b.Kind)), c, fyne.TextStyle{Bold: true})}
	if b.Count > 1 {
		st = append(st, seg(fmt.Sprintf(" (%s times)", count.Digits(b.Count)), c, fyne.TextStyle{}))
	}
	st = append(st, seg("   ", "", fyne.TextStyle{}),
		seg("Violation: containment refused it; no allowlist allows it", style.FailColor, fyne.TextStyle{Bold: true}))
	d.setStatus(st...)
	d.setMeta(factRows([][2]string{
		{"Kind", quote.Text(b.Kind)},
		{"Target", quote.Path(b.Target)},
		{"Process", processText(b)},
		{"System call", quote.Text(b.Op)},
		{"Count", count.Digits(max(b.Count, 1))},
	}), nil)
}

// showOutside shows a change in the watched paths outside the workspace.
func (d *detail) showOutside(o *report.Outside, c fyne.ThemeColorName) {
	d.setFindingTitle(quote.Path(o.Path), true, c)
	d.setStatus(seg("OUTSIDE "+strings.ToUpper(string(o.Kind)), c, fyne.TextStyle{Bold: true}),
		seg(" ("+o.Detail()+")", c, fyne.TextStyle{}), seg("   ", "", fyne.TextStyle{}),
		seg("Violation: a change outside the workspace; no allowlist allows it", style.FailColor, fyne.TextStyle{Bold: true}))
	d.setMeta(entryRows(o.Before, o.After, c, true), nil)
}

// processText is "pid 4211  curl http://…" for a blocked action.
func processText(b *report.Blocked) string {
	switch {
	case b.PID > 0 && b.Cmd != "":
		return fmt.Sprintf("pid %d  %s", b.PID, quote.Text(b.Cmd))
	case b.PID > 0:
		return fmt.Sprintf("pid %d", b.PID)
	}
	return quote.Text(b.Cmd)
}

// factRows is a two-column table of label and value (each value across
// the detail's two value columns), rows with an empty value left out.
func factRows(facts [][2]string) []fyne.CanvasObject {
	var objs []fyne.CanvasObject
	for _, f := range facts {
		if f[1] == "" {
			continue
		}
		t := widget.NewRichText(&widget.TextSegment{Text: f[1], Style: widget.RichTextStyle{Inline: true, TextStyle: fyne.TextStyle{Monospace: true}}})
		t.Truncation = fyne.TextTruncateEllipsis
		objs = append(objs, style.Tight(styledText(f[0], style.Muted, "", fyne.TextStyle{})), style.Tight(t), newSpanMark())
	}
	return objs
}
