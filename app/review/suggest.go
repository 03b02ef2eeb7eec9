package review

import (
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
)

// Suggestion is an allowlist entry that would allow a change.
type Suggestion = policy.Suggestion

// Suggestions lists the entries that would allow c, narrowest first
// (policy.Suggestions, shared with the CLI).
func Suggestions(c *diff.Change) []Suggestion { return policy.Suggestions(c) }
