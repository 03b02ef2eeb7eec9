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

// largePolicy is 100,000 glob entries (kind limits, denials and a few
// unanchored globs among them) and 2,000 changes, the shape that once took a
// minute: every change was tried against every entry.
func largePolicy(tb testing.TB) (*policy.Policy, []diff.Change) {
	entries := make([]string, 0, 100000)
	for i := len(entries); i < 100000; i++ {
		switch i % 5 {
		case 0:
			entries = append(entries, fmt.Sprintf("build/mod%d/**/*.o", i))
		case 1:
			entries = append(entries, fmt.Sprintf("added:gen/p%d/*", i))
		case 2:
			entries = append(entries, fmt.Sprintf("src/pkg%d/{a,b}_test.go", i))
		case 3:
			entries = append(entries, fmt.Sprintf("!gen/p%d/secret*", i))
		case 4:
			entries = append(entries, fmt.Sprintf("cache%d*/", i))
		}
	}
	entries = append(entries, "**/*.tmp", "**/.DS_Store", "!**/id_rsa")
	pol, err := policy.Parse(entries)
	if err != nil {
		tb.Fatal(err)
	}
	kinds := []diff.Kind{diff.Added, diff.Removed, diff.Changed}
	e := &snapshot.Entry{Type: snapshot.File, Perm: 0o644}
	cs := make([]diff.Change, 2000)
	for i := range cs {
		var p string
		switch i % 4 {
		case 0:
			p = fmt.Sprintf("build/mod%d/x/y/f.o", i*50)
		case 1:
			p = fmt.Sprintf("gen/p%d/secret%d", i*50+1, i)
		case 2:
			p = fmt.Sprintf("src/pkg%d/b_test.go", i*50+2)
		case 3:
			p = fmt.Sprintf("other/dir%d/file%d.tmp", i, i)
		}
		cs[i] = diff.Change{Path: p, Kind: kinds[i%3], Before: e, After: e}
	}
	return pol, cs
}

// BenchmarkLargeAllowlist parses 100,000 glob entries and decides 2,000
// changes against them (make bench: target ≤ 1 s per operation).
func BenchmarkLargeAllowlist(b *testing.B) {
	pol, cs := largePolicy(b)
	b.ReportAllocs()
	for b.Loop() {
		p, err := policy.Parse(ruleTexts(pol))
		if err != nil {
			b.Fatal(err)
		}
		p.Apply(cs)
	}
}

func ruleTexts(p *policy.Policy) []string {
	out := make([]string, len(p.Rules))
	for i, r := range p.Rules {
		out[i] = r.Text
	}
	return out
}

// BenchmarkLargeUnanchoredAllowlist is 100,000 globs with no literal
// prefix ("**/name.o", "*/gen/*_pb.go"), found through their literal tails.
func BenchmarkLargeUnanchoredAllowlist(b *testing.B) {
	entries := make([]string, 100000)
	for i := range entries {
		if i%2 == 0 {
			entries[i] = fmt.Sprintf("**/f%d.o", i)
		} else {
			entries[i] = fmt.Sprintf("*/gen%d/*_pb%d.go", i, i)
		}
	}
	pol, err := policy.Parse(entries)
	if err != nil {
		b.Fatal(err)
	}
	e := &snapshot.Entry{Type: snapshot.File, Perm: 0o644}
	cs := make([]diff.Change, 2000)
	for i := range cs {
		cs[i] = diff.Change{Path: fmt.Sprintf("src/d%d/x/f%d.o", i, i*50), Kind: diff.Added, Before: e, After: e}
		if i%2 == 1 {
			cs[i].Path = fmt.Sprintf("m/gen%d/a_pb%d.go", i*50+1, i*50+1)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		pol.Apply(cs)
	}
	if v := policy.Violations(cs); len(v) != 0 {
		b.Fatalf("%d violations, first %s", len(v), v[0].Path)
	}
}
