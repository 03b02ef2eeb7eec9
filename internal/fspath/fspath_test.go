package fspath

import (
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
