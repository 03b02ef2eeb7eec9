package report

import (
	"fmt"
	"strings"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// ChangeLine renders a change as the CLI's "KIND path (detail)" line.
func ChangeLine(c *diff.Change) string {
	line := strings.ToUpper(string(c.Kind)) + " " + quote.Path(c.Path)
	if d := ChangeDetail(c); d != "" {
		line += " (" + d + ")"
	}
	return line
}

// ChangeDetail describes the non-content aspects, the risk and a denying
// rule, e.g. "mode 0644 -> 0755"; "" when there is nothing beyond the kind.
func ChangeDetail(c *diff.Change) string {
	var parts []string
	b, a := c.Before, c.After
	if b != nil && a != nil {
		if c.Has(diff.TypeA) {
			parts = append(parts, fmt.Sprintf("type %s -> %s", b.Type, a.Type))
		}
		if c.Has(diff.Mode) {
			parts = append(parts, fmt.Sprintf("mode %s -> %s", b.ModeString(), a.ModeString()))
		}
		if c.Has(diff.Target) {
			parts = append(parts, fmt.Sprintf("target %s -> %s", quote.Path(b.Target), quote.Path(a.Target)))
		}
		if c.Has(diff.Owner) {
			parts = append(parts, fmt.Sprintf("owner %d:%d -> %d:%d", b.UID, b.GID, a.UID, a.GID))
		}
		if c.Has(diff.Xattr) {
			parts = append(parts, fmt.Sprintf("xattr %s -> %s", xattrNames(b), xattrNames(a)))
		}
	}
	if c.Risk != diff.NoRisk {
		r := string(c.Risk)
		switch {
		case c.Risk == diff.SymlinkEscape && a != nil && !c.Has(diff.Target):
			r += " -> " + quote.Path(a.Target)
		case c.Risk == diff.HardlinkEscape && a != nil && a.Nlink > 1:
			r += fmt.Sprintf(": %d links, %d in the workspace", a.Nlink, c.LinksInside)
		}
		parts = append(parts, r)
	}
	if !c.Allowed && c.Rule != "" {
		parts = append(parts, "denied by "+c.Rule)
	} else if !c.Allowed && c.Risk != diff.NoRisk {
		// Only an entry naming the risk allows it: name the narrowest one.
		if need := policy.Needed(c); len(need) > 0 {
			parts = append(parts, "allow with "+strings.Join(need, " and "))
		}
	}
	return strings.Join(parts, ", ")
}

// ProcessLines renders the process findings as the CLI prints them:
// "EXIT 3", "TIMEOUT 2s", "LEFTOVER pid 4211 sleep 300".
func ProcessLines(r *Report) []string {
	var out []string
	p := &r.Process
	switch {
	case p.TimedOut:
		out = append(out, "TIMEOUT "+p.Timeout)
	case p.Cancelled:
		out = append(out, "CANCELLED")
	case p.Signal != "":
		out = append(out, "SIGNAL "+p.Signal)
	case p.ExitCode != 0:
		out = append(out, fmt.Sprintf("EXIT %d", p.ExitCode))
	}
	for _, l := range p.Leftovers {
		out = append(out, fmt.Sprintf("LEFTOVER pid %d %s", l.PID, quote.Text(l.Cmd)))
	}
	return out
}

// Lines renders every violation and process finding, in the CLI's order:
// changes sorted by path first, then the other findings (OtherLines), then
// process findings.
func (r *Report) Lines() []string {
	var out []string
	for i := range r.Changes {
		if !r.Changes[i].Allowed {
			out = append(out, ChangeLine(&r.Changes[i]))
		}
	}
	out = append(out, r.OtherLines()...)
	return append(out, ProcessLines(r)...)
}

// OtherLines renders the findings that are neither workspace changes nor
// process findings, in the CLI's order: unreadable entries ("UNREADABLE
// path (reason)"), blocked actions ("BLOCKED write /home/u/.bashrc"), then
// changes outside the workspace ("OUTSIDE changed /home/u/.bashrc (size
// 5 B -> 7 B)").
func (r *Report) OtherLines() []string {
	out := UnreadableLines(r.Unreadable)
	for i := range r.Blocked {
		out = append(out, r.Blocked[i].Line())
	}
	for i := range r.Outside {
		out = append(out, r.Outside[i].Line())
	}
	return out
}

// Line renders o as the CLI's "OUTSIDE KIND PATH (detail)" line, KIND
// lower-case as in the report (added, removed, changed).
func (o *Outside) Line() string {
	line := "OUTSIDE " + string(o.Kind) + " " + quote.Path(o.Path)
	if d := o.Detail(); d != "" {
		line += " (" + d + ")"
	}
	return line
}

// Detail describes a change outside the workspace from stat alone: what an
// added or removed entry is ("file 0644 5 B"), or what changed ("size
// 5 B -> 7 B", "mode 0644 -> 0600", "modified, same size", "replaced (new
// inode)", "cannot stat after the run: permission denied").
func (o *Outside) Detail() string {
	b, a := o.Before, o.After
	switch {
	case o.Kind == diff.Added && a != nil:
		return entrySummary(a)
	case o.Kind == diff.Removed && b != nil:
		return entrySummary(b)
	case b == nil || a == nil:
		return ""
	}
	if o.Has(OutsideStat) {
		if a.Err != "" {
			return "cannot stat after the run: " + quote.Text(a.Err)
		}
		return "cannot stat before the run: " + quote.Text(b.Err)
	}
	var parts []string
	if o.Has(OutsideType) {
		parts = append(parts, fmt.Sprintf("type %s -> %s", b.Type, a.Type))
	}
	if o.Has(OutsideMode) {
		parts = append(parts, fmt.Sprintf("mode %s -> %s", b.ModeString(), a.ModeString()))
	}
	if o.Has(OutsideOwner) {
		parts = append(parts, fmt.Sprintf("owner %d:%d -> %d:%d", b.UID, b.GID, a.UID, a.GID))
	}
	if o.Has(OutsideTarget) {
		parts = append(parts, fmt.Sprintf("target %s -> %s", quote.Path(b.Target), quote.Path(a.Target)))
	}
	if o.Has(OutsideSize) {
		from, to := Size(b.Size), Size(a.Size)
		if from == to { // 3.7 KiB -> 3.7 KiB says nothing
			from, to = fmt.Sprintf("%d B", b.Size), fmt.Sprintf("%d B", a.Size)
		}
		parts = append(parts, fmt.Sprintf("size %s -> %s", from, to))
	} else if o.Has(OutsideMTime) {
		parts = append(parts, "modified, same size")
	}
	if o.Has(OutsideDevice) {
		parts = append(parts, "device number changed")
	}
	if o.Has(OutsideLinks) {
		parts = append(parts, fmt.Sprintf("links %d -> %d", linkCount(b), linkCount(a)))
	}
	if o.Has(OutsideInode) {
		parts = append(parts, "replaced (new inode)")
	}
	if len(parts) == 0 && o.Has(OutsideCTime) {
		parts = append(parts, "status changed (ctime)")
	}
	return strings.Join(parts, ", ")
}

// linkCount is a file's number of names (Entry.Nlink records only counts
// above 1).
func linkCount(e *snapshot.Entry) uint32 {
	if e.Nlink == 0 && e.Type == snapshot.File {
		return 1
	}
	return e.Nlink
}

// Summary is the watch in one line: "watched 21 paths outside the
// workspace (24 entries)", then what could not be watched and which walks a
// bound cut.
func (w *Watch) Summary() string {
	if w == nil {
		return ""
	}
	n, existed := 0, 0
	var cut []string
	standIn := map[string]bool{}
	for _, p := range w.Paths {
		if p.Skipped == "" {
			n++
			if p.Entries > 0 {
				existed++
			}
		}
		if p.For != "" {
			standIn[p.For] = true
		}
		if p.Cut != "" {
			cut = append(cut, quote.Path(p.Path)+" ("+p.Cut+")")
		}
	}
	// What was watched, and what of it was there to record: "watched 28
	// paths outside the workspace (stat only): 1 existed before the run
	// (1 entry), 27 did not".
	line := fmt.Sprintf("watched %s outside the workspace (stat only): ", count.Of(n, "path"))
	switch {
	case existed == 0:
		line += "none existed before the run"
	case existed == n:
		line += fmt.Sprintf("all existed before the run (%s)", count.Of(w.Entries, "entry"))
	default:
		line += fmt.Sprintf("%d existed before the run (%s), %d did not", existed, count.Of(w.Entries, "entry"), n-existed)
	}
	if len(w.Unwatchable) > 0 {
		parts := make([]string, len(w.Unwatchable))
		for i, u := range w.Unwatchable {
			parts[i] = quote.Path(u.Path) + " (" + quote.Text(u.Reason)
			if standIn[u.Path] {
				parts[i] += ", its directory is watched instead, stat only"
			}
			parts[i] += ")"
		}
		line += "; not watchable: " + strings.Join(parts, ", ")
	}
	if len(cut) > 0 {
		line += "; walk cut short: " + strings.Join(cut, ", ")
	}
	return line
}

// UnreadableLines renders unreadable entries as the CLI prints them.
func UnreadableLines(us []diff.Unknown) []string {
	var out []string
	for i := range us {
		out = append(out, us[i].Line(quote.Path))
	}
	return out
}

// xattrNames lists an entry's extended attribute names for a detail:
// "none", or the names comma-separated (values show only as a change).
func xattrNames(e *snapshot.Entry) string {
	names, _, _ := strings.Cut(e.Xattr, "#")
	if names == snapshot.XattrNone || names == "" {
		return "none"
	}
	return quote.Path(names)
}
