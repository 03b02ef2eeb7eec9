package fspath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/a", "/a", true}, {"/a/b", "/a", true}, {"/ab", "/a", false}, {"/", "/a", false},
		{"/a/../b", "/a", false}, {"/a/..b", "/a", true}, {"/x", "/", true},
	} {
		if got := Within(c.p, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v", c.p, c.dir, got)
		}
	}
}

// TestWithinFastPathAgreesWithRel checks the comparison of clean absolute
// paths against the lexical definition (filepath.Rel) on every pair of a
// set of paths, clean and not.
func TestWithinFastPathAgreesWithRel(t *testing.T) {
	paths := []string{"/", "/a", "/a/", "/a/b", "/ab", "/a/b/c", "/a//b", "/a/./b", "/a/../b", "/a/..b",
		"/a/.b", "/.", "/..", "/a/..", "/b", "a", "a/b", "", ".", "//", "/a/b/", "/a/b/.."}
	for _, p := range paths {
		for _, dir := range paths {
			rel, err := filepath.Rel(dir, p)
			want := err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
			if got := Within(p, dir); got != want {
				t.Errorf("Within(%q, %q) = %v, filepath.Rel says %v", p, dir, got, want)
			}
		}
		if got, want := cleanAbs(p), p != "" && p[0] == '/' && filepath.Clean(p) == p; got != want {
			t.Errorf("cleanAbs(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestResolve(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.Symlink("real", filepath.Join(dir, "link"))
	got, err := Resolve(filepath.Join(dir, "link", "not", "yet"))
	if want := filepath.Join(dir, "real", "not", "yet"); err != nil || got != want {
		t.Fatalf("Resolve = %q, %v; want %q", got, err, want)
	}
}

func TestResolveDir(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.Symlink("real", filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	d, err := ResolveDir(filepath.Join(dir, "link"))
	if err != nil || d.Path() != filepath.Join(dir, "real") || d.Given() != filepath.Join(dir, "link") || d.IsZero() {
		t.Fatalf("ResolveDir(link) = %+v, %v", d, err)
	}
	if _, err := ResolveDir(filepath.Join(dir, "file")); !errors.Is(err, ErrNotDir) {
		t.Errorf("ResolveDir(file) = %v, want ErrNotDir", err)
	}
	if _, err := ResolveDir(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ResolveDir(missing) = %v, want ErrNotExist", err)
	}
	if !(Dir{}).IsZero() {
		t.Error("the zero Dir is not zero")
	}
}
