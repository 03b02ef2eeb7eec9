package snapshot

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestOrderWithoutGlobalSort checks the per-directory ordering against a
// plain sort of every path, on names built to interleave a directory's own
// entry, its siblings that share its name as a prefix, and its subtree.
func TestOrderWithoutGlobalSort(t *testing.T) {
	root := t.TempDir()
	names := []string{"a", "a.txt", "a-b", "a b", "a0", "a\x01", "a~", "ab", "A", "ü", "a.d", "b", "-", ".x", "0"}
	var want []string
	var mk func(dir string, depth int)
	mk = func(dir string, depth int) {
		for i, n := range names {
			rel := n
			if dir != "" {
				rel = dir + "/" + n
			}
			want = append(want, rel)
			p := filepath.Join(root, filepath.FromSlash(rel))
			if depth < 2 && i%3 == 0 {
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				mk(rel, depth+1)
			} else if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("", 0)
	sort.Strings(want)
	for _, workers := range []int{1, 3, 0} {
		m := take(t, root, Options{Workers: workers})
		if len(m.Entries) != len(want) {
			t.Fatalf("workers %d: %d entries, want %d", workers, len(m.Entries), len(want))
		}
		for i, e := range m.Entries {
			if e.Path != want[i] {
				t.Fatalf("workers %d: entry %d is %q, want %q", workers, i, e.Path, want[i])
			}
			if e.Type == File && e.SHA256 != hexsha(e.Path) {
				t.Fatalf("%q: wrong hash", e.Path)
			}
		}
	}
	if n := unsortedWalks.Load(); n != 0 {
		t.Fatalf("%d walks came out unsorted", n)
	}
}

// TestCmpName compares cmpName with comparing the built strings.
func TestCmpName(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	alpha := []byte("a.-/0\x01~\xff")
	gen := func() string {
		b := make([]byte, r.IntN(4))
		for i := range b {
			for {
				b[i] = alpha[r.IntN(len(alpha))]
				if b[i] != '/' {
					break
				}
			}
		}
		return string(b)
	}
	build := func(s string, slash bool) string {
		if slash {
			return s + "/"
		}
		return s
	}
	for i := 0; i < 100000; i++ {
		a, b := gen(), gen()
		as, bs := r.IntN(2) == 0, r.IntN(2) == 0
		if got, want := cmpName(a, as, b, bs), strings.Compare(build(a, as), build(b, bs)); got != want {
			t.Fatalf("cmpName(%q,%v,%q,%v) = %d, want %d", a, as, b, bs, got, want)
		}
	}
}

// TestSameAsWalkDir compares a snapshot with what filepath.WalkDir sees.
func TestSameAsWalkDir(t *testing.T) {
	root := t.TempDir()
	benchTree(t, root, 700, 30, 3000)
	os.Symlink("d00/s001", filepath.Join(root, "link"))
	var want []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p != root {
			rel, _ := filepath.Rel(root, p)
			want = append(want, filepath.ToSlash(rel))
		}
		return err
	})
	sort.Strings(want)
	m := take(t, root, Options{})
	if len(m.Entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(m.Entries), len(want))
	}
	for i := range want {
		if m.Entries[i].Path != want[i] {
			t.Fatalf("entry %d: %q, want %q", i, m.Entries[i].Path, want[i])
		}
	}
}

// TestUnopenableDirectory swaps a listed directory for a symlink before its
// job opens it: the directory's own entry carries the error, once.
func TestUnopenableDirectory(t *testing.T) {
	root := t.TempDir()
	write(t, root, "top/a/f", "a")
	write(t, root, "top/b/f", "b")
	var once sync.Once
	var victim string
	exclude := func(rel string) bool {
		// The only worker has listed top (recording a and b) and is now in
		// the first of them: swap the other for a symlink.
		if rel == "top/a/f" || rel == "top/b/f" {
			once.Do(func() {
				victim = "top/a"
				if rel == "top/a/f" {
					victim = "top/b"
				}
				p := filepath.Join(root, victim)
				if err := os.RemoveAll(p); err != nil {
					t.Error(err)
				}
				if err := os.Symlink(".", p); err != nil {
					t.Error(err)
				}
			})
		}
		return false
	}
	m := take(t, root, Options{Workers: 1, Exclude: exclude})
	var paths []string
	for _, e := range m.Entries {
		paths = append(paths, e.Path)
	}
	if e := m.Lookup(victim); e == nil || e.Type != Dir || !strings.HasPrefix(e.Err, "cannot open directory: ") {
		t.Fatalf("%s: %+v (entries %q)", victim, e, paths)
	}
	if len(m.Entries) != 4 || len(m.Errors()) != 1 {
		t.Fatalf("want top, top/a, top/b and one file, one error; got %q", paths)
	}
}
