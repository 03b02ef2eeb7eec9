package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/internal/testenv"
)

// TestApplyTrustsOnlyTheRecord: apply takes the workspace, the stage and
// every path from the run's record in the history, never from files in the
// stage directory (which a script that can write the user's cache can
// rewrite), and checks every path it touches before the first write. Each
// case was reproduced against the code before the fix; each runs for both
// mechanisms, as root and as a normal user.
func TestApplyTrustsOnlyTheRecord(t *testing.T) {
	testenv.CLI(t)
	for _, mech := range []pipeline.StageMechanism{pipeline.StageCopy, pipeline.StageOverlay} {
		t.Run(string(mech), func(t *testing.T) { applyTrustsOnlyTheRecord(t, mech) })
		t.Run(string(mech)+"AsUser", func(t *testing.T) {
			if testenv.AsUser(t) {
				return
			}
			applyTrustsOnlyTheRecord(t, mech)
		})
	}
}

// stagedCase makes a workspace with files (a trailing "/" makes a
// directory), runs body staged on it (with --allow '**', so the run
// passes) and returns the workspace, the history and the stage directory.
func stagedCase(t *testing.T, stageFlag string, files map[string]string, body string) (ws, db, stageDir string) {
	t.Helper()
	ws = filepath.Join(t.TempDir(), "ws")
	os.Mkdir(ws, 0o755)
	for p, data := range files {
		full := filepath.Join(ws, p)
		if strings.HasSuffix(p, "/") {
			os.MkdirAll(full, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh := filepath.Join(t.TempDir(), "s.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\nset -e\n"+body+"\n"), 0o755)
	db = filepath.Join(t.TempDir(), "h.db")
	if code, out, errs := cliRun(t, "run", stageFlag, "--db", db, "--workspace", ws, "--allow", "**", "--", sh); code != 0 {
		t.Fatalf("staged run: exit %d %q %q", code, out, errs)
	}
	h, err := history.Open(db, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	st, err := h.StageOf(context.Background(), 1)
	if err != nil || st == nil {
		t.Fatalf("stage of run 1: %v %v", st, err)
	}
	base, _ := pipeline.StageBaseDir()
	t.Cleanup(func() { // a stage left pending: overlayfs's work/work is mode 000
		if s, err := pipeline.OpenStage(base, st.ID); err == nil {
			s.Discard()
		}
	})
	return ws, db, filepath.Join(base, st.ID)
}

func applyTrustsOnlyTheRecord(t *testing.T, mech pipeline.StageMechanism) {
	stageFlag := stageEnv(t, mech)

	t.Run("planted journal", func(t *testing.T) {
		ws, db, dir := stagedCase(t, stageFlag, map[string]string{"a.txt": "a\n"}, "echo new > new.txt")
		victim := filepath.Join(t.TempDir(), "victim")
		os.MkdirAll(victim, 0o755)
		os.WriteFile(filepath.Join(victim, "precious"), []byte("p\n"), 0o644)
		rel, _ := filepath.Rel(ws, victim)
		journal := `{"ops":[{"op":"remove","path":"` + rel + `"},{"op":"remove","path":"a.txt"}],"paths":["` + rel + `"]}`
		if err := os.WriteFile(filepath.Join(dir, "apply.journal"), []byte(journal), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errs := cliRun(t, "apply", "1", "--only-allowed", "--db", db)
		if code != 0 || out != "" || !strings.Contains(errs, "applied 1 change of run 1 (only-allowed): run applied") {
			t.Fatalf("apply: exit %d %q %q", code, out, errs)
		}
		if b, err := os.ReadFile(filepath.Join(victim, "precious")); err != nil || string(b) != "p\n" {
			t.Fatalf("the planted journal reached outside the workspace: %q %v", b, err)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(b) != "a\n" {
			t.Fatalf("the planted journal removed a.txt: %v", err)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "new.txt")); err != nil || string(b) != "new\n" {
			t.Fatalf("new.txt: %q %v", b, err)
		}
	})

	t.Run("planted applied.json", func(t *testing.T) {
		ws, db, dir := stagedCase(t, stageFlag, map[string]string{"a.txt": "a\n"}, "echo new > new.txt")
		os.WriteFile(filepath.Join(dir, "applied.json"), []byte(`{"paths":["x"],"at":"2026-01-01T00:00:00Z"}`), 0o600)
		if code, out, errs := cliRun(t, "apply", "1", "--db", db); code != 0 || out != "" || !strings.Contains(errs, "applied 1 change of run 1 (all)") {
			t.Fatalf("apply: exit %d %q %q", code, out, errs)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "new.txt")); err != nil || string(b) != "new\n" {
			t.Fatalf("recorded as applied, but new.txt is not there: %q %v", b, err)
		}
	})

	t.Run("rewritten stage.json", func(t *testing.T) {
		ws, db, dir := stagedCase(t, stageFlag, map[string]string{"a.txt": "a\n"}, "echo new > new.txt")
		other := t.TempDir()
		meta := `{"id":"` + filepath.Base(dir) + `","workspace":"` + other + `","mechanism":"` + string(mech) + `","created":"2026-01-01T00:00:00Z"}`
		if err := os.WriteFile(filepath.Join(dir, "stage.json"), []byte(meta), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := cliRun(t, "apply", "1", "--db", db); code != 0 || out != "" {
			t.Fatalf("apply: exit %d %q %q", code, out, errs)
		}
		if ents, _ := os.ReadDir(other); len(ents) != 0 {
			t.Fatalf("applied into the folder stage.json named: %v", ents)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "new.txt")); err != nil || string(b) != "new\n" {
			t.Fatalf("new.txt not applied to the recorded workspace: %q %v", b, err)
		}
	})

	t.Run("chmod-only folder became a symlink", func(t *testing.T) {
		ws, db, _ := stagedCase(t, stageFlag, map[string]string{"d/f": "f\n"}, "chmod 700 d\necho a > a.txt")
		outside := filepath.Join(t.TempDir(), "d")
		if err := os.Rename(filepath.Join(ws, "d"), outside); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(ws, "d")); err != nil {
			t.Fatal(err)
		}
		code, out, errs := cliRun(t, "apply", "1", "--db", db)
		if code != 1 || out != "CONFLICT d\n" {
			t.Fatalf("apply: exit %d stdout %q stderr %q", code, out, errs)
		}
		if _, err := os.Lstat(filepath.Join(ws, "a.txt")); err == nil {
			t.Fatal("a.txt applied despite the conflict")
		}
		if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o755 {
			t.Fatalf("the folder the symlink names: %v %v", fi, err)
		}
		// The workspace itself became a symlink: a conflict too.
		os.Remove(filepath.Join(ws, "d"))
		os.Rename(outside, filepath.Join(ws, "d"))
		real := ws + ".real"
		os.Rename(ws, real)
		os.Symlink(real, ws)
		code, out, errs = cliRun(t, "apply", "1", "--db", db)
		if code != 1 || out != "CONFLICT .\n" {
			t.Fatalf("apply into a workspace that became a symlink: exit %d stdout %q stderr %q", code, out, errs)
		}
		if _, err := os.Lstat(filepath.Join(real, "a.txt")); err == nil {
			t.Fatal("a.txt applied through the workspace's symlink")
		}
		// Not stuck: discard works.
		if code, out, errs := cliRun(t, "discard", "1", "--db", db); code != 0 || out != "" {
			t.Fatalf("discard: exit %d %q %q", code, out, errs)
		}
	})

	t.Run("file created in a removed folder", func(t *testing.T) {
		ws, db, _ := stagedCase(t, stageFlag, map[string]string{"old/x": "x\n", "old/sub/y": "y\n"}, "rm -r old")
		if err := os.WriteFile(filepath.Join(ws, "old/sub/mine.txt"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := cliRun(t, "apply", "1", "--db", db)
		if code != 1 || out != "CONFLICT old/sub/mine.txt\n" {
			t.Fatalf("apply: exit %d stdout %q stderr %q", code, out, errs)
		}
		for _, p := range []string{"old/x", "old/sub/y", "old/sub/mine.txt"} {
			if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
				t.Fatalf("%s: %v (nothing may be applied)", p, err)
			}
		}
	})

	t.Run("staged file named like a temp name", func(t *testing.T) {
		sum := sha256.Sum256([]byte("a.txt"))
		clash := ".diffgate-apply-" + hex.EncodeToString(sum[:8])
		ws, db, _ := stagedCase(t, stageFlag, map[string]string{"a.txt": "a\n"}, "echo keep > "+clash+"\necho changed > a.txt")
		if code, out, errs := cliRun(t, "apply", "1", "--db", db); code != 0 || out != "" {
			t.Fatalf("apply: exit %d %q %q", code, out, errs)
		}
		for name, want := range map[string]string{clash: "keep\n", "a.txt": "changed\n"} {
			if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != want {
				t.Fatalf("%s: %q %v, want %q", name, b, err, want)
			}
		}
		ents, _ := os.ReadDir(ws)
		if len(ents) != 2 {
			t.Fatalf("workspace holds %v, want a.txt and %s only", ents, clash)
		}
	})
}

// TestDiscardAnInterruptedApply: discard always works, an apply killed
// midway included: it exits 0, says the workspace keeps what was written,
// and the workspace takes new runs again (before, a run on it exited 2).
func TestDiscardAnInterruptedApply(t *testing.T) {
	testenv.CLI(t)
	stageFlag := stageEnv(t, pipeline.StageCopy)
	ws, db, dir := stagedCase(t, stageFlag, map[string]string{"a.txt": "a\n", "b.txt": "b\n"}, "echo 1 > a.txt\necho 2 > b.txt\necho 3 > c.txt")
	cmd := exec.Command(testenv.CLI(t), "apply", "1", "--db", db)
	cmd.Env = append(os.Environ(), "DIFFGATE_TEST_APPLY_KILL_AFTER=1")
	if err := cmd.Run(); err == nil {
		t.Fatal("the apply was not killed")
	}
	sh := filepath.Join(t.TempDir(), "s.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\ntrue\n"), 0o755)
	if code, _, errs := cliRun(t, "run", "--db", db, "--workspace", ws, "--", sh); code != 2 || !strings.Contains(errs, "half-applied") {
		t.Fatalf("run on the half-applied workspace: exit %d %q", code, errs)
	}
	// A folder inside the workspace is refused too.
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	if code, _, errs := cliRun(t, "run", "--db", db, "--workspace", filepath.Join(ws, "sub"), "--", sh); code != 2 || !strings.Contains(errs, "`diffgate apply 1`") {
		t.Fatalf("run inside the half-applied workspace: exit %d %q", code, errs)
	}
	os.Remove(filepath.Join(ws, "sub"))
	code, out, errs := cliRun(t, "discard", "1", "--db", db)
	if code != 0 || out != "" || errs != "diffgate: discarded the stage of run 1; its interrupted apply left the workspace half-applied (some of 3 changes written)\n" {
		t.Fatalf("discard: exit %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("the stage is still there")
	}
	if code, _, errs := cliRun(t, "run", "--db", db, "--workspace", ws, "--", sh); code != 0 {
		t.Fatalf("run after the discard: exit %d %q", code, errs)
	}
}
