//go:build !js

package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/watch"
	"github.com/diffgate/diffgate/internal/testenv"
)

func TestMain(m *testing.M) {
	proc.Supervise() // the gate re-executes this binary as its supervisor
	os.Exit(m.Run())
}

func setup(t *testing.T) (ws, scripts string, db *history.DB) {
	t.Helper()
	ws, scripts = t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "settings.ini"), []byte("debug = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := history.Open(filepath.Join(t.TempDir(), "h.db"), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return ws, scripts, db
}

func script(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "s.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRecordsACancelledRun: a run cancelled while the script runs is still
// recorded, with what the script did before the cancel.
func TestRecordsACancelledRun(t *testing.T) {
	ws, scripts, db := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The script says it started through its output, then blocks.
	cfg := gate.Config{Workspace: ws, Script: script(t, scripts, "echo x > made\necho started\nexec sleep 60\n"),
		Output: func(_ proc.Stream, p []byte) {
			if strings.Contains(string(p), "started") {
				cancel()
			}
		}}
	res, err := preflightRun(ctx, Options{Config: cfg, History: db})
	if err != nil {
		t.Fatal(err)
	}
	if res.RecordErr != nil || res.RunID == 0 {
		t.Fatalf("not recorded: id %d, %v", res.RunID, res.RecordErr)
	}
	run, err := db.Get(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Report.Process.Cancelled || len(run.Report.Changes) != 1 || run.Report.Changes[0].Path != "made" {
		t.Errorf("recorded %+v, changes %+v", run.Report.Process, run.Report.Changes)
	}
}

// TestApprovedAllowlist: FromHistory adds the workspace's approved entries
// and records their version; without one the run is a setup error and
// nothing runs.
func TestApprovedAllowlist(t *testing.T) {
	ws, scripts, db := setup(t)
	sc := script(t, scripts, "echo x > made\n")
	_, err := preflightRun(context.Background(), Options{Config: gate.Config{Workspace: ws, Script: sc}, History: db, FromHistory: true})
	var se *gate.SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "no approved allowlist") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err == nil {
		t.Fatal("the script ran")
	}
	key, _ := history.WorkspaceKey(ws)
	if _, err := db.Approve(context.Background(), key, []string{"made"}, ""); err != nil {
		t.Fatal(err)
	}
	res, err := preflightRun(context.Background(), Options{Config: gate.Config{Workspace: ws, Script: sc}, History: db, FromHistory: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Verdict != "pass" {
		t.Errorf("verdict %s %v", res.Report.Verdict, res.Report.Reasons)
	}
	run, err := db.Get(context.Background(), res.RunID)
	if err != nil || run.AllowlistVersion != 1 {
		t.Fatalf("recorded allowlist version %+v, %v", run, err)
	}
}

// TestHistoryFeedsTheGate: the second run gets the hash cache as its prior
// and a lookup of stored contents.
func TestHistoryFeedsTheGate(t *testing.T) {
	ws, scripts, db := setup(t)
	var priors []bool
	var stored []bool
	runner := func(ctx context.Context, cfg gate.Config) (*gate.Result, error) {
		priors = append(priors, cfg.Prior != nil)
		stored = append(stored, cfg.Stored != nil)
		return gate.Run(ctx, cfg)
	}
	for range 2 {
		if _, err := preflightRun(context.Background(), Options{Config: gate.Config{Workspace: ws, Script: script(t, scripts, "true\n")}, History: db, Runner: runner}); err != nil {
			t.Fatal(err)
		}
	}
	if priors[0] || !priors[1] || !stored[0] || !stored[1] {
		t.Errorf("priors %v, stored %v", priors, stored)
	}
}

// TestReadOnlyHistoryRefused: as a normal user, a run whose history
// database is read-only is a setup error before the script runs.
func TestReadOnlyHistoryRefused(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	ws, scripts := t.TempDir(), t.TempDir()
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := history.Open(path, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	os.Chmod(path, 0o444)
	if db, err = history.Open(path, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	marker := filepath.Join(scripts, "ran")
	cfg := gate.Config{Workspace: ws, Script: script(t, scripts, "touch '"+marker+"'\n")}
	_, err = preflightRun(context.Background(), Options{Config: cfg, History: db})
	var se *gate.SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("run with a read-only history: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the script ran though its run could not be recorded")
	}
}

// TestDiffNoteBudget: run 1 cannot keep settings.ini for its budget; run 2
// reuses its hash and edits it: the change has no diff and says
// "keep-budget", not "not kept". With a budget, run 2 has the diff.
func TestDiffNoteBudget(t *testing.T) {
	for _, tc := range []struct {
		keepBudget int64
		note       string
	}{{1, diff.NoteKeepBudget}, {0, ""}} {
		ws, scripts, db := setup(t)
		// The hash cache reuses a hash only for a file older than the
		// granularity (2 s by default): a fine one reuses at once.
		run := func(body string) *Result {
			t.Helper()
			res, err := preflightRun(context.Background(), Options{History: db,
				Config: gate.Config{Workspace: ws, Script: script(t, scripts, body), KeepBudget: tc.keepBudget, Granularity: time.Nanosecond}})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		run("true\n")
		res := run("sed -i 's/false/true/' settings.ini\n")
		if len(res.Report.Changes) != 1 {
			t.Fatalf("changes %+v", res.Report.Changes)
		}
		c := res.Report.Changes[0]
		if c.DiffNote != tc.note || (tc.note == "") != strings.Contains(c.TextDiff, "+debug = true") {
			t.Errorf("keep budget %d: note %q, diff %q", tc.keepBudget, c.DiffNote, c.TextDiff)
		}
	}
}

// TestWatchOutside: the pipeline the desktop app uses watches what its
// configuration says (a fixture HOME's default set, an extra path), and
// the run is recorded with the changes found outside the workspace, the
// hash chain covering them; NoDefaultWatch leaves the default set out.
func TestWatchOutside(t *testing.T) {
	ws, scripts, db := setup(t)
	home, extra := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("orig\n"), 0o644)
	env := &watch.Env{Home: home, Name: "u", OS: "linux", CronSpool: filepath.Join(home, "spool")}
	sh := script(t, scripts, "echo x >> \"$1/.bashrc\"\necho y > \"$2/new\"\n")
	cfg := gate.Config{Workspace: ws, Script: sh, Args: []string{home, extra}, Watch: []string{extra}, WatchEnv: env}
	res, err := preflightRun(context.Background(), Options{Config: cfg, History: db})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	want := []string{"OUTSIDE changed " + filepath.Join(home, ".bashrc") + " (size 5 B -> 7 B)", "OUTSIDE added " + filepath.Join(extra, "new") + " (file 0644 2 B)"}
	if rep.Verdict != "fail" || strings.Join(rep.Lines(), "\n") != strings.Join(want, "\n") {
		t.Fatalf("verdict %s lines %q, want %q", rep.Verdict, rep.Lines(), want)
	}
	run, err := db.Get(context.Background(), res.RunID)
	if err != nil || strings.Join(run.Report.Lines(), "\n") != strings.Join(want, "\n") || run.Report.Watch == nil {
		t.Fatalf("recorded: %v %q", err, run.Report.Lines())
	}
	if bad, err := db.Verify(context.Background()); bad != nil || err != nil {
		t.Fatalf("verify: %+v %v", bad, err)
	}
	cfg.NoDefaultWatch, cfg.Watch = true, nil
	res, err = preflightRun(context.Background(), Options{Config: cfg, History: db})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Verdict != "pass" || res.Report.Watch != nil {
		t.Errorf("with NoDefaultWatch: %s %q", res.Report.Verdict, res.Report.Lines())
	}
}

// TestHistoryPriorReleasedBeforeScript: the hash cache the pipeline loads
// from the history is, like the gate's own prior, collectable by the time
// the script runs: the pipeline keeps no reference to it past the
// before-snapshot.
func TestHistoryPriorReleasedBeforeScript(t *testing.T) {
	ws, scripts, db := setup(t)
	released := []int{} // per run with a prior: 1 collected when the script started, 0 not
	runner := func(ctx context.Context, cfg gate.Config) (*gate.Result, error) {
		if cfg.Prior == nil {
			return gate.Run(ctx, cfg)
		}
		var freed atomic.Bool
		runtime.AddCleanup(cfg.Prior, func(b *atomic.Bool) { b.Store(true) }, &freed)
		checked := false
		cfg.Progress = func(p gate.Progress) {
			if p.Phase == gate.Execute && !checked {
				checked = true
				for range 3 {
					runtime.GC()
				}
				released = append(released, map[bool]int{true: 1, false: 0}[freed.Load()])
			}
		}
		return gate.Run(ctx, cfg)
	}
	for range 2 {
		if _, err := preflightRun(context.Background(), Options{Config: gate.Config{Workspace: ws, Script: script(t, scripts, "true\n")}, History: db, Runner: runner}); err != nil {
			t.Fatal(err)
		}
	}
	if len(released) != 1 || released[0] != 1 {
		t.Fatalf("released %v; want [1]: the history's hash cache was still referenced when the script ran", released)
	}
}
