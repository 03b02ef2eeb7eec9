package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/internal/testenv"
)

// TestStagedDeltaStaleShape: an overlay-staged run that trusts the shape
// the history holds (no before-snapshot) over a workspace changed since
// that shape's walk, outside any run, in a way the overlay cannot stage as
// a direct run would: a hard link written through, an overlayfs attribute
// on a file the script touches, a git directory made since whose hooks the
// script writes. Each fails the gate with an unreadable entry naming the
// path: never a silent pass.
func TestStagedDeltaStaleShape(t *testing.T) {
	testenv.CLI(t)
	testenv.SelfAndUser(t, func(t *testing.T) {
		cases := []struct{ name, change, script, path string }{
			{"hardlink", "ln keep.txt hard.txt", "echo more >> hard.txt", "hard.txt"},
			{"overlay-xattr", "setfattr -n user.overlay.pre -v 1 b.txt", "echo more >> b.txt", "b.txt"},
			{"new-git-dir", "mkdir -p sub/.git/hooks", "echo x > sub/.git/hooks/pre-commit", "sub/.git/hooks/pre-commit"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				flag := stageEnv(t, pipeline.StageOverlay)
				if c.name == "overlay-xattr" && !xattrsWork(t) {
					t.Skip("no user extended attributes on the temporary directory's filesystem")
				}
				ws := filepath.Join(t.TempDir(), "ws")
				os.Mkdir(ws, 0o755)
				os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("k\n"), 0o644)
				os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b\n"), 0o644)
				db := filepath.Join(t.TempDir(), "h.db")
				discard := knownShape(t, ws, db, flag)
				sh := exec.Command("/bin/sh", "-ec", c.change)
				sh.Dir = ws
				if out, err := sh.CombinedOutput(); err != nil {
					t.Skipf("%s: %v %s", c.change, err, out)
				}
				script := filepath.Join(t.TempDir(), "s.sh")
				os.WriteFile(script, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755)
				t.Setenv("DIFFGATE_DEV", "1")
				code, out, errs := cliRun(t, "run", "--workspace", ws, "--stage", flag, "--db", db,
					"--allow", "changed:**", "--allow", "added:**", "--", script)
				discard()
				if !strings.Contains(errs, "no before-snapshot") {
					t.Fatalf("the run walked the workspace:\n%s", errs)
				}
				if code != 1 || !strings.Contains(out, "UNREADABLE") || !strings.Contains(out, c.path) ||
					!strings.Contains(out, "last full walk") {
					t.Fatalf("exit %d, want 1 with %s unreadable:\n%s\n%s", code, c.path, out, errs)
				}
			})
		}
	})
}

// TestStagedDeltaWorkspaceChangedDuringRun: an overlay-staged run without a
// before-snapshot whose script changed a file that was also changed in the
// workspace while the script ran: the workspace's copy is not the
// before-state the script saw (an apply would take the other change for
// it and overwrite it), so the run fails with the file unreadable.
func TestStagedDeltaWorkspaceChangedDuringRun(t *testing.T) {
	testenv.CLI(t)
	testenv.SelfAndUser(t, func(t *testing.T) {
		flag := stageEnv(t, pipeline.StageOverlay)
		cache := os.Getenv("XDG_CACHE_HOME")
		ws := filepath.Join(t.TempDir(), "ws")
		os.Mkdir(ws, 0o755)
		os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
		db := filepath.Join(t.TempDir(), "h.db")
		discard := knownShape(t, ws, db, flag)
		// The script changes a.txt, then waits (at most 5 s) for the go
		// file the test makes once it has changed the workspace's a.txt.
		script := filepath.Join(t.TempDir(), "s.sh")
		os.WriteFile(script, []byte("#!/bin/sh\necho script >> a.txt\ni=0\nwhile [ ! -e go ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done\n"), 0o755)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 400 { // the copy-up of a.txt in the stage's upper layer
				if m, _ := filepath.Glob(filepath.Join(cache, "diffgate", "stages", "*", "upper", "a.txt")); len(m) > 0 {
					os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\nuser\n"), 0o644)
					os.WriteFile(filepath.Join(ws, "go"), nil, 0o644)
					return
				}
				time.Sleep(25 * time.Millisecond)
			}
		}()
		t.Setenv("DIFFGATE_DEV", "1")
		code, out, errs := cliRun(t, "run", "--workspace", ws, "--stage", flag, "--db", db, "--allow", "changed:**", "--", script)
		<-done
		discard()
		if !strings.Contains(errs, "no before-snapshot") {
			t.Fatalf("the run walked the workspace:\n%s", errs)
		}
		if code != 1 || !strings.Contains(out, "UNREADABLE a.txt") || !strings.Contains(out, "during the run") {
			t.Fatalf("exit %d, want 1 with a.txt unreadable:\n%s\n%s", code, out, errs)
		}
	})
}

// knownShape runs a staged no-op on ws with history db (stageFlag: the
// mechanism) and discards it: the history then holds the workspace's shape,
// and a later overlay-staged run takes no before-snapshot. It returns a
// discard of the last run (a normal user's overlay work directory is not
// removable by TempDir).
func knownShape(t *testing.T, ws, db, stageFlag string) (discard func()) {
	t.Helper()
	discard = func() {
		t.Helper()
		if code, out, errs := cliRun(t, "discard", "last", "--db", db); code != 0 {
			t.Fatalf("discard: exit %d %s %s", code, out, errs)
		}
	}
	noop := filepath.Join(t.TempDir(), "noop.sh")
	os.WriteFile(noop, []byte("#!/bin/sh\ntrue\n"), 0o755)
	if code, out, errs := cliRun(t, "run", "--workspace", ws, "--stage", stageFlag, "--db", db, "--", noop); code != 0 {
		t.Fatalf("staged no-op: exit %d %s %s", code, out, errs)
	}
	discard()
	return discard
}
