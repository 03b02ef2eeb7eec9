package diff_test

import (
	"fmt"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

// benchManifests returns before/after manifests of n entries where one in
// ten changed: content, mode, removed or added in turn.
func benchManifests(n int) (before, after *snapshot.Manifest) {
	before, after = &snapshot.Manifest{Root: "/ws"}, &snapshot.Manifest{Root: "/ws"}
	for i := 0; i < n; i++ {
		e := snapshot.Entry{Path: fmt.Sprintf("d%03d/f%07d.txt", i/1000, i), Type: snapshot.File, Perm: 0o644,
			Size: int64(i % 5000), UID: 1000, GID: 1000, SHA256: fmt.Sprintf("%064x", i)}
		a := e
		switch i % 40 {
		case 3:
			a.SHA256 = fmt.Sprintf("%064x", i+1)
		case 13:
			a.Perm = 0o755
		case 23:
			before.Entries = append(before.Entries, e)
			continue
		case 33:
			after.Entries = append(after.Entries, a)
			continue
		}
		before.Entries = append(before.Entries, e)
		after.Entries = append(after.Entries, a)
	}
	return before, after
}

// BenchmarkCompare diffs two manifests of 200,000 entries (20,000 changes).
func BenchmarkCompare(b *testing.B) {
	before, after := benchManifests(200000)
	b.ReportAllocs()
	for b.Loop() {
		if cs := diff.Compare(before, after, diff.Options{}); len(cs) != 20000 {
			b.Fatalf("%d changes", len(cs))
		}
	}
}

// BenchmarkCompareUnchanged diffs two identical manifests of 200,000 entries
// (a no-op run).
func BenchmarkCompareUnchanged(b *testing.B) {
	before, _ := benchManifests(200000)
	b.ReportAllocs()
	for b.Loop() {
		if cs := diff.Compare(before, before, diff.Options{}); len(cs) != 0 {
			b.Fatalf("%d changes", len(cs))
		}
	}
}
