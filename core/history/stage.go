//go:build !js

package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/diffgate/diffgate/core/report"
)

// linkStage is the chain's kind for a stage_events row.
const linkStage = "stage"

// How the applied paths of a staged run were chosen (StageEvent.Decision).
const (
	ApplyAll         = "all"
	ApplyOnlyAllowed = "only-allowed"
	ApplySubset      = "subset"
	// ApplyForced: every change of a run that failed its gate, applied
	// with --force; ApplyForcedSubset: a chosen subset of them, forced.
	ApplyForced       = "forced"
	ApplyForcedSubset = "forced-subset"
)

// EventApplying is the stage event recorded before an apply writes
// anything, with the decision and paths it will write. Until an applied (or
// partially-applied) event follows it, the workspace may be half-applied:
// apply resumes it (from the run's record alone), discard gives it up, and
// no new run may gate the workspace. The run's stage state stays pending.
const EventApplying = "applying"

// StageEvent is what became of a staged run's stage.
type StageEvent struct {
	RunID int64
	// Event is EventApplying, report.StageApplied, StagePartiallyApplied,
	// StageDiscarded or StageExpired.
	Event string
	// Decision (ApplyAll, ApplyOnlyAllowed, ApplySubset, ApplyForced) and
	// Paths say what an apply wrote (or, applying, will write); both are
	// empty for a discard or an expiry.
	Decision string
	Paths    []string
	At       time.Time
}

type stageEventRow struct {
	id, runID             int64
	event, decision, path string // path: encodeList of the paths
	at                    string
}

func (r *stageEventRow) digest() []byte {
	var e enc
	e.str("diffgate.history.stage/v1")
	e.int(r.runID)
	e.str(r.event)
	e.str(r.decision)
	e.str(r.path)
	e.str(r.at)
	s := sha256.Sum256(e.b)
	return s[:]
}

func loadStageEventRow(ctx context.Context, q querier, id int64) (*stageEventRow, error) {
	r := stageEventRow{id: id}
	var paths []byte
	err := q.QueryRowContext(ctx, "SELECT run_id, event, decision, paths, at FROM stage_events WHERE id = ?", id).
		Scan(&r.runID, &r.event, &r.decision, &paths, &r.at)
	r.path = string(paths)
	return &r, err
}

// AddStageEvent records what became of run ev.RunID's stage (a link of the
// hash chain). The run must be a staged run whose stage is still pending
// (EventApplying only once): once applied, discarded or expired it takes no
// further event.
func (db *DB) AddStageEvent(ctx context.Context, ev StageEvent) error {
	switch ev.Event {
	case EventApplying, report.StageApplied, report.StagePartiallyApplied:
		switch ev.Decision {
		case ApplyAll, ApplyOnlyAllowed, ApplySubset, ApplyForced, ApplyForcedSubset:
		default:
			return fmt.Errorf("stage event: decision %q", ev.Decision)
		}
	case report.StageDiscarded, report.StageExpired:
		if ev.Decision != "" || len(ev.Paths) > 0 {
			return fmt.Errorf("stage event %s: no decision or paths", ev.Event)
		}
	default:
		return fmt.Errorf("stage event %q", ev.Event)
	}
	if err := refuseInGatedRun("stage event"); err != nil {
		return err
	}
	return db.write(ctx, "stage event", func(tx *sqlTx) error {
		st, err := stageOf(ctx, tx, ev.RunID)
		if err != nil {
			return err
		}
		if st == nil {
			return fmt.Errorf("run %d was not staged", ev.RunID)
		}
		if st.State != report.StagePending {
			return fmt.Errorf("run %d: stage already %s", ev.RunID, st.State)
		}
		if ev.Event == EventApplying {
			if cur, err := applying(ctx, tx, ev.RunID); err != nil {
				return err
			} else if cur != nil {
				return fmt.Errorf("run %d: an apply was started already", ev.RunID)
			}
		}
		at := ev.At
		if at.IsZero() {
			at = time.Now().UTC()
		}
		r := stageEventRow{runID: ev.RunID, event: ev.Event, decision: ev.Decision,
			path: string(encodeList(ev.Paths)), at: formatTime(at)}
		r.id, err = tx.insertID(ctx, "INSERT INTO stage_events (run_id, event, decision, paths, at) VALUES (?, ?, ?, ?, ?)",
			r.runID, r.event, r.decision, blob(r.path), r.at)
		if err != nil {
			return err
		}
		return appendLink(ctx, tx, linkStage, r.id, r.digest())
	})
}

// StageOf returns run id's stage with its state, or nil for a run that was
// not staged. An unknown id gives an error wrapping ErrNotFound.
func (db *DB) StageOf(ctx context.Context, id int64) (*report.Stage, error) {
	return stageOf(ctx, db.sql, id)
}

