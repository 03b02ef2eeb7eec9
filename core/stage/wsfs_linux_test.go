package stage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/testenv"
	"golang.org/x/sys/unix"
)

// TestOpenBeneath: below a workspace descriptor, with openat2 and with the
// walk one component at a time (kernels before 5.6, seccomp profiles that
// refuse openat2), nothing outside is reached: not through "..", an
// absolute path or a symlink anywhere on the way; a write lands inside.
func TestOpenBeneath(t *testing.T) {
	for _, walk := range []bool{false, true} {
		t.Run(map[bool]string{false: "openat2", true: "walk"}[walk], func(t *testing.T) {
			noOpenat2.Store(walk)
			defer noOpenat2.Store(false)
			ws := t.TempDir()
			outside := t.TempDir()
			os.WriteFile(filepath.Join(outside, "secret"), []byte("s\n"), 0o644)
			os.MkdirAll(filepath.Join(ws, "d/e"), 0o755)
			os.Symlink(outside, filepath.Join(ws, "link"))
			os.Symlink("../..", filepath.Join(ws, "d/up"))
			r, err := openRoot(ws)
			if err != nil {
				t.Fatal(err)
			}
			defer r.close()
			rel, _ := filepath.Rel(ws, filepath.Join(outside, "secret"))
			for _, p := range []string{"link/secret", "d/up/" + rel, rel, filepath.Join(outside, "secret"), "d/../../x"} {
				if f, err := r.openFile(p); err == nil {
					f.Close()
					t.Errorf("%s opened", p)
				}
				if err := r.writeFile(p, 0, func(f *os.File) error { _, err := f.WriteString("x"); return err }); err == nil {
					t.Errorf("%s written", p)
				}
				if err := r.remove(p); err != nil && err != unix.ENOENT {
					continue
				}
			}
			if b, err := os.ReadFile(filepath.Join(outside, "secret")); err != nil || string(b) != "s\n" {
				t.Fatalf("outside touched: %q %v", b, err)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Fatalf("outside holds %v", ents)
			}
			if err := r.writeFile("d/e/f", 0, func(f *os.File) error { _, err := f.WriteString("f\n"); return err }); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "d/e/f")); string(b) != "f\n" {
				t.Fatalf("d/e/f = %q", b)
			}
			if err := r.remove("link"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
				t.Fatal("removing the link removed its target")
			}
		})
	}
}

// TestPlaceNodesAndLinks: a FIFO and a second name of a file are made
// below the workspace descriptor, each under a random name renamed into
// place; making them again (a resumed apply) leaves no temporary name; a
// write in a read-only folder is done with it writable for the write only.
// As root and as a user.
func TestPlaceNodesAndLinks(t *testing.T) {
	testenv.SelfAndUser(t, testPlaceNodesAndLinks)
}

func testPlaceNodesAndLinks(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a"), []byte("a\n"), 0o644)
	os.Mkdir(filepath.Join(ws, "ro"), 0o755)
	t.Cleanup(func() { os.Chmod(filepath.Join(ws, "ro"), 0o755) }) // for TempDir's removal
	r, err := openRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for range 2 {
		if err := r.node("fifo", snapshot.FIFO, 0o640, 0, 1e9, nil); err != nil {
			t.Fatal(err)
		}
		if err := r.link("b", "a"); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Lstat(filepath.Join(ws, "fifo"))
	if err != nil || fi.Mode().Type() != os.ModeNamedPipe || fi.Mode().Perm() != 0o640 || fi.ModTime().Unix() != 1 {
		t.Fatalf("fifo: %v %v", fi, err)
	}
	a, _ := os.Stat(filepath.Join(ws, "a"))
	b, err := os.Stat(filepath.Join(ws, "b"))
	if err != nil || !os.SameFile(a, b) {
		t.Fatalf("b is not a second name of a: %v", err)
	}
	if err := r.link("c", "fifo"); err == nil {
		t.Fatal("a link to a FIFO was made")
	}
	if os.Geteuid() != 0 { // root writes in a read-only folder anyway
		os.Chmod(filepath.Join(ws, "ro"), 0o555)
		if err := r.node("ro/f", snapshot.FIFO, 0o600, 0, 0, nil); err == nil {
			t.Fatal("a FIFO was made in a read-only folder without making it writable")
		}
	}
	os.Chmod(filepath.Join(ws, "ro"), 0o555)
	if err := r.writableParent("ro/f", func() error { return r.node("ro/f", snapshot.FIFO, 0o600, 0, 0, nil) }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(ws, "ro")); err != nil || fi.Mode().Perm() != 0o555 {
		t.Fatalf("ro's mode not restored: %v %v", fi, err)
	}
	names, _ := filepath.Glob(filepath.Join(ws, "*", ".diffgate-apply-*"))
	top, _ := filepath.Glob(filepath.Join(ws, ".diffgate-apply-*"))
	if len(names)+len(top) > 0 {
		t.Fatalf("temporary names left: %v %v", names, top)
	}
}
