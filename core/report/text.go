package report

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/diffgate/diffgate/core/diff"
)

// QuotePath prints a path as the CLI does: quoted (Go %q) when it contains a
// newline or is not valid UTF-8, raw otherwise.
func QuotePath(p string) string {
	if strings.ContainsAny(p, "\n\r") || !utf8.ValidString(p) {
		return fmt.Sprintf("%q", p)
	}
	return p
}

// ChangeLine renders a change as the CLI's "KIND path (detail)" line.
func ChangeLine(c *diff.Change) string {
	line := strings.ToUpper(string(c.Kind)) + " " + QuotePath(c.Path)
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
			parts = append(parts, fmt.Sprintf("target %s -> %s", QuotePath(b.Target), QuotePath(a.Target)))
		}
		if c.Has(diff.Owner) {
			parts = append(parts, fmt.Sprintf("owner %d:%d -> %d:%d", b.UID, b.GID, a.UID, a.GID))
		}
	}
	if c.Risk != diff.NoRisk {
		r := string(c.Risk)
		if c.Risk == diff.SymlinkEscape && a != nil && !c.Has(diff.Target) {
			r += " -> " + QuotePath(a.Target)
		}
		parts = append(parts, r)
	}
	if !c.Allowed && c.Rule != "" {
		parts = append(parts, "denied by "+c.Rule)
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
		out = append(out, fmt.Sprintf("LEFTOVER pid %d %s", l.PID, l.Cmd))
	}
	return out
}

// Lines renders every violation and process finding, in the CLI's order:
// changes sorted by path first, then process findings.
func (r *Report) Lines() []string {
	var out []string
	for i := range r.Changes {
		if !r.Changes[i].Allowed {
			out = append(out, ChangeLine(&r.Changes[i]))
		}
	}
	return append(out, ProcessLines(r)...)
}
