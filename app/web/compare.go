package web

import (
	"errors"
	"fmt"
	"strings"

	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/count"
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
		return fmt.Sprintf("seed snapshot, %s", count.Of(len(m.Entries), "file"))
	}
	s := fmt.Sprintf("diffgate manifest, %s", count.Of(len(m.Entries), "entry"))
	if m.Root != "" {
		s += " of " + m.Root
	}
	return s
}

// Compare builds the report of the changes from before to after, judged by
// the allowlist text (one entry per line, "#" comments): report.Compare,
// as diffgate diff does.
func Compare(before, after *snapshot.Manifest, allowlist string) (*report.Report, error) {
	entries, problems := policy.ParseLines(allowlist)
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
	return report.Compare(before, after, p, entries), nil
}
