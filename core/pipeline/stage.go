//go:build !js

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/core/wslock"
	"github.com/rs/zerolog"
)

// Errors of Apply and Discard that are decisions already taken, not
// failures: the CLI exits 2 with one line for each.
var (
	// ErrNotStaged: the run was a direct run.
	ErrNotStaged = errors.New("was not staged (run it with --stage)")
	// ErrApplied: the run's stage was applied already (wholly or in part).
	ErrApplied = errors.New("was applied already")
	// ErrDiscarded: the run's stage was discarded (or expired).
	ErrDiscarded = errors.New("was discarded")
	// ErrExpired: the run's stage expired (older than stage.MaxAge).
	ErrExpired = errors.New("expired (its stage was older than 14 days)")
	// ErrApplying: an apply of the run was interrupted; only Apply
	// completes it.
	ErrApplying = errors.New("has an interrupted apply (run apply again to complete it)")
)

// DecisionError wraps one of the errors above with the run's number.
type DecisionError struct {
	RunID int64
	Err   error
}

func (e *DecisionError) Error() string { return fmt.Sprintf("run %d %v", e.RunID, e.Err) }
func (e *DecisionError) Unwrap() error { return e.Err }

// ApplyOptions choose what Apply writes.
type ApplyOptions struct {
	// OnlyAllowed applies only the changes the run's allowlist allowed.
	OnlyAllowed bool
	// Paths, when not empty, applies only these paths of the run's changes
	// (the reviewer's choice); a path that is not a change of the run is
	// an error. With OnlyAllowed, only the allowed ones among them.
	Paths []string
	// StageBase is the directory holding the stages; "" means
	// stage.BaseDir().
	StageBase string
	// AfterOp is passed to stage.ApplyOptions (tests kill an apply midway).
	AfterOp func(done int)
}

// ApplyResult is what Apply did.
type ApplyResult struct {
	// Paths lists the applied paths.
	Paths []string
	// Decision is history.ApplyAll, ApplyOnlyAllowed or ApplySubset.
	Decision string
	// State is the run's stage state now: report.StageApplied or
	// report.StagePartiallyApplied.
	State string
	// Conflicts lists the paths that changed in the workspace since the
	// run (then nothing was applied and the error is a
	// *stage.ConflictError).
	Conflicts []stage.Conflict
	// Held lists the chosen changes left out: each removes a folder (or
	// replaces it by a file or symlink) while a change below it was not
	// chosen.
	Held []string
}

// Apply writes run runID's staged changes into the workspace: all of them,
// only the allowed ones, or a chosen subset (o). Every path is first
// checked against the run's before-snapshot: any difference is a conflict,
// returned as a *stage.ConflictError with ApplyResult.Conflicts set, and
// nothing is applied. It holds the workspace's lock (core/wslock): a gated
// run on the workspace makes it fail at once. An apply that was interrupted (even by SIGKILL)
// completes when called again. The apply is recorded in the history (the
// paths and how they were chosen) and the stage is then removed. A run
// already applied, discarded or expired, or not staged, gives a
// *DecisionError.
func Apply(ctx context.Context, db *history.DB, runID int64, o ApplyOptions) (*ApplyResult, error) {
	run, err := db.Get(ctx, runID)
	if err != nil {
		return nil, err
	}
	if err := decided(runID, run.Report.Stage); err != nil {
		return nil, err
	}
	st, err := stage.Open(o.StageBase, run.Report.Stage.ID)
	if err != nil {
		return nil, err
	}
	all := run.Report.Changes
	chosen := all
	decision := history.ApplyAll
	if len(o.Paths) > 0 {
		want := map[string]bool{}
		for _, p := range o.Paths {
			want[p] = true
		}
		chosen = nil
		for _, c := range all {
			if want[c.Path] {
				chosen = append(chosen, c)
				delete(want, c.Path)
			}
		}
		if len(want) > 0 {
			left := make([]string, 0, len(want))
			for p := range want {
				left = append(left, p)
			}
			slices.Sort(left)
			return nil, fmt.Errorf("run %d has no change at %s", runID, report.QuotePath(left[0]))
		}
		decision = history.ApplySubset
	}
	if o.OnlyAllowed {
		var allowed []diff.Change
		for _, c := range chosen {
			if c.Allowed {
				allowed = append(allowed, c)
			}
		}
		chosen = allowed
		if decision == history.ApplyAll {
			decision = history.ApplyOnlyAllowed
		}
	}
	chosen, held := withoutOrphanedRemovals(chosen, all)
	if decision == history.ApplySubset && len(chosen) == len(all) {
		decision = history.ApplyAll
	}
	// No gated run may walk the workspace while it changes under it (nor
	// start from a half-applied one).
	lock, err := wslock.Acquire(ctx, st.Workspace, 0, zerolog.Nop())
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	applied, err := st.Apply(ctx, chosen, stage.ApplyOptions{AfterOp: o.AfterOp, Partial: len(chosen) < len(all)})
	if errors.Is(err, stage.ErrApplied) {
		// Applied, but the history did not hear of it (killed in between).
		applied, err = st.AppliedRecord(), nil
		if applied == nil {
			err = stage.ErrApplied
		}
	}
	var ce *stage.ConflictError
	if errors.As(err, &ce) {
		return &ApplyResult{Conflicts: ce.Conflicts}, err
	}
	if err != nil {
		return nil, err
	}
	res := &ApplyResult{Paths: applied.Paths, Decision: decision, State: report.StageApplied, Held: held}
	if applied.Partial {
		res.State = report.StagePartiallyApplied
		if decision == history.ApplyAll { // resumed from a journal
			res.Decision = history.ApplySubset
		}
	}
	if err := db.AddStageEvent(context.WithoutCancel(ctx), history.StageEvent{RunID: runID, Event: res.State,
		Decision: res.Decision, Paths: res.Paths, At: applied.At}); err != nil {
		return res, fmt.Errorf("run %d: applied, but not recorded (apply it again to record it): %w", runID, err)
	}
	_ = st.Discard() // the history holds the decision; the stage's job is done
	return res, nil
}

