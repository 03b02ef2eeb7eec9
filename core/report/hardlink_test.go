package report

import (
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

// TestHardlinkEscapeLine: a file with a name outside the workspace says how
// many names it has, how many the workspace holds, and the entry allowing
// it, in the style of symlink-escape.
func TestHardlinkEscapeLine(t *testing.T) {
	after := &snapshot.Entry{Path: "data/x", Type: snapshot.File, Perm: 0o644, Nlink: 2, UID: 1, GID: 1}
	before := *after
	for _, tc := range []struct {
		c    diff.Change
		want string
	}{
		{diff.Change{Path: "data/x", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content}, Before: &before, After: after, Risk: diff.HardlinkEscape, LinksInside: 1},
			"CHANGED data/x (hardlink-escape: 2 links, 1 in the workspace, allow with hardlink-escape:data/x)"},
		{diff.Change{Path: "data/y", Kind: diff.Added, After: &snapshot.Entry{Type: snapshot.File, Nlink: 3}, Risk: diff.HardlinkEscape, LinksInside: 2},
			"ADDED data/y (hardlink-escape: 3 links, 2 in the workspace, allow with hardlink-escape:data/y)"},
		{diff.Change{Path: "data/x", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content}, Before: &before, After: after, Risk: diff.HardlinkEscape, LinksInside: 1, Allowed: true, Rule: "hardlink-escape:data/*"},
			"CHANGED data/x (hardlink-escape: 2 links, 1 in the workspace)"},
	} {
		if got := ChangeLine(&tc.c); got != tc.want {
			t.Errorf("ChangeLine = %q\nwant        %q", got, tc.want)
		}
	}
}
