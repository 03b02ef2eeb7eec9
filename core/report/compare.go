package report

import (
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/snapshot"
)

// Compare is the report of the changes from manifest before to after,
// judged by policy p (written as entries): the changes of diff.Compare
// with the allowlist applied, the entries either manifest could not read
// (diff.Unreadable: each fails the verdict), and the verdict. There is no
// process: only the files decide. diffgate diff and the web app's Compare
// both use it.
func Compare(before, after *snapshot.Manifest, p *policy.Policy, entries []string) *Report {
	root := after.Root
	if root == "" {
		root = before.Root
	}
	r := &Report{
		Schema:     Schema,
		Workspace:  root,
		Reasons:    []string{},
		Script:     Script{Args: []string{}},
		Changes:    diff.Compare(before, after, diff.Options{Root: root}),
		Unreadable: diff.Unreadable(before, after),
	}
	if r.Changes == nil {
		r.Changes = []diff.Change{}
	}
	r.Apply(p, entries)
	return r
}