func stageOf(ctx context.Context, q querier, id int64) (*report.Stage, error) {
	var extra []byte
	err := q.QueryRowContext(ctx, "SELECT extra FROM runs WHERE id = ?", id).Scan(&extra)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", id, dbError(err))
	}
	var rep report.Report
	if err := decodeExtra(extra, &rep); err != nil {
		return nil, fmt.Errorf("run %d: extra: %w", id, err)
	}
	if rep.Stage == nil {
		return nil, nil
	}
	if err := stageState(ctx, q, id, rep.Stage); err != nil {
		return nil, err
	}
	return rep.Stage, nil
}

// stageState sets st.State from run id's latest stage event.
func stageState(ctx context.Context, q querier, id int64, st *report.Stage) error {
	var ev string
	err := q.QueryRowContext(ctx, "SELECT event FROM stage_events WHERE run_id = ? ORDER BY id DESC LIMIT 1", id).Scan(&ev)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		st.State = report.StagePending
	case err != nil:
		return fmt.Errorf("run %d: stage: %w", id, dbError(err))
	case ev == EventApplying:
		st.State = report.StagePending // started, not done: apply resumes it
	default:
		st.State = ev
	}
	return nil
}

// Applying returns the EventApplying event of run id when it is the run's
// latest stage event (an apply was started and neither completed nor was
// given up), else nil.
func (db *DB) Applying(ctx context.Context, id int64) (*StageEvent, error) {
	return applying(ctx, db.sql, id)
}

func applying(ctx context.Context, q querier, id int64) (*StageEvent, error) {
	ev := StageEvent{RunID: id}
	var paths []byte
	var at string
	err := q.QueryRowContext(ctx, "SELECT event, decision, paths, at FROM stage_events WHERE run_id = ? ORDER BY id DESC LIMIT 1", id).
		Scan(&ev.Event, &ev.Decision, &paths, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("run %d: stage: %w", id, dbError(err))
	}
	if ev.Event != EventApplying {
		return nil, nil
	}
	if ev.Paths, err = decodeList(paths); err != nil {
		return nil, fmt.Errorf("run %d: stage event paths: %w", id, err)
	}
	ev.At, _ = parseTime(at)
	return &ev, nil
}

// HalfApplied is a run whose apply was started and not completed.
type HalfApplied struct {
	RunID     int64
	Workspace string
}

// HalfAppliedRuns returns the runs whose latest stage event is
// EventApplying, oldest first, with their workspaces.
func (db *DB) HalfAppliedRuns(ctx context.Context) ([]HalfApplied, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT r.id, r.workspace FROM runs r JOIN stage_events e ON e.run_id = r.id
		WHERE e.event = ? AND e.id = (SELECT max(id) FROM stage_events WHERE run_id = r.id) ORDER BY r.id`, EventApplying)
	if err != nil {
		return nil, fmt.Errorf("half-applied runs: %w", dbError(err))
	}
	defer rows.Close()
	var out []HalfApplied
	for rows.Next() {
		var h HalfApplied
		var ws []byte
		if err := rows.Scan(&h.RunID, &ws); err != nil {
			return nil, fmt.Errorf("half-applied runs: %w", dbError(err))
		}
		h.Workspace = string(ws)
		out = append(out, h)
	}
	return out, rows.Err()
}

// StageEvents returns run id's stage events, oldest first.
func (db *DB) StageEvents(ctx context.Context, id int64) ([]StageEvent, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT event, decision, paths, at FROM stage_events WHERE run_id = ? ORDER BY id", id)
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", id, dbError(err))
	}
	defer rows.Close()
	var out []StageEvent
	for rows.Next() {
		ev := StageEvent{RunID: id}
		var paths []byte
		var at string
		if err := rows.Scan(&ev.Event, &ev.Decision, &paths, &at); err != nil {
			return nil, fmt.Errorf("run %d: %w", id, dbError(err))
		}
		if ev.Paths, err = decodeList(paths); err != nil {
			return nil, fmt.Errorf("run %d: stage event paths: %w", id, err)
		}
		ev.At, _ = parseTime(at)
		out = append(out, ev)
	}
	return out, rows.Err()
}

// PendingStages returns the staged runs whose stage is neither applied,
// discarded nor expired (an apply started and not completed included), by
// stage id.
func (db *DB) PendingStages(ctx context.Context) (map[string]int64, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT id, extra FROM runs WHERE length(extra) > 0 AND id NOT IN (SELECT run_id FROM stage_events WHERE event <> ?)", EventApplying)
	if err != nil {
		return nil, fmt.Errorf("pending stages: %w", dbError(err))
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id int64
		var extra []byte
		if err := rows.Scan(&id, &extra); err != nil {
			return nil, fmt.Errorf("pending stages: %w", dbError(err))
		}
		var rep report.Report
		if decodeExtra(extra, &rep) == nil && rep.Stage != nil {
			out[rep.Stage.ID] = id
		}
	}
	return out, rows.Err()
}
