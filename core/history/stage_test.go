//go:build !js

package history

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/report"
)

// TestStageEventsInTheChain: a staged run keeps its stage's id and
// mechanism (hashed with the run); its apply, with the paths and how they
// were chosen, is a link of the hash chain: editing, deleting or inserting
// one behind diffgate's back is caught by Verify. A decided stage takes no
// further event, and a direct run none at all.
func TestStageEventsInTheChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	db := openTest(t, path)
	staged := sampleReport("/ws", 2)
	staged.Stage = &report.Stage{ID: "20260301T100000-abc", Mechanism: "overlay", State: report.StagePending}
	id, err := db.Record(ctx, &Run{Report: staged}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := db.Record(ctx, &Run{Report: sampleReport("/ws", 1)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := db.Get(ctx, id)
	if err != nil || run.Report.Stage == nil || *run.Report.Stage != *staged.Stage {
		t.Fatalf("stage read back: %+v %v", run.Report.Stage, err)
	}
	if st, err := db.StageOf(ctx, direct); err != nil || st != nil {
		t.Fatalf("a direct run's stage: %+v %v", st, err)
	}
	if p, _ := db.PendingStages(ctx); len(p) != 1 || p[staged.Stage.ID] != id {
		t.Fatalf("pending: %v", p)
	}
	if err := db.AddStageEvent(ctx, StageEvent{RunID: direct, Event: report.StageDiscarded}); err == nil {
		t.Fatal("a direct run took a stage event")
	}
	if err := db.AddStageEvent(ctx, StageEvent{RunID: id, Event: report.StageApplied, Decision: "most"}); err == nil {
		t.Fatal("an unknown decision was recorded")
	}
	ev := StageEvent{RunID: id, Event: report.StagePartiallyApplied, Decision: ApplyOnlyAllowed, Paths: []string{"a", "b c"}}
	if err := db.AddStageEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if err := db.AddStageEvent(ctx, StageEvent{RunID: id, Event: report.StageDiscarded}); err == nil || !strings.Contains(err.Error(), "already partially-applied") {
		t.Fatalf("a second event: %v", err)
	}
	evs, err := db.StageEvents(ctx, id)
	if err != nil || len(evs) != 1 || evs[0].Decision != ApplyOnlyAllowed || strings.Join(evs[0].Paths, "|") != "a|b c" {
		t.Fatalf("events: %+v %v", evs, err)
	}
	list, err := db.List(ctx, Filter{})
	if err != nil || len(list) != 2 || list[1].Stage != report.StagePartiallyApplied || list[0].Stage != "" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if b, err := db.Verify(ctx); err != nil || b != nil {
		t.Fatalf("verify: %+v %v", b, err)
	}
	for _, c := range []struct{ name, edit, undo, what string }{
		{"event edited", "UPDATE stage_events SET decision = 'all' WHERE id = 1", "UPDATE stage_events SET decision = 'only-allowed' WHERE id = 1", "stage event 1"},
		{"event deleted", "DELETE FROM stage_events WHERE id = 1", "", "stage event 1"},
		{"stage id edited", "UPDATE runs SET extra = CAST(replace(CAST(extra AS TEXT), 'abc', 'abd') AS BLOB) WHERE id = 1", "", "run 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := db.sql.Exec(c.edit); err != nil {
				t.Fatal(err)
			}
			b, err := db.Verify(ctx)
			if err != nil || b == nil || !strings.Contains(b.What, c.what) {
				t.Fatalf("verify after %q: %+v %v", c.edit, b, err)
			}
			if c.undo != "" {
				if _, err := db.sql.Exec(c.undo); err != nil {
					t.Fatal(err)
				}
				if b, err := db.Verify(ctx); err != nil || b != nil {
					t.Fatalf("verify after the undo: %+v %v", b, err)
				}
			}
		})
	}
}

