package stage

import (
	"os"
	"path/filepath"
	"testing"

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
