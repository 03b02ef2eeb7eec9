package web

import (
	"errors"
	"fmt"
	"strings"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

// ParseManifest reads a manifest file the reviewer picked: one written by
// `diffgate snapshot` or the seed's snapshot.py JSON. Errors name the file
// and say when it is a report rather than a manifest.
func ParseManifest(name string, data []byte) (*snapshot.Manifest, error) {
	m, err := snapshot.Parse(data)
	if err == nil {
		return m, nil
	}
	if _, rerr := report.Parse(data); rerr == nil {
		return nil, fmt.Errorf("%s is a diffgate report, not a snapshot manifest: open it with Open report…", name)
	}
	return nil, fmt.Errorf("%s: %w", name, err)
}

// DescribeManifest is one line on a manifest: its format and size.
func DescribeManifest(m *snapshot.Manifest) string {
	if m.Seed {
		return fmt.Sprintf("seed snapshot, %s", plural(len(m.Entries), "file"))
	}
	s := fmt.Sprintf("diffgate manifest, %s", plural(len(m.Entries), "entry"))
	if m.Root != "" {
		s += " of " + m.Root
	}
	return s
}

// Compare builds the report of the changes from before to after, judged by
// the allowlist text (one entry per line, "#" comments): the changes of
// diff.Compare, the allowlist applied, the verdict evaluated. There is no
// process information: only the file changes decide the verdict.
func Compare(before, after *snapshot.Manifest, allowlist string) (*report.Report, error) {
	entries, problems := review.ParseAllowlist(allowlist)
	if len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.String()
		}
		return nil, errors.New("allowlist: " + strings.Join(msgs, "; "))
	}
	p, err := policy.Parse(entries)
	if err != nil {
		return nil, fmt.Errorf("allowlist: %w", err)
	}
	root := after.Root
	if root == "" {
		root = before.Root
	}
	r := &report.Report{
		Schema:    report.Schema,
		Workspace: root,
		Reasons:   []string{},
		Script:    report.Script{Args: []string{}},
		Changes:   diff.Compare(before, after, diff.Options{Root: root}),
	}
	if r.Changes == nil {
		r.Changes = []diff.Change{}
	}
	r.Apply(p, entries)
	return r, nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") {
		return fmt.Sprintf("%d %sies", n, what[:len(what)-1])
	}
	return fmt.Sprintf("%d %ss", n, what)
}
