package stage

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/snapshot"
)

func TestShapeRoundTripAndDelta(t *testing.T) {
	ws := t.TempDir()
	m := &snapshot.Manifest{Root: ws, Self: &snapshot.Entry{Path: ".", Type: snapshot.Dir},
		Entries: []snapshot.Entry{{Path: "a", Type: snapshot.File, Nlink: 1}, {Path: "b", Type: snapshot.File, Err: "cannot read: permission denied"}}}
	s := ShapeOf(ws, m, []string{filepath.Join(ws, ".git"), filepath.Join(ws, "sub", ".git"), "/elsewhere/.git"})
	if s.Unreadable != 1 || s.Unfit != "" || !slices.Equal(s.GitDirs, []string{".git", "sub/.git"}) {
		t.Fatalf("shape %+v", s)
	}
	if s.Delta() {
		t.Fatal("a shape with an unreadable entry allows a run without a before-snapshot")
	}
	got, err := DecodeShape(s.Encode())
	if err != nil || got.Unreadable != 1 || !slices.Equal(got.GitDirs, s.GitDirs) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	m.Entries[1].Err = ""
	m.Entries[0].Nlink = 2
	if s := ShapeOf(ws, m, nil); s.Unfit == "" || s.Delta() {
		t.Fatalf("hard links: shape %+v", s)
	}
	if _, err := DecodeShape([]byte("{")); err == nil {
		t.Fatal("a damaged shape decoded")
	}
	var none *Shape
	if none.Delta() {
		t.Fatal("no shape allows a run without a before-snapshot")
	}
}

func TestCheckDelta(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "sub", ".git", "hooks"), 0o755)
	os.MkdirAll(filepath.Join(ws, "d"), 0o755)
	os.Symlink("d/x", filepath.Join(ws, "untouched"))
	past := time.Now().Add(-time.Hour).UnixNano()
	start := time.Now()
	d := &Delta{Partial: true,
		Before: &snapshot.Manifest{Entries: []snapshot.Entry{
			{Path: "f", Type: snapshot.File, Nlink: 1, CTime: past},
			{Path: "linked", Type: snapshot.File, Nlink: 2, CTime: past},
			{Path: "late", Type: snapshot.File, Nlink: 1, CTime: start.Add(time.Millisecond).UnixNano()},
		}},
		After: &snapshot.Manifest{Entries: []snapshot.Entry{
			{Path: "f", Type: snapshot.File}, {Path: "late", Type: snapshot.File}, {Path: "linked", Type: snapshot.File},
			{Path: "new.git/hooks/x", Type: snapshot.File},
			{Path: "sub/.git/hooks/pre-commit", Type: snapshot.File},
		}},
	}
	walk, unf := CheckDelta(ws, d, &Shape{}, start)
	var paths []string
	for _, u := range unf {
		paths = append(paths, u.Path)
	}
	slices.Sort(paths)
	if walk || !slices.Equal(paths, []string{"late", "linked", "sub/.git/hooks/pre-commit"}) {
		t.Fatalf("walk %v, unfaithful %q", walk, paths)
	}
	if _, unf := CheckDelta(ws, d, &Shape{GitDirs: []string{"sub/.git"}}, start); len(unf) != 2 {
		t.Fatalf("a known git directory: %+v", unf)
	}
	// A symlink among the changes: every symlink of the workspace joins
	// the before side, and Merge lays the changes over it.
	d.After.Entries = append(d.After.Entries, snapshot.Entry{Path: "z", Type: snapshot.Symlink, Target: "/"})
	if walk, _ := CheckDelta(ws, d, &Shape{}, start); !walk {
		t.Fatal("a symlink among the changes does not bring in the workspace's symlinks")
	}
	b, err := WithLowerSymlinks(t.Context(), ws, d)
	if err != nil {
		t.Fatal(err)
	}
	if e := b.Lookup("untouched"); e == nil || e.Target != "d/x" || b.Lookup("f") == nil {
		t.Fatalf("before side %+v", b.Entries)
	}
	if a := Merge(b, d); a.Lookup("untouched") == nil || a.Lookup("z") == nil {
		t.Fatalf("merged %+v", a.Entries)
	}
}
