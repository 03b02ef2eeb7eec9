package fspath

import (
	"errors"
	"os"
	"path/filepath"
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
