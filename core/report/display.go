package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/quote"
)

// ProcessStatus describes how the script ended: "exited 0", "exited 3",
// "timed out after 2s", "killed by signal SIGKILL" or "cancelled".
func ProcessStatus(p *Process) string {
	switch {
	case p.Cancelled:
		return "cancelled"
	case p.TimedOut:
		if p.Timeout != "" {
			return "timed out after " + p.Timeout
		}
		return "timed out"
	case p.Signal != "":
		return "killed by signal " + p.Signal
	}
	return fmt.Sprintf("exited %d", p.ExitCode)
}

// processOK reports whether the process ended cleanly (exit 0, nothing left).
func processOK(p *Process) bool {
	return !p.Cancelled && !p.TimedOut && p.Signal == "" && p.ExitCode == 0
}

// fmtTime formats a report time; the zero time is "—".
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Format(time.RFC3339)
}

// duration is the run's wall time, "" when a time is missing.
func (r *Report) duration() string {
	if r.StartedAt.IsZero() || r.FinishedAt.IsZero() || r.FinishedAt.Before(r.StartedAt) {
		return ""
	}
	d := r.FinishedAt.Sub(r.StartedAt)
	switch {
	case d >= time.Second:
		d = d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		d = d.Round(time.Millisecond)
	}
	return d.String()
}

// Size formats a byte count: "17 B", "1.5 KiB", "3.0 MiB" (bytesize.Parse
// reads a size given by the user).
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// fmtOwner formats an entry's numeric owner, "" when unknown.
func fmtOwner(e *snapshot.Entry) string {
	if e == nil || e.UID < 0 {
		return ""
	}
	return fmt.Sprintf("%d:%d", e.UID, e.GID)
}

// entrySummary is a one-line description of an entry: "file 0644 17 B",
// "symlink -> /etc/passwd", "dir 0755".
func entrySummary(e *snapshot.Entry) string {
	if e == nil {
		return "—"
	}
	var parts []string
	parts = append(parts, string(e.Type))
	if e.Type != snapshot.Symlink && e.Type != "" {
		parts = append(parts, e.ModeString())
	}
	switch e.Type {
	case snapshot.File:
		parts = append(parts, Size(e.Size))
	case snapshot.Symlink:
		parts = append(parts, "-> "+quote.Path(e.Target))
	}
	return strings.Join(parts, " ")
}

// kindLabel is the upper-case kind word the CLI prints.
func kindLabel(k diff.Kind) string { return strings.ToUpper(string(k)) }

// splitChanges returns the violations and the allowed changes, each ranked
// (RankOrder: risks, edits, removals, additions; by path within a rank).
func (r *Report) splitChanges() (violations, allowed []*diff.Change) {
	for _, i := range RankOrder(r.Changes) {
		c := &r.Changes[i]
		if c.Allowed {
			allowed = append(allowed, c)
		} else {
			violations = append(violations, c)
		}
	}
	return violations, allowed
}

// outputText joins a stream's head and tail, marking the elided middle.
func outputText(head, tail string) string {
	head, tail = quote.Clean(head), quote.Clean(tail)
	if head == "" {
		return tail
	}
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return head + "[… output elided …]\n" + tail
}

// changeDetail is ChangeDetail led by the change of a file's content: its
// added and removed lines when it has a text diff, and its size, e.g.
// "content +3 −1 (17 B -> 16 B), mode 0644 -> 0755"; a change without a
// text diff ends with why ("no text diff: too large").
func changeDetail(c *diff.Change) string {
	var parts []string
	if c.Kind == diff.Changed && c.Has(diff.Content) && c.Before != nil && c.After != nil &&
		c.Before.Type == snapshot.File && c.After.Type == snapshot.File {
		content := fmt.Sprintf("content %s -> %s", Size(c.Before.Size), Size(c.After.Size))
		if c.TextDiff != "" {
			add, del, partial := textdiff.Counts(c.TextDiff)
			more := ""
			if partial {
				more = " or more"
			}
			content = fmt.Sprintf("content +%d −%d%s (%s -> %s)", add, del, more, Size(c.Before.Size), Size(c.After.Size))
		}
		parts = append(parts, content)
	}
	if d := ChangeDetail(c); d != "" {
		parts = append(parts, d)
	}
	if c.TextDiff == "" && c.DiffNote != "" {
		parts = append(parts, "no text diff: "+noteWordsOf(c.DiffNote))
	}
	return strings.Join(parts, ", ")
}
