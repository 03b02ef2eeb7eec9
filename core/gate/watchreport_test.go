//go:build unix

package gate_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/watch"
	"github.com/diffgate/diffgate/internal/testenv"
)

// What core/watch finds outside the workspace, as the report says it
// (gate.WatchReport): real files changed between two records.

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(content), 0o644))
}

func appendFile(t *testing.T, p, content string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	must(t, err)
	f.WriteString(content)
	must(t, f.Close())
}

// run takes the before record, lets change act, takes the after record and
// returns the lines of the changes found and the watch.
func watchRun(t *testing.T, paths []watch.Path, opt watch.Options, change func()) ([]string, *report.Watch) {
	t.Helper()
	before := watch.Take(paths, opt)
	change()
	sum, changes := watch.Compare(before, before.Again())
	w, outside := gate.WatchReport(sum, changes, opt.Workspace)
	var lines []string
	for i := range outside {
		lines = append(lines, outside[i].Line())
	}
	return lines, w
}

func explicit(ps ...string) []watch.Path {
	out := make([]watch.Path, len(ps))
	for i, p := range ps {
		out[i] = watch.Path{Path: p}
	}
	return out
}

func testWatch(t *testing.T) {
	dir, err := filepath.EvalSymlinks(testenv.UserTempDir(t))
	must(t, err)
	home := filepath.Join(dir, "home")
	bashrc, zshrc := filepath.Join(home, ".bashrc"), filepath.Join(home, ".zshrc")
	autostart := filepath.Join(home, ".config", "autostart")
	writeFile(t, bashrc, "orig\n")
	writeFile(t, filepath.Join(autostart, "keep.desktop"), "[Desktop Entry]\n")
	writeFile(t, filepath.Join(autostart, "gone.desktop"), "[Desktop Entry]\n")
	dotfiles := filepath.Join(dir, "dotfiles")
	writeFile(t, filepath.Join(dotfiles, "profile"), "p\n")
	must(t, os.Symlink(filepath.Join(dotfiles, "profile"), filepath.Join(home, ".profile")))
	paths := explicit(bashrc, zshrc, autostart, filepath.Join(home, ".profile"))

	t.Run("no change", func(t *testing.T) {
		lines, w := watchRun(t, paths, watch.Options{}, func() {})
		if len(lines) != 0 {
			t.Fatalf("changes without a change: %q", lines)
		}
		// The link's target is watched as a path of its own.
		var got []string
		for _, p := range w.Paths {
			got = append(got, strings.TrimPrefix(p.Path, dir)+" via "+strings.TrimPrefix(p.Via, dir))
		}
		if len(w.Paths) != 5 || w.Paths[4].Path != filepath.Join(dotfiles, "profile") || w.Paths[4].Via != filepath.Join(home, ".profile") {
			t.Errorf("paths %q", got)
		}
		if w.Entries != 1+0+3+1+1 || w.Paths[2].Entries != 3 || w.Paths[1].Entries != 0 {
			t.Errorf("entries %d, paths %+v", w.Entries, w.Paths)
		}
	})
	t.Run("every kind", func(t *testing.T) {
		lines, _ := watchRun(t, paths, watch.Options{}, func() {
			appendFile(t, bashrc, "x\n")
			writeFile(t, zshrc, "evil\n")
			writeFile(t, filepath.Join(autostart, "evil.desktop"), "[Desktop Entry]\nExec=sh\n")
			must(t, os.Remove(filepath.Join(autostart, "gone.desktop")))
			must(t, os.Chmod(filepath.Join(autostart, "keep.desktop"), 0o755))
			appendFile(t, filepath.Join(home, ".profile"), "through the link\n")
		})
		want := []string{
			"OUTSIDE changed " + bashrc + " (size 5 B -> 7 B)",
			"OUTSIDE added " + zshrc + " (file 0644 5 B)",
			"OUTSIDE removed " + filepath.Join(autostart, "gone.desktop") + " (file 0644 16 B)",
			"OUTSIDE changed " + filepath.Join(autostart, "keep.desktop") + " (mode 0644 -> 0755)",
			"OUTSIDE added " + filepath.Join(autostart, "evil.desktop") + " (file 0644 24 B)",
			"OUTSIDE changed " + filepath.Join(dotfiles, "profile") + " (size 2 B -> 19 B)",
		}
		slices.Sort(want)
		slices.Sort(lines)
		if !slices.Equal(lines, want) {
			t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("replaced, linked, retargeted", func(t *testing.T) {
		writeFile(t, filepath.Join(dir, "other"), "o\n")
		lines, _ := watchRun(t, explicit(bashrc, filepath.Join(home, ".profile")), watch.Options{}, func() {
			writeFile(t, bashrc+".tmp", "same\n")
			must(t, os.Rename(bashrc+".tmp", bashrc))
			must(t, os.Link(bashrc, filepath.Join(dir, "hardlink")))
			must(t, os.Remove(filepath.Join(home, ".profile")))
			must(t, os.Symlink(filepath.Join(dir, "other"), filepath.Join(home, ".profile")))
		})
		for _, want := range []string{"OUTSIDE changed " + bashrc + " (", "links 1 -> 2", "replaced (new inode)",
			"OUTSIDE changed " + filepath.Join(home, ".profile") + " (target " + filepath.Join(dotfiles, "profile") + " -> " + filepath.Join(dir, "other") + ", "} {
			if !strings.Contains(strings.Join(lines, "\n"), want) {
				t.Errorf("lines lack %q:\n%s", want, strings.Join(lines, "\n"))
			}
		}
	})
	t.Run("workspace and gate directories skipped", func(t *testing.T) {
		ws := filepath.Join(autostart, "ws")
		stageDir := filepath.Join(autostart, "stage")
		must(t, os.MkdirAll(ws, 0o755))
		must(t, os.MkdirAll(stageDir, 0o755))
		defer os.RemoveAll(ws)
		defer os.RemoveAll(stageDir)
		lines, w := watchRun(t, explicit(autostart, filepath.Join(ws, "sub")), watch.Options{Workspace: ws, Skip: []string{stageDir}}, func() {
			writeFile(t, filepath.Join(ws, "in-workspace"), "x")
			writeFile(t, filepath.Join(stageDir, "upper", "x"), "x")
		})
		if len(lines) != 0 {
			t.Errorf("writes in the workspace or the stage were reported: %q", lines)
		}
		if w.Paths[1].Skipped != "inside the workspace: the diff covers it" {
			t.Errorf("a path inside the workspace: %+v", w.Paths[1])
		}
	})
	t.Run("bounds", func(t *testing.T) {
		big := filepath.Join(dir, "big")
		for _, p := range []string{"a/1", "a/2", "b/1", "b/2", "c/1", "d/e/f/g/1"} {
			writeFile(t, filepath.Join(big, p), "x")
		}
		lines, w := watchRun(t, explicit(big), watch.Options{MaxEntries: 5}, func() {
			writeFile(t, filepath.Join(big, "a", "0"), "new") // within the walk: shifts the cut
			writeFile(t, filepath.Join(big, "c", "2"), "new") // beyond it
		})
		if w.Paths[0].Cut != "5 entries" || len(lines) != 1 || lines[0] != "OUTSIDE added "+filepath.Join(big, "a", "0")+" (file 0644 3 B)" {
			t.Errorf("entry bound: cut %q lines %q", w.Paths[0].Cut, lines)
		}
		// big and big/d are listed; big/d/e is recorded, not listed: an
		// entry added to it shows as its change, one deeper not at all.
		lines, w = watchRun(t, explicit(big), watch.Options{MaxDepth: 2}, func() {
			writeFile(t, filepath.Join(big, "d", "e", "f", "new"), "deep")
			writeFile(t, filepath.Join(big, "d", "e", "new"), "level 3")
			writeFile(t, filepath.Join(big, "d", "new"), "shallow")
		})
		if w.Paths[0].Cut != "depth 2" || len(lines) != 2 || lines[0] != "OUTSIDE changed "+filepath.Join(big, "d", "e")+" (modified, same size)" ||
			lines[1] != "OUTSIDE added "+filepath.Join(big, "d", "new")+" (file 0644 7 B)" {
			t.Errorf("depth bound: cut %q lines %q", w.Paths[0].Cut, lines)
		}
	})
	if testenv.IsRoot() {
		return // root stats everything
	}
	t.Run("not watchable", func(t *testing.T) {
		locked := filepath.Join(dir, "locked")
		secret := filepath.Join(locked, "job")
		writeFile(t, secret, "orig\n")
		must(t, os.Chmod(locked, 0o000))
		defer os.Chmod(locked, 0o755)
		if r := watch.Unstatable(secret); r != "permission denied" {
			t.Fatalf("Unstatable = %q", r)
		}
		// A privileged helper (crontab(1)) writes there: the directory's
		// own times show it.
		lines, w := watchRun(t, explicit(secret), watch.Options{}, func() {
			must(t, os.Chmod(locked, 0o755))
			writeFile(t, filepath.Join(locked, "tmp.1"), "x")
			must(t, os.Rename(filepath.Join(locked, "tmp.1"), secret))
			must(t, os.Chmod(locked, 0o000))
		})
		if len(w.Unwatchable) != 1 || w.Unwatchable[0].Path != secret || w.Unwatchable[0].Reason != "permission denied" {
			t.Errorf("unwatchable %+v", w.Unwatchable)
		}
		if len(w.Paths) != 2 || w.Paths[1].Path != locked || w.Paths[1].For != secret {
			t.Errorf("paths %+v", w.Paths)
		}
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "OUTSIDE changed "+locked+" (modified") {
			t.Errorf("lines %q", lines)
		}
		if s := w.Summary(); !strings.Contains(s, "not watchable: "+secret+" (permission denied, its directory is watched instead, stat only)") {
			t.Errorf("summary %q", s)
		}
		// Watchable before, not after: a change.
		must(t, os.Chmod(locked, 0o755))
		lines, _ = watchRun(t, explicit(secret), watch.Options{}, func() { must(t, os.Chmod(locked, 0o000)) })
		if len(lines) != 1 || lines[0] != "OUTSIDE changed "+secret+" (cannot stat after the run: permission denied)" {
			t.Errorf("made unwatchable: %q", lines)
		}
	})
}

func TestWatchReport(t *testing.T) { testWatch(t) }

func TestWatchReportAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testWatch(t)
}
