package main

import (
	"github.com/diffgate/diffgate/core/pipeline"

	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/internal/testenv"
)

// stageRoutes are the ways a staged script reached the real workspace past
// the stage with --contain=off ($1 is the workspace's path): the gate's
// root and working directory, the supervisor's working directory, and
// unmounting the stage.
var stageRoutes = []struct{ name, script string }{
	{"gate-root", `gate=$(awk '/^PPid/{print $2}' /proc/$PPID/status); echo x > "/proc/$gate/root$1/escaped"`},
	{"gate-cwd", `gate=$(awk '/^PPid/{print $2}' /proc/$PPID/status); echo x > "/proc/$gate/cwd/escaped"`},
	{"supervisor-cwd", `echo x > "/proc/$PPID/cwd/escaped"`},
	{"umount", `umount -l "$1" || umount "$1"; echo x > "$1/escaped"`},
}

// TestStageHoldsInEveryMode: with --contain=off a staged script could
// write the real workspace by each route; the combination is refused (exit
// 2, the script never runs). Contained (the default), each route leaves
// the workspace untouched, by overlay and by copy, as root and as a user.
func TestStageHoldsInEveryMode(t *testing.T) {
	testenv.CLI(t)
	t.Run("root", testStageHolds)
	t.Run("user", func(t *testing.T) {
		if testenv.AsUser(t) {
			return
		}
		testStageHolds(t)
	})
}

func testStageHolds(t *testing.T) {
	for _, mech := range []pipeline.StageMechanism{pipeline.StageOverlay, pipeline.StageCopy} {
		t.Run(string(mech), func(t *testing.T) {
			stageFlag := stageEnv(t, mech)
			for _, r := range stageRoutes {
				t.Run(r.name, func(t *testing.T) {
					ws, sh := stagedFixture(t)
					os.WriteFile(sh, []byte("#!/bin/sh\n"+r.script+"\n"), 0o755)
					untouched := treeDigest(t, ws)
					// The gate's working directory is the workspace (the
					// cwd routes need it so).
					wd, _ := os.Getwd()
					os.Chdir(ws)
					defer os.Chdir(wd)
					db := filepath.Join(t.TempDir(), "h.db")
					code, out, errs := cliRun(t, "run", "--stage", stageFlag, "--contain=off", "--db", db, "--workspace", ws, "--", sh, ws)
					if code != 2 || !strings.Contains(errs, "--stage needs containment") {
						t.Fatalf("--stage --contain=off: exit %d stdout %q stderr %q", code, out, errs)
					}
					if got := treeDigest(t, ws); got != untouched {
						t.Fatalf("the refused run touched the workspace:\n%s", got)
					}
					code, out, errs = cliRun(t, "run", "--stage", stageFlag, "--db", db, "--workspace", ws, "--", sh, ws)
					if got := treeDigest(t, ws); got != untouched {
						t.Fatalf("route %s reached the workspace past the stage (exit %d stdout %q stderr %q):\n%s", r.name, code, out, errs, got)
					}
					cliRun(t, "discard", "last", "--db", db)
				})
			}
		})
	}
}

// TestCopyStageWritableAndDenyRead: with the copy stage, a --writable
// naming a folder of the workspace by its absolute path means the copy's
// folder (the script's write to the real one is refused and the workspace
// stays untouched), and a --deny-read of a workspace file also denies its
// copy.
func TestCopyStageWritableAndDenyRead(t *testing.T) {
	testenv.CLI(t)
	t.Run("root", testCopyStageGrants)
	t.Run("user", func(t *testing.T) {
		if testenv.AsUser(t) {
			return
		}
		testCopyStageGrants(t)
	})
}

func testCopyStageGrants(t *testing.T) {
	stageFlag := stageEnv(t, pipeline.StageCopy)
	t.Run("writable", func(t *testing.T) {
		ws, sh := stagedFixture(t)
		os.WriteFile(sh, []byte("#!/bin/sh\necho x > \"$1/sub/planted\"\n"), 0o755)
		untouched := treeDigest(t, ws)
		db := filepath.Join(t.TempDir(), "h.db")
		code, out, errs := cliRun(t, "run", "--stage", stageFlag, "--db", db, "--workspace", ws, "--writable", filepath.Join(ws, "sub"), "--", sh, ws)
		if got := treeDigest(t, ws); got != untouched {
			t.Fatalf("--writable WS/sub let the script write the workspace (exit %d stdout %q stderr %q):\n%s", code, out, errs, got)
		}
		if code == 0 {
			t.Fatalf("the refused write passed: stdout %q stderr %q", out, errs)
		}
	})
	t.Run("deny-read", func(t *testing.T) {
		ws, sh := stagedFixture(t)
		os.WriteFile(filepath.Join(ws, "secret.txt"), []byte("s3cret\n"), 0o644)
		os.WriteFile(sh, []byte("#!/bin/sh\ncat secret.txt > leaked; cat \"$1/secret.txt\" >> leaked; true\n"), 0o755)
		db := filepath.Join(t.TempDir(), "h.db")
		rep := filepath.Join(t.TempDir(), "r.json")
		code, out, errs := cliRun(t, "run", "--stage", stageFlag, "--db", db, "--workspace", ws, "--deny-read", filepath.Join(ws, "secret.txt"), "--report", rep, "--", sh, ws)
		r := readReport(t, rep)
		for _, c := range r.Changes {
			if c.Path == "leaked" && c.After != nil && c.After.Size != 0 {
				t.Fatalf("the denied file was read (%d bytes; exit %d stdout %q stderr %q)", c.After.Size, code, out, errs)
			}
		}
	})
}
