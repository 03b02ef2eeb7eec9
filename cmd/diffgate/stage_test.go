package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
)

// stagedScript changes, adds, removes and replaces; new.txt is what the
// tests allow.
const stagedScript = `echo changed > a.txt
echo new > new.txt
rm k.txt
rm -r old
mkdir -p d/e && echo y > d/e/y
ln -sf a.txt link2
chmod 600 sub/m.txt`

// stagedFixture makes a workspace with files, a directory to remove, a
// symlink and a file to chmod, and the script outside it.
func stagedFixture(t *testing.T) (ws, sh string) {
	t.Helper()
	ws = filepath.Join(t.TempDir(), "ws")
	for p, data := range map[string]string{"a.txt": "a\n", "k.txt": "keep\n", "old/x": "x\n", "old/y/z": "z\n", "sub/m.txt": "m\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	sh = filepath.Join(t.TempDir(), "s.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\n"+stagedScript+"\n"), 0o755)
	return ws, sh
}

// treeDigest lists every entry below dir with its type, permissions,
// content hash or link target: two trees with the same digest are the same
// byte for byte (modification times aside).
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		l := fmt.Sprintf("%s %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			l += " -> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := sha256.Sum256(b)
			l += " " + hex.EncodeToString(s[:])
		}
		lines = append(lines, l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// copyTree copies a fixture (files, directories, symlinks) for a direct run.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	out, err := exec.Command("cp", "-a", src, dst).CombinedOutput()
	if err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
}

// stageEnv points stages at a fresh cache directory and returns the flag
// that forces mech, skipping an overlay where this machine has none.
func stageEnv(t *testing.T, mech pipeline.StageMechanism) string {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if mech == pipeline.StageOverlay {
		if p := pipeline.ProbeStage(context.Background(), ""); p.Mechanism != pipeline.StageOverlay {
			t.Skipf("no overlay here (uid %d): %s", os.Geteuid(), p.Why)
		}
	}
	return "--stage-mechanism=" + string(mech)
}

func runStateOf(t *testing.T, db string, id int64) string {
	t.Helper()
	h, err := history.Open(db, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	st, err := h.StageOf(context.Background(), id)
	if err != nil || st == nil {
		t.Fatalf("stage of run %d: %v %v", id, st, err)
	}
	return st.State
}

// TestStagedRun: for each mechanism, as root and as a normal user, a
// staged run prints and exits as a direct run does, leaves the workspace
// byte for byte untouched, and says how to apply or discard it; apply
// --only-allowed writes only the allowed change; applying twice exits 2; a
// conflict prints CONFLICT lines and applies nothing; discard removes the
// stage, and applying a discarded run exits 2; an apply killed midway
// (SIGKILL) completes when run again, and leaves the workspace as the
// direct run left it.
func TestStagedRun(t *testing.T) {
	testenv.CLI(t) // built as root, for the user's run
	for _, mech := range []pipeline.StageMechanism{pipeline.StageOverlay, pipeline.StageCopy} {
		t.Run(string(mech), func(t *testing.T) { testStagedRun(t, mech) })
		t.Run(string(mech)+"AsUser", func(t *testing.T) {
			if testenv.AsUser(t) {
				return
			}
			testStagedRun(t, mech)
		})
	}
}

func testStagedRun(t *testing.T, mech pipeline.StageMechanism) {
	stageFlag := stageEnv(t, mech)
	db := filepath.Join(t.TempDir(), "h.db")
	ws, sh := stagedFixture(t)
	untouched := treeDigest(t, ws)

	// The direct run on a copy: what the staged run must print and do.
	direct := filepath.Join(t.TempDir(), "ws")
	copyTree(t, ws, direct)
	dcode, dout, _ := cliRun(t, "run", "--no-history", "--workspace", direct, "--allow", "new.txt", "--", sh)
	applied := treeDigest(t, direct)

	// Run 1: staged; apply --only-allowed.
	rep := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := cliRun(t, "run", stageFlag, "--db", db, "--workspace", ws, "--allow", "new.txt", "--report", rep, "--", sh)
	if code != dcode || code != 1 || out != dout {
		t.Fatalf("staged run: exit %d stdout %q; direct run: exit %d stdout %q (stderr %q)", code, out, dcode, dout, errs)
	}
	// The hint names the --db given; the summary stays the last line.
	if hint := fmt.Sprintf("\nstaged as run 1: diffgate apply 1 --db %s | diffgate discard 1 --db %s\n", db, db); !strings.Contains(errs, hint) {
		t.Fatalf("stderr %q, want the line %q", errs, hint)
	}
	if lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n"); !strings.HasPrefix(lines[len(lines)-1], "FAIL: ") {
		t.Fatalf("last stderr line %q, want the summary (stderr %q)", lines[len(lines)-1], errs)
	}
	if got := treeDigest(t, ws); got != untouched {
		t.Fatalf("the staged run touched the workspace:\n%s\nwant\n%s", got, untouched)
	}
	r := readReport(t, rep)
	if r.Stage == nil || r.Stage.Mechanism != string(mech) || r.Stage.State != report.StagePending {
		t.Fatalf("report stage %+v", r.Stage)
	}
	// The mechanism asked for (--stage-mechanism) and what staging cost
	// are extensions after the contract's two fields.
	if c := r.Stage.Cost; c == nil || c.ReadMS <= 0 || (mech == pipeline.StageCopy) != (c.CopiedFiles > 0) {
		t.Fatalf("report stage cost %+v", c)
	}
	raw, _ := os.ReadFile(rep)
	if want := fmt.Sprintf("\"stage\": {\n    \"mechanism\": %q,\n    \"state\": \"pending\",\n    \"requested\": %q,\n    \"cost\": {", mech, mech); !bytes.Contains(raw, []byte(want)) {
		t.Fatalf("report JSON lacks %s:\n%s", want, raw)
	}
	if _, out, _ := cliRun(t, "history", "--db", db); !strings.Contains(out, " pending ") {
		t.Fatalf("history does not mark the pending staged run:\n%s", out)
	}
	code, out, errs = cliRun(t, "apply", "last", "--only-allowed", "--db", db)
	if code != 0 || out != "" {
		t.Fatalf("apply --only-allowed: exit %d stdout %q stderr %q", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "new.txt")); err != nil || string(b) != "new\n" {
		t.Fatalf("new.txt: %q %v", b, err)
	}
	os.Remove(filepath.Join(ws, "new.txt"))
	if got := treeDigest(t, ws); got != untouched {
		t.Fatalf("apply --only-allowed wrote more than new.txt:\n%s", got)
	}
	if s := runStateOf(t, db, 1); s != report.StagePartiallyApplied {
		t.Fatalf("run 1 state %q", s)
	}
	if _, _, errs := cliRun(t, "history", "show", "1", "--db", db); !strings.Contains(errs, "\nstage: "+string(mech)+", partially-applied\n") {
		t.Fatalf("history show 1: %q", errs)
	}
	code, out, errs = cliRun(t, "apply", "1", "--db", db)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "run 1 was applied already") {
		t.Fatalf("apply twice: exit %d stdout %q stderr %q", code, out, errs)
	}

	// Run 2: staged; the workspace changes before apply: a conflict.
	if code, _, errs := cliRun(t, "run", stageFlag, "--db", db, "--workspace", ws, "--", sh); code != 1 || !strings.Contains(errs, "staged as run 2:") {
		t.Fatalf("run 2: exit %d %q", code, errs)
	}
	if _, _, errs := cliRun(t, "history", "show", "2", "--db", db); !strings.Contains(errs, "\nstage: "+string(mech)+", pending (diffgate apply 2 | diffgate discard 2)\n") {
		t.Fatalf("history show 2: %q", errs)
	}
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("edited meanwhile\n"), 0o644)
	edited := treeDigest(t, ws)
	code, out, errs = cliRun(t, "apply", "2", "--force", "--db", db)
	if code != 1 || out != "CONFLICT a.txt\n" {
		t.Fatalf("conflict: exit %d stdout %q stderr %q", code, out, errs)
	}
	if treeDigest(t, ws) != edited {
		t.Fatal("a conflicting apply wrote to the workspace")
	}
	if s := runStateOf(t, db, 2); s != report.StagePending {
		t.Fatalf("run 2 after the conflict: %q", s)
	}
	// Discard it: the stage goes, the history says so, apply exits 2.
	h, _ := history.Open(db, zerolog.Nop())
	st, _ := h.StageOf(context.Background(), 2)
	h.Close()
	base, _ := pipeline.StageBaseDir()
	if _, err := os.Stat(filepath.Join(base, st.ID)); err != nil {
		t.Fatalf("stage of run 2: %v", err)
	}
	if code, out, errs := cliRun(t, "discard", "last", "--db", db); code != 0 || out != "" {
		t.Fatalf("discard: exit %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(base, st.ID)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("discarded stage still there: %v", err)
	}
	if s := runStateOf(t, db, 2); s != report.StageDiscarded {
		t.Fatalf("run 2 state %q", s)
	}
	code, out, errs = cliRun(t, "apply", "2", "--db", db)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "run 2 was discarded") {
		t.Fatalf("apply a discarded run: exit %d stdout %q stderr %q", code, out, errs)
	}
	if treeDigest(t, ws) != edited {
		t.Fatal("discard touched the workspace")
	}
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)

	// Run 3: staged, failed; apply without --force or --only-allowed
	// exits 1 with one line and writes nothing; with --force, killed after
	// two operations: the half-applied workspace refuses a new run until
	// apply resumes.
	if code, _, errs := cliRun(t, "run", stageFlag, "--db", db, "--workspace", ws, "--allow", "new.txt", "--", sh); code != 1 {
		t.Fatalf("run 3: exit %d %q", code, errs)
	}
	code, out, errs = cliRun(t, "apply", "3", "--db", db)
	if code != 1 || out != "" || errs != "diffgate: apply: run 3 failed its gate: nothing applied; apply only what was allowed with --only-allowed, or all of it with --force (recorded as forced)\n" {
		t.Fatalf("apply of a failed run: exit %d stdout %q stderr %q", code, out, errs)
	}
	if treeDigest(t, ws) != untouched {
		t.Fatal("a refused apply wrote to the workspace")
	}
	if code, _, errs := cliRun(t, "apply", "3", "--force", "--only-allowed", "--db", db); code != 2 || !strings.Contains(errs, "exclude each other") {
		t.Fatalf("--force with --only-allowed: exit %d %q", code, errs)
	}
	cmd := exec.Command(testenv.CLI(t), "apply", "3", "--force", "--db", db)
	cmd.Env = append(os.Environ(), "DIFFGATE_TEST_APPLY_KILL_AFTER=2")
	cerr := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(cerr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the apply was not killed midway: %v", cerr)
	}
	half := treeDigest(t, ws)
	if half == untouched {
		t.Fatal("the killed apply applied nothing (the hook fired too early)")
	}
	if s := runStateOf(t, db, 3); s != report.StagePending {
		t.Fatalf("run 3 after the kill: %q", s)
	}
	code, out, errs = cliRun(t, "run", "--db", db, "--workspace", ws, "--", sh)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "half-applied") || !strings.Contains(errs, "`diffgate apply 3`") {
		t.Fatalf("a run on the half-applied workspace: exit %d stdout %q stderr %q", code, out, errs)
	}
	if treeDigest(t, ws) != half {
		t.Fatal("the refused run touched the workspace")
	}
	code, out, errs = cliRun(t, "apply", "3", "--db", db)
	if code != 0 || out != "" || !strings.Contains(errs, "(forced) (resumed an interrupted apply): run applied") {
		t.Fatalf("apply again: exit %d stdout %q stderr %q", code, out, errs)
	}
	if got := treeDigest(t, ws); got != applied {
		t.Fatalf("after the resumed apply:\n%s\nthe direct run left:\n%s", got, applied)
	}
	if s := runStateOf(t, db, 3); s != report.StageApplied {
		t.Fatalf("run 3 state %q", s)
	}
	if _, out, _ := cliRun(t, "history", "--db", db); !strings.Contains(out, " partially-applied ") || !strings.Contains(out, " discarded ") || !strings.Contains(out, " applied ") {
		t.Fatalf("history:\n%s", out)
	}
	h, _ = history.Open(db, zerolog.Nop())
	defer h.Close()
	evs, err := h.StageEvents(context.Background(), 1)
	if err != nil || len(evs) != 2 || evs[0].Event != history.EventApplying || evs[1].Decision != history.ApplyOnlyAllowed || strings.Join(evs[1].Paths, ",") != "new.txt" {
		t.Fatalf("run 1's apply record: %+v %v", evs, err)
	}
	evs, err = h.StageEvents(context.Background(), 3)
	if err != nil || len(evs) != 2 || evs[0].Event != history.EventApplying || evs[1].Event != report.StageApplied ||
		evs[1].Decision != history.ApplyForced || len(evs[1].Paths) < 8 || strings.Join(evs[0].Paths, ",") != strings.Join(evs[1].Paths, ",") {
		t.Fatalf("run 3's apply record: %+v %v", evs, err)
	}
	if b, err := h.Verify(context.Background()); err != nil || b != nil {
		t.Fatalf("verify: %+v %v", b, err)
	}
}

