package report

import (
	"fmt"
	"slices"

	"github.com/diffgate/diffgate/core/policy"
)

// Review decisions.
const (
	Approved = "approved"
	Rejected = "rejected"
)

// Review is a reviewer's work on a run, kept apart from the run's own
// allowlist and verdict (which never change after the run): the contract's
// `review` object.
type Review struct {
	// Allowlist is the reviewer's draft allowlist.
	Allowlist []string `json:"allowlist"`
	// Decision is Approved, Rejected or "" (a draft not decided on).
	Decision string `json:"decision,omitempty"`
	// Note is the reviewer's note.
	Note string `json:"note,omitempty"`
	// Verdict and Reasons are the run re-evaluated against Allowlist.
	Verdict string   `json:"verdict"`
	Reasons []string `json:"reasons"`
	// Violations counts the changes Allowlist leaves unallowed.
	Violations int `json:"violations"`
}

// Clone returns a copy of r whose changes can be re-evaluated (Apply)
// without touching r.
func (r *Report) Clone() *Report {
	c := *r
	c.Changes = slices.Clone(r.Changes)
	c.Reasons = slices.Clone(r.Reasons)
	c.Allowlist = slices.Clone(r.Allowlist)
	if r.Review != nil {
		rv := *r.Review
		c.Review = &rv
	}
	return &c
}

// WithReview returns a copy of the run's report r that carries the
// reviewer's draft allowlist, decision and note in Review, with the verdict
// the draft gives; r's own allowlist, verdict, reasons and per-change
// allowed/rule stay the run's. A draft equal to the run's allowlist with no
// decision and no note gives a copy without Review. A draft that does not
// parse is an error.
func (r *Report) WithReview(draft []string, decision, note string) (*Report, error) {
	out := r.Clone()
	out.Review = nil
	if slices.Equal(draft, r.Allowlist) && decision == "" && note == "" {
		return out, nil
	}
	p, err := policy.Parse(draft)
	if err != nil {
		return nil, fmt.Errorf("draft allowlist: %w", err)
	}
	re := r.Clone()
	re.Apply(p, draft)
	out.Review = &Review{Allowlist: slices.Clone(draft), Decision: decision, Note: note,
		Verdict: re.Verdict, Reasons: re.Reasons, Violations: len(policy.Violations(re.Changes))}
	if out.Review.Allowlist == nil {
		out.Review.Allowlist = []string{}
	}
	return out, nil
}
