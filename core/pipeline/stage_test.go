//go:build !js

package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/core/wslock"
	"github.com/diffgate/diffgate/internal/testenv"
)

// stagedRun runs body staged by mech, with stages below base.
func stagedRun(t *testing.T, ws, scripts, base string, db *history.DB, mech stage.Mechanism, body string) *Result {
	t.Helper()
	res, err := preflightRun(context.Background(), Options{
		Config:  gate.Config{Workspace: ws, Script: script(t, scripts, body), Allow: []string{"new.txt"}, Contain: contain.Policy{Mode: contain.Auto}},
		History: db, Stage: true, StageMechanism: mech, StageBase: base,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID == 0 || res.RecordErr != nil {
		t.Fatalf("not recorded: %v", res.RecordErr)
	}
	if res.Report.Stage == nil || res.Report.Stage.Mechanism != string(mech) || res.Report.Stage.State != report.StagePending {
		t.Fatalf("stage %+v", res.Report.Stage)
	}
	return res
}

// TestApplySubset: the app's path: a reviewer-chosen subset of a staged
// run's changes is applied, recorded as a subset, and the run shows as
// partially applied; a path the run did not change is an error that
// applies nothing. As root and as a normal user, by copy and (where the
// machine has it) by overlay.
func TestApplySubset(t *testing.T) {
	for _, mech := range []stage.Mechanism{stage.Copy, stage.Overlay} {
		t.Run(string(mech), func(t *testing.T) { testApplySubset(t, mech) })
		t.Run(string(mech)+"AsUser", func(t *testing.T) {
			if testenv.AsUser(t) {
				return
			}
			testApplySubset(t, mech)
		})
	}
}

func testApplySubset(t *testing.T, mech stage.Mechanism) {
	ctx := context.Background()
	base := t.TempDir()
	if mech == stage.Overlay {
		if p := stage.Probe(ctx, base); p.Mechanism != stage.Overlay {
			t.Skipf("no overlay here: %s", p.Why)
		}
	}
	ws, scripts, db := setup(t)
	res := stagedRun(t, ws, scripts, base, db, mech, "echo x > a\necho y > b\necho new > new.txt\necho 'debug = true' > settings.ini\n")
	if _, err := os.Stat(filepath.Join(ws, "a")); err == nil {
		t.Fatal("the staged run wrote into the workspace")
	}
	if _, err := Apply(ctx, db, res.RunID, ApplyOptions{Paths: []string{"a", "nope"}, StageBase: base}); err == nil || !strings.Contains(err.Error(), "no change at nope") {
		t.Fatalf("unknown path: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "a")); err == nil {
		t.Fatal("a refused apply wrote into the workspace")
	}
	// The run failed (a, b and settings.ini are not allowed): choosing
	// some of its changes needs Force too.
	if _, err := Apply(ctx, db, res.RunID, ApplyOptions{Paths: []string{"a", "settings.ini"}, StageBase: base}); !errors.Is(err, ErrFailedRun) {
		t.Fatalf("apply of a failed run without Force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "a")); err == nil {
		t.Fatal("a refused apply wrote into the workspace")
	}
	ar, err := Apply(ctx, db, res.RunID, ApplyOptions{Paths: []string{"a", "settings.ini"}, StageBase: base, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if ar.Decision != history.ApplyForcedSubset || ar.State != report.StagePartiallyApplied || strings.Join(ar.Paths, ",") != "a,settings.ini" {
		t.Fatalf("apply: %+v", ar)
	}
	for name, want := range map[string]string{"a": "x\n", "settings.ini": "debug = true\n"} {
		if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != want {
			t.Fatalf("%s: %q %v", name, b, err)
		}
	}
	for _, name := range []string{"b", "new.txt"} {
		if _, err := os.Stat(filepath.Join(ws, name)); err == nil {
			t.Fatalf("%s was applied", name)
		}
	}
	run, err := db.Get(ctx, res.RunID)
	if err != nil || run.Report.Stage == nil || run.Report.Stage.State != report.StagePartiallyApplied {
		t.Fatalf("recorded stage: %+v %v", run.Report.Stage, err)
	}
	if _, err := Apply(ctx, db, res.RunID, ApplyOptions{StageBase: base}); !errors.Is(err, ErrApplied) {
		t.Fatalf("apply twice: %v", err)
	}
	if err := Discard(ctx, db, res.RunID, base); !errors.Is(err, ErrApplied) {
		t.Fatalf("discard an applied run: %v", err)
	}
	// The stage is gone once applied: the history holds the decision.
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Fatalf("stages left: %v", ents)
	}
}

// TestStagedRunNeedsHistory: a staged run without the history is a setup
// error before anything runs, and leaves no stage.
func TestStagedRunNeedsHistory(t *testing.T) {
	ws, scripts, _ := setup(t)
	base := t.TempDir()
	_, err := preflightRun(context.Background(), Options{Config: gate.Config{Workspace: ws, Script: script(t, scripts, "echo x > a\n")},
		Stage: true, StageMechanism: stage.Copy, StageBase: base})
	var se *gate.SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "needs the history") {
		t.Fatalf("%v", err)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Fatalf("stages left: %v", ents)
	}
}

// TestExpireNotesRuns: expiry removes the stages older than stage.MaxAge
// and notes their pending runs as expired; a younger stage stays pending.
func TestExpireNotesRuns(t *testing.T) {
	ctx := context.Background()
	ws, scripts, db := setup(t)
	base := t.TempDir()
	r1 := stagedRun(t, ws, scripts, base, db, stage.Copy, "echo x > a\n")
	r2 := stagedRun(t, ws, scripts, base, db, stage.Copy, "echo y > b\n")
	// Fifteen days later, r2 decided meanwhile.
	if err := Discard(ctx, db, r2.RunID, base); err != nil {
		t.Fatal(err)
	}
	r3 := stagedRun(t, ws, scripts, base, db, stage.Copy, "echo z > c\n")
	later := time.Now().Add(stage.MaxAge + time.Hour)
	got := expireAt(ctx, db, base, zerolog.Nop(), later)
	if len(got) != 2 || got[0] == got[1] {
		t.Fatalf("expired %v, want runs %d and %d", got, r1.RunID, r3.RunID)
	}
	for id, want := range map[int64]string{r1.RunID: report.StageExpired, r2.RunID: report.StageDiscarded, r3.RunID: report.StageExpired} {
		st, err := db.StageOf(ctx, id)
		if err != nil || st == nil || st.State != want {
			t.Fatalf("run %d: %+v %v, want %s", id, st, err, want)
		}
	}
	if _, err := Apply(ctx, db, r1.RunID, ApplyOptions{StageBase: base}); !errors.Is(err, ErrExpired) {
		t.Fatalf("apply an expired run: %v", err)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Fatalf("stages left: %v", ents)
	}
	if b, err := db.Verify(ctx); err != nil || b != nil {
		t.Fatalf("verify: %+v %v", b, err)
	}
}

// TestApplyWaitsForNoRun: an apply while a gated run holds the workspace
// fails at once and applies nothing; once the run is over it applies.
func TestApplyWaitsForNoRun(t *testing.T) {
	ctx := context.Background()
	ws, scripts, db := setup(t)
	base := t.TempDir()
	res := stagedRun(t, ws, scripts, base, db, stage.Copy, "echo x > a\n")
	lock, err := wslock.Acquire(ctx, ws, 0, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	var held *wslock.HeldError
	if _, err := Apply(ctx, db, res.RunID, ApplyOptions{StageBase: base, Force: true}); !errors.As(err, &held) {
		t.Fatalf("apply under a run's lock: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "a")); err == nil {
		t.Fatal("applied under a run's lock")
	}
	lock.Release()
	if _, err := Apply(ctx, db, res.RunID, ApplyOptions{StageBase: base, Force: true}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "a")); err != nil || string(b) != "x\n" {
		t.Fatalf("a: %q %v", b, err)
	}
}
