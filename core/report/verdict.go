package report

import (
	"fmt"
	"maps"
	"slices"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// Apply re-evaluates the changes against p and recomputes the verdict and
// reasons. It is how a reviewer's edited allowlist takes effect without a
// rerun.
func (r *Report) Apply(p *policy.Policy, entries []string) {
	p.Apply(r.Changes)
	r.Allowlist = append([]string{}, entries...)
	r.Evaluate()
}

// Evaluate recomputes Verdict and Reasons from the changes' Allowed flags and
// the process outcome: the run passes only with no violation, no unreadable
// entry, no blocked action, no change outside the workspace, exit code 0, no
// timeout, no cancellation, no leftover process and a supervisor that saw the
// run to its end.
func (r *Report) Evaluate() {
	var reasons []string
	if n := len(policy.Violations(r.Changes)); n > 0 {
		reasons = append(reasons, count.Of(n, "unexpected change"))
	}
	risky := 0
	for _, c := range r.Changes {
		if !c.Allowed && c.Risk != diff.NoRisk {
			risky++
		}
	}
	if risky > 0 {
		reasons = append(reasons, count.Of(risky, "risky change"))
	}
	for _, f := range []struct {
		n          int
		one, other string
	}{
		{len(r.Unreadable), "unreadable entry", "unreadable entries"},
		{r.blockedCount(), "blocked action", "blocked actions"},
		{len(r.Outside), "change outside the workspace", "changes outside the workspace"},
	} {
		switch {
		case f.n == 1:
			reasons = append(reasons, "1 "+f.one)
		case f.n > 1:
			reasons = append(reasons, fmt.Sprintf("%d %s", f.n, f.other))
		}
	}
	pr := &r.Process
	switch {
	case pr.Cancelled:
		reasons = append(reasons, "run cancelled")
	case pr.TimedOut:
		reasons = append(reasons, "script timed out")
	case pr.Signal != "":
		reasons = append(reasons, "script killed by signal "+pr.Signal)
	case pr.ExitCode != 0:
		reasons = append(reasons, fmt.Sprintf("script exited %d", pr.ExitCode))
	}
	if n := len(pr.Leftovers); n > 0 {
		reasons = append(reasons, count.Of(n, "leftover process"))
	}
	if pr.Supervisor != "" {
		reasons = append(reasons, "supervisor "+pr.Supervisor)
	}
	r.Reasons = reasons
	if r.Reasons == nil {
		r.Reasons = []string{}
	}
	r.Verdict = Pass
	if len(reasons) > 0 {
		r.Verdict = Fail
	}
}

// blockedCount counts the blocked actions: those listed and those beyond
// the list's bound (Containment.BlockedDropped).
func (r *Report) blockedCount() int {
	return len(r.Blocked) + r.blockedDropped()
}

// blockedDropped is Containment.BlockedDropped (0 without containment).
func (r *Report) blockedDropped() int {
	if r.Containment == nil {
		return 0
	}
	return r.Containment.BlockedDropped
}

// BlockedDroppedNote says how many blocked actions were counted but not
// listed, by kind ("1500 more blocked actions, beyond the list's bound,
// counted but not listed: write 1200, create 300"); "" when none were.
func (r *Report) BlockedDroppedNote() string {
	n := r.blockedDropped()
	if n == 0 {
		return ""
	}
	note := count.Of(n, "more blocked action") + ", beyond the list's bound, counted but not listed"
	kinds := slices.Sorted(maps.Keys(r.Containment.BlockedDroppedKinds))
	for i, k := range kinds {
		if i == 0 {
			note += ":"
		} else {
			note += ","
		}
		note += fmt.Sprintf(" %s %d", quote.Text(k), r.Containment.BlockedDroppedKinds[k])
	}
	return note
}

// Counts tallies a report's changes for summaries and counters; Blocked
// and Outside count the blocked actions and the changes outside the
// workspace.
type Counts struct {
	Added, Removed, Changed, Allowed, Violations, Risky int
	Blocked, Outside                                    int
}

// Count tallies the changes.
func (r *Report) Count() Counts {
	c := Counts{Blocked: r.blockedCount(), Outside: len(r.Outside)}
	for _, ch := range r.Changes {
		switch ch.Kind {
		case diff.Added:
			c.Added++
		case diff.Removed:
			c.Removed++
		case diff.Changed:
			c.Changed++
		}
		if ch.Allowed {
			c.Allowed++
		} else {
			c.Violations++
		}
		if ch.Risk != diff.NoRisk {
			c.Risky++
		}
	}
	return c
}
