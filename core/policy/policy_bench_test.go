package policy_test

import (
	"fmt"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/snapshot"
)

// BenchmarkApply decides 100,000 changes against an allowlist mixing the
// seed's exact and directory entries, globs, kind limits and a denial.
func BenchmarkApply(b *testing.B) {
	pol := policy.MustParse(".cache/", "logs/run.log", "build/**/*.o", "added:out/*", "added,changed:gen/**",
		"**/*.tmp", "!gen/secret/**", "docs/*.md", "vendor/")
	kinds := []diff.Kind{diff.Added, diff.Removed, diff.Changed}
	dirs := []string{"build/x/y", "gen/a", "gen/secret", "src/pkg", "out", ".cache/z", "docs"}
	exts := []string{".o", ".go", ".tmp", ".md", ""}
	cs := make([]diff.Change, 100000)
	e := &snapshot.Entry{Type: snapshot.File, Perm: 0o644}
	for i := range cs {
		cs[i] = diff.Change{Path: fmt.Sprintf("%s/f%06d%s", dirs[i%len(dirs)], i, exts[i%len(exts)]),
			Kind: kinds[i%3], Before: e, After: e}
	}
	b.ReportAllocs()
	for b.Loop() {
		pol.Apply(cs)
	}
}
