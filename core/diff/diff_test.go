package diff_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type want struct {
	path    string
	kind    diff.Kind
	aspects []diff.Aspect
	risk    diff.Risk
}

// TestCompareRealTrees builds a tree, snapshots it, mutates it, snapshots
// again and checks the changes found.
func TestCompareRealTrees(t *testing.T) {
	isRoot := os.Getuid() == 0
	cases := []struct {
		name   string
		setup  func(t *testing.T, root string)
		mutate func(t *testing.T, root string)
		want   []want
		root   bool // needs root privileges
	}{
		{"no change", func(t *testing.T, r string) { write(t, r, "a", "x") }, func(t *testing.T, r string) {}, nil, false},
		{"same size, mtime restored", func(t *testing.T, r string) { write(t, r, "cfg", "aaaa") }, func(t *testing.T, r string) {
			st, _ := os.Stat(filepath.Join(r, "cfg"))
			write(t, r, "cfg", "bbbb")
			must(t, os.Chtimes(filepath.Join(r, "cfg"), st.ModTime(), st.ModTime()))
		}, []want{{"cfg", diff.Changed, []diff.Aspect{diff.Content}, ""}}, false},
		{"chmod only", func(t *testing.T, r string) { write(t, r, "run.sh", "echo") }, func(t *testing.T, r string) {
			must(t, os.Chmod(filepath.Join(r, "run.sh"), 0o755))
		}, []want{{"run.sh", diff.Changed, []diff.Aspect{diff.Mode}, ""}}, false},
		{"setuid gained", func(t *testing.T, r string) { write(t, r, "tool", "bin") }, func(t *testing.T, r string) {
			must(t, syscall.Chmod(filepath.Join(r, "tool"), 0o4755))
		}, []want{{"tool", diff.Changed, []diff.Aspect{diff.Mode}, diff.Setuid}}, false},
		{"setuid file added", nil, func(t *testing.T, r string) {
			write(t, r, "suid", "x")
			must(t, syscall.Chmod(filepath.Join(r, "suid"), 0o2755))
		}, []want{{"suid", diff.Added, nil, diff.Setuid}}, false},
		{"symlink retarget inside", func(t *testing.T, r string) {
			write(t, r, "a", "1")
			write(t, r, "b", "2")
			os.Symlink("a", filepath.Join(r, "l"))
		}, func(t *testing.T, r string) {
			os.Remove(filepath.Join(r, "l"))
			must(t, os.Symlink("b", filepath.Join(r, "l")))
		}, []want{{"l", diff.Changed, []diff.Aspect{diff.Target}, ""}}, false},
		{"symlink retarget escape", func(t *testing.T, r string) { write(t, r, "a", "1"); os.Symlink("a", filepath.Join(r, "sub-l")) }, func(t *testing.T, r string) {
			os.Remove(filepath.Join(r, "sub-l"))
			must(t, os.Symlink("../../etc/passwd", filepath.Join(r, "sub-l")))
		}, []want{{"sub-l", diff.Changed, []diff.Aspect{diff.Target}, diff.SymlinkEscape}}, false},
		{"absolute symlink added", nil, func(t *testing.T, r string) {
			must(t, os.Symlink("/etc/passwd", filepath.Join(r, "pw")))
		}, []want{{"pw", diff.Added, nil, diff.SymlinkEscape}}, false},
		{"file replaced by directory", func(t *testing.T, r string) { write(t, r, "x", "file") }, func(t *testing.T, r string) {
			os.Remove(filepath.Join(r, "x"))
			must(t, os.Mkdir(filepath.Join(r, "x"), 0o755))
		}, []want{{"x", diff.Changed, []diff.Aspect{diff.TypeA, diff.Content, diff.Mode}, ""}}, false},
		{"empty directory added", nil, func(t *testing.T, r string) {
			must(t, os.Mkdir(filepath.Join(r, "empty"), 0o755))
		}, []want{{"empty", diff.Added, nil, ""}}, false},
		{"directory removed", func(t *testing.T, r string) { write(t, r, "d/f", "x") }, func(t *testing.T, r string) {
			must(t, os.RemoveAll(filepath.Join(r, "d")))
		}, []want{{"d", diff.Removed, nil, ""}, {"d/f", diff.Removed, nil, ""}}, false},
		{"fifo added", nil, func(t *testing.T, r string) {
			must(t, syscall.Mkfifo(filepath.Join(r, "pipe"), 0o644))
		}, []want{{"pipe", diff.Added, nil, ""}}, false},
		{"odd names", nil, func(t *testing.T, r string) {
			write(t, r, "new\nline", "x")
			write(t, r, "bad\xffname", "y")
		}, []want{{"bad\xffname", diff.Added, nil, ""}, {"new\nline", diff.Added, nil, ""}}, false},
		{"owner changed", func(t *testing.T, r string) { write(t, r, "owned", "x") }, func(t *testing.T, r string) {
			must(t, os.Lchown(filepath.Join(r, "owned"), 1234, 1234))
		}, []want{{"owned", diff.Changed, []diff.Aspect{diff.Owner}, ""}}, true},
		{"device node added", nil, func(t *testing.T, r string) {
			must(t, syscall.Mknod(filepath.Join(r, "null2"), syscall.S_IFCHR|0o666, int(1<<8|3)))
		}, []want{{"null2", diff.Added, nil, diff.SpecialFile}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && !isRoot {
				t.Skip("needs root")
			}
			root := t.TempDir()
			if tc.setup != nil {
				tc.setup(t, root)
			}
			before := takeSnap(t, root)
			tc.mutate(t, root)
			after := takeSnap(t, root)
			got := diff.Compare(before, after, diff.Options{Root: root})
			if len(got) != len(tc.want) {
				t.Fatalf("got %d changes %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				c := got[i]
				if c.Path != w.path || c.Kind != w.kind || c.Risk != w.risk {
					t.Errorf("change %d: got %q %s risk %q, want %q %s risk %q", i, c.Path, c.Kind, c.Risk, w.path, w.kind, w.risk)
				}
				if w.aspects == nil {
					w.aspects = []diff.Aspect{}
				}
				if !reflect.DeepEqual(c.Aspects, w.aspects) {
					t.Errorf("%q aspects %v, want %v", c.Path, c.Aspects, w.aspects)
				}
			}
		})
	}
}

func takeSnap(t *testing.T, root string) *snapshot.Manifest {
	t.Helper()
	done := make(chan *snapshot.Manifest, 1)
	go func() {
		m, err := snapshot.Take(context.Background(), root, snapshot.Options{})
		if err != nil {
			t.Error(err)
		}
		done <- m
	}()
	select {
	case m := <-done:
		if m == nil {
			t.FailNow()
		}
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("snapshot hung")
	}
	return nil
}

func TestSeedModeComparesFilesOnly(t *testing.T) {
	b, _ := snapshot.Parse([]byte(`[["a", 1, "x"], ["b", 1, "y"], ["c", 2, "z"]]`))
	a, _ := snapshot.Parse([]byte(`[["a", 1, "x"], ["b", 1, "Y"], ["d", 2, "z"]]`))
	got := diff.Compare(b, a, diff.Options{})
	var lines []string
	for _, c := range got {
		lines = append(lines, string(c.Kind)+" "+c.Path)
	}
	want := []string{"changed b", "removed c", "added d"}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("got %v want %v", lines, want)
	}
}