// TestStageApplying: an apply is recorded as started (EventApplying, with
// its decision and paths, a link of the chain) before it writes: the run
// stays pending, Applying returns it, HalfAppliedRuns names the run and its
// workspace, and it takes one applying event only; an applied or discarded
// event ends it.
func TestStageApplying(t *testing.T) {
	db := openTest(t, filepath.Join(t.TempDir(), "h.db"))
	var ids []int64
	for i, ws := range []string{"/ws", "/other"} {
		r := sampleReport(ws, 2)
		r.Stage = &report.Stage{ID: "20260301T100000-ab" + string(rune('a'+i)), Mechanism: "copy", State: report.StagePending}
		id, err := db.Record(ctx, &Run{Report: r}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if ev, err := db.Applying(ctx, ids[0]); err != nil || ev != nil {
		t.Fatalf("applying before any apply: %+v %v", ev, err)
	}
	for _, id := range ids {
		if err := db.AddStageEvent(ctx, StageEvent{RunID: id, Event: EventApplying, Decision: ApplyForced, Paths: []string{"a", "b"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddStageEvent(ctx, StageEvent{RunID: ids[0], Event: EventApplying, Decision: ApplyAll}); err == nil {
		t.Fatal("a second applying event was recorded")
	}
	ev, err := db.Applying(ctx, ids[0])
	if err != nil || ev == nil || ev.Decision != ApplyForced || strings.Join(ev.Paths, ",") != "a,b" {
		t.Fatalf("applying: %+v %v", ev, err)
	}
	if st, err := db.StageOf(ctx, ids[0]); err != nil || st.State != report.StagePending {
		t.Fatalf("state while applying: %+v %v", st, err)
	}
	if list, err := db.List(ctx, Filter{}); err != nil || list[0].Stage != report.StagePending {
		t.Fatalf("list while applying: %+v %v", list, err)
	}
	if p, _ := db.PendingStages(ctx); len(p) != 2 {
		t.Fatalf("pending while applying: %v", p)
	}
	half, err := db.HalfAppliedRuns(ctx)
	if err != nil || len(half) != 2 || half[0].RunID != ids[0] || half[0].Workspace != "/ws" || half[1].Workspace != "/other" {
		t.Fatalf("half-applied: %+v %v", half, err)
	}
	if err := db.AddStageEvent(ctx, StageEvent{RunID: ids[0], Event: report.StageApplied, Decision: ApplyForced, Paths: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.AddStageEvent(ctx, StageEvent{RunID: ids[1], Event: report.StageDiscarded}); err != nil {
		t.Fatal(err)
	}
	if half, err := db.HalfAppliedRuns(ctx); err != nil || len(half) != 0 {
		t.Fatalf("half-applied after apply and discard: %+v %v", half, err)
	}
	if ev, err := db.Applying(ctx, ids[0]); err != nil || ev != nil {
		t.Fatalf("applying after the apply: %+v %v", ev, err)
	}
	if b, err := db.Verify(ctx); err != nil || b != nil {
		t.Fatalf("verify: %+v %v", b, err)
	}
	if _, err := db.sql.Exec("UPDATE stage_events SET paths = x'' WHERE event = 'applying'"); err != nil {
		t.Fatal(err)
	}
	if b, err := db.Verify(ctx); err != nil || b == nil || !strings.Contains(b.What, "applying") {
		t.Fatalf("verify after an applying event was edited: %+v %v", b, err)
	}
}

// TestStageEventsSurviveMigration9: migration 9 rebuilds stage_events (its
// CHECK gains 'applying'): a database of version 8 with stage events keeps
// them, ids and chain intact.
func TestStageEventsSurviveMigration9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	old, err := open(path, zerolog.Nop(), 8)
	if err != nil {
		t.Fatal(err)
	}
	r := sampleReport("/ws", 2)
	r.Stage = &report.Stage{ID: "20260301T100000-abc", Mechanism: "overlay", State: report.StagePending}
	id, err := old.Record(ctx, &Run{Report: r}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.AddStageEvent(ctx, StageEvent{RunID: id, Event: report.StageApplied, Decision: ApplyAll, Paths: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db := openTest(t, path)
	evs, err := db.StageEvents(ctx, id)
	if err != nil || len(evs) != 1 || evs[0].Event != report.StageApplied || strings.Join(evs[0].Paths, ",") != "a" {
		t.Fatalf("events after the upgrade: %+v %v", evs, err)
	}
	if b, err := db.Verify(ctx); err != nil || b != nil {
		t.Fatalf("verify after the upgrade: %+v %v", b, err)
	}
}
