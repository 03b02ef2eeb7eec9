package diff_test

import (
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

// TestChangesDoNotPinBefore checks that the changes carry copies of their
// before entries: a gated run releases the before manifest (most of its
// memory on a large tree) once it is compared, so nothing may point into it.
func TestChangesDoNotPinBefore(t *testing.T) {
	file := func(p, sha string) snapshot.Entry {
		return snapshot.Entry{Path: p, Type: snapshot.File, Perm: 0o644, SHA256: sha, UID: 1, GID: 1}
	}
	before := &snapshot.Manifest{Entries: []snapshot.Entry{file("a", "1"), file("b", "1"), file("c", "1")}}
	after := &snapshot.Manifest{Entries: []snapshot.Entry{file("a", "2"), file("c", "1"), file("d", "1")}}
	cs := diff.Compare(before, after, diff.Options{})
	if len(cs) != 3 {
		t.Fatalf("%d changes, want 3: %+v", len(cs), cs)
	}
	for i := range before.Entries {
		before.Entries[i] = snapshot.Entry{Path: "overwritten"}
	}
	for _, c := range cs {
		if c.Before != nil && c.Before.Path != c.Path {
			t.Errorf("%s %s: before entry points into the before manifest (now %q)", c.Kind, c.Path, c.Before.Path)
		}
	}
}
