//go:build unix

package snapshot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNlinkRecorded: a regular file with a second name (a hard link, here
// outside the walked tree) records its link count, whichever way the walk
// reads it (hashed, its hash reused from a prior, Paths, Lstat); a file with
// one name, a directory and a symlink record 0. The count survives the
// manifest's JSON, and a manifest written before it existed reads as 0.
func TestNlinkRecorded(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "ws")
	write(t, root, "linked", "shared\n")
	write(t, root, "single", "one\n")
	write(t, root, "sub/x", "x\n")
	os.Symlink("linked", filepath.Join(root, "link"))
	if err := os.Link(filepath.Join(root, "linked"), filepath.Join(dir, "outside")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "linked"), filepath.Join(dir, "outside2")); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint32{"linked": 3, "single": 0, "sub": 0, "sub/x": 0, "link": 0}
	check := func(how string, m *Manifest) {
		t.Helper()
		for p, n := range want {
			e := m.Lookup(p)
			if e == nil {
				t.Errorf("%s: no %s", how, p)
			} else if e.Nlink != n {
				t.Errorf("%s: %s has Nlink %d, want %d", how, p, e.Nlink, n)
			}
		}
	}
	first := take(t, root, Options{})
	check("first walk", first)
	time.Sleep(5 * time.Millisecond)
	reused := take(t, root, Options{Prior: first, Granularity: time.Nanosecond})
	if e := reused.Lookup("linked"); e == nil || e.SHA256 != first.Lookup("linked").SHA256 {
		t.Fatal("the prior's hash was not reused")
	}
	check("walk reusing hashes", reused)
	paths, err := Paths(context.Background(), root, []string{"linked", "single", "sub", "sub/x", "link"}, PathsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("Paths", paths)
	if e, err := Lstat(filepath.Join(root, "linked")); err != nil || e.Nlink != 3 || e.Type != File || e.Ino == 0 {
		t.Errorf("Lstat: %+v %v", e, err)
	}
	if e, err := Lstat(filepath.Join(root, "link")); err != nil || e.Type != Symlink || e.Target != "linked" {
		t.Errorf("Lstat of a symlink: %+v %v", e, err)
	}

	var buf bytes.Buffer
	if err := first.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"nlink":3`); n != 1 || strings.Count(buf.String(), `"nlink"`) != 1 {
		t.Errorf("the manifest has %d \"nlink\":3 fields:\n%s", n, buf.String())
	}
	back, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	check("manifest read back", back)
	old := strings.ReplaceAll(buf.String(), `,"nlink":3`, "")
	m, err := Parse([]byte(old))
	if err != nil || m.Lookup("linked").Nlink != 0 {
		t.Fatalf("a manifest without nlink: %v", err)
	}
	seed, err := Parse([]byte(`[["a", 1, "` + hexsha("a") + `"]]`))
	if err != nil || len(seed.Entries) != 1 || seed.Entries[0].Nlink != 0 {
		t.Fatalf("seed: %+v %v", seed, err)
	}
}