// TestStageNeedsHistory: --stage with --no-history is a usage error, one
// line, before the script runs.
func TestStageNeedsHistory(t *testing.T) {
	ws, sh := fixture(t, "echo x > made")
	code, out, errs := cliRun(t, "run", "--stage", "--no-history", "--workspace", ws, "--", sh)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--stage needs the history") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err == nil {
		t.Fatal("the script ran")
	}
}

// TestStageExpires: a stage older than 14 days is removed by the next run,
// and the history notes its run as expired; apply then exits 2.
func TestStageExpires(t *testing.T) {
	stageFlag := stageEnv(t, pipeline.StageCopy)
	db := filepath.Join(t.TempDir(), "h.db")
	ws, sh := stagedFixture(t)
	if code, _, errs := cliRun(t, "run", stageFlag, "--db", db, "--workspace", ws, "--", sh); code != 1 {
		t.Fatalf("run: exit %d %q", code, errs)
	}
	h, _ := history.Open(db, zerolog.Nop())
	st, _ := h.StageOf(context.Background(), 1)
	h.Close()
	base, _ := pipeline.StageBaseDir()
	meta := filepath.Join(base, st.ID, "stage.json")
	s, err := pipeline.OpenStage(base, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	s.Created = time.Now().Add(-pipeline.StageMaxAge - time.Hour)
	b, _ := json.Marshal(s)
	if err := os.WriteFile(meta, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// Any run with the history expires it (here a direct one).
	ws2, sh2 := fixture(t, "true")
	if code, _, errs := cliRun(t, "run", "--db", db, "--workspace", ws2, "--", sh2); code != 0 {
		t.Fatalf("run 2: exit %d %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(base, st.ID)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("expired stage still there: %v", err)
	}
	if s := runStateOf(t, db, 1); s != report.StageExpired {
		t.Fatalf("run 1 state %q", s)
	}
	code, out, errs := cliRun(t, "apply", "1", "--db", db)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "expired") {
		t.Fatalf("apply an expired run: exit %d stdout %q stderr %q", code, out, errs)
	}
	if code, _, errs := cliRun(t, "apply", "2", "--db", db); code != 2 || !strings.Contains(errs, "was not staged") {
		t.Fatalf("apply a direct run: exit %d %q", code, errs)
	}
}