// withoutOrphanedRemovals drops from chosen each change that removes a
// directory (removed, or replaced by a file or symlink) while a change
// below it is not chosen: applying it would remove entries whose removal
// was not chosen (not allowed, or not picked by the reviewer).
func withoutOrphanedRemovals(chosen, all []diff.Change) (kept []diff.Change, held []string) {
	if len(chosen) == len(all) {
		return chosen, nil
	}
	picked := make(map[string]bool, len(chosen))
	for _, c := range chosen {
		picked[c.Path] = true
	}
	out := chosen[:0:0]
	for _, c := range chosen {
		if b := c.Before; b != nil && b.Type == snapshot.Dir && (c.After == nil || c.After.Type != snapshot.Dir) {
			prefix := c.Path + "/"
			left := slices.ContainsFunc(all, func(o diff.Change) bool {
				return strings.HasPrefix(o.Path, prefix) && !picked[o.Path]
			})
			if left {
				held = append(held, c.Path)
				continue
			}
		}
		out = append(out, c)
	}
	return out, held
}

// Discard removes run runID's stage and records it in the history. A run
// already applied, discarded or expired, not staged, or with an
// interrupted apply (which only Apply may complete), gives a
// *DecisionError.
func Discard(ctx context.Context, db *history.DB, runID int64, stageBase string) error {
	st, err := db.StageOf(ctx, runID)
	if err != nil {
		return err
	}
	if err := decided(runID, st); err != nil {
		return err
	}
	if s, err := stage.Open(stageBase, st.ID); err == nil {
		if s.Pending() {
			return &DecisionError{RunID: runID, Err: ErrApplying}
		}
		if s.AppliedRecord() != nil {
			return &DecisionError{RunID: runID, Err: ErrApplied}
		}
		if err := s.Discard(); err != nil {
			return err
		}
	}
	return db.AddStageEvent(context.WithoutCancel(ctx), history.StageEvent{RunID: runID, Event: report.StageDiscarded})
}

// decided returns a *DecisionError unless st is a pending stage.
func decided(runID int64, st *report.Stage) error {
	var err error
	switch {
	case st == nil:
		err = ErrNotStaged
	case st.State == report.StageApplied || st.State == report.StagePartiallyApplied:
		err = ErrApplied
	case st.State == report.StageDiscarded:
		err = ErrDiscarded
	case st.State == report.StageExpired:
		err = ErrExpired
	default:
		return nil
	}
	return &DecisionError{RunID: runID, Err: err}
}

// expire removes the stages older than stage.MaxAge and notes each pending
// run among them as expired; it returns those runs. Failures only cost
// disk space until the next run: they are logged.
func expire(ctx context.Context, db *history.DB, base string, log zerolog.Logger) []int64 {
	return expireAt(ctx, db, base, log, time.Now())
}

func expireAt(ctx context.Context, db *history.DB, base string, log zerolog.Logger, now time.Time) []int64 {
	gone, err := stage.Expire(base, stage.MaxAge, now)
	if err != nil {
		log.Warn().Err(err).Msg("stage expiry")
	}
	if len(gone) == 0 {
		return nil
	}
	pending, err := db.PendingStages(ctx)
	if err != nil {
		log.Warn().Err(err).Msg("stage expiry")
		return nil
	}
	var runs []int64
	for _, id := range gone {
		run, ok := pending[id]
		if !ok {
			continue
		}
		if err := db.AddStageEvent(ctx, history.StageEvent{RunID: run, Event: report.StageExpired}); err != nil {
			log.Warn().Err(err).Int64("run", run).Msg("stage expiry")
			continue
		}
		runs = append(runs, run)
	}
	return runs
}
