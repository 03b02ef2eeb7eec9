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
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/core/wslock"
	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/quote"
	"github.com/rs/zerolog"
)

// Errors of Apply and Discard that are decisions already taken, not
// failures: the CLI exits 2 with one line for each (ErrFailedRun: 1).
var (
	// ErrNotStaged: the run was a direct run.
	ErrNotStaged = errors.New("was not staged (run it with --stage)")
	// ErrApplied: the run's stage was applied already (wholly or in part).
	ErrApplied = errors.New("was applied already")
	// ErrDiscarded: the run's stage was discarded (or expired).
	ErrDiscarded = errors.New("was discarded")
	// ErrExpired: the run's stage expired (older than stage.MaxAge).
	ErrExpired = errors.New("expired (its stage was older than 14 days)")
	// ErrFailedRun: the run failed its gate, and neither Force nor
	// OnlyAllowed was given.
	ErrFailedRun = errors.New("failed its gate: nothing applied; apply only what was allowed with --only-allowed, or all of it with --force (recorded as forced)")
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
	// Force applies the changes of a run that failed its gate (without it,
	// or OnlyAllowed, such a run gives ErrFailedRun); the history records
	// the decision as history.ApplyForced.
	Force bool
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
	// Decision is history.ApplyAll, ApplyOnlyAllowed, ApplySubset,
	// ApplyForced or ApplyForcedSubset.
	Decision string
	// State is the run's stage state now: report.StageApplied or
	// report.StagePartiallyApplied.
	State string
	// Resumed is set when an interrupted apply was completed (the paths
	// and decision are those it started with; o's choice is not used).
	Resumed bool
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
// only the allowed ones, or a chosen subset (o). A run that failed its gate
// needs o.Force or o.OnlyAllowed. Everything apply writes comes from the
// run's record in the history: the workspace, the stage's id and
// mechanism, and each change (path, type, mode, content hash, symlink
// target); the stage directory only gives the staged files' bytes, checked
// against the recorded hashes. Every path it will touch is first checked
// against the run's before-snapshot (parents and trees below removed
// folders included): any difference is a conflict, returned as a
// *stage.ConflictError with ApplyResult.Conflicts set, and nothing is
// applied. It holds the workspace's lock (core/wslock): a gated run on the
// workspace makes it fail at once. Before the first write it records the
// apply as started (history.EventApplying, with its paths): until it
// completes, no run may gate the workspace, and calling Apply again (even
// after SIGKILL) resumes it. The apply is recorded in the history (the
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
	started, err := db.Applying(ctx, runID)
	if err != nil {
		return nil, err
	}
	chosen, decision, held, err := applyChoice(runID, run.Report, started, o)
	if err != nil {
		return nil, err
	}
	st, err := stage.FromRecord(o.StageBase, run.Report.Stage.ID, run.Report.Workspace, stage.Mechanism(run.Report.Stage.Mechanism))
	if err != nil {
		return nil, err
	}
	// No gated run may walk the workspace while it changes under it (nor
	// start from a half-applied one).
	lock, err := wslock.Acquire(ctx, st.Workspace, 0, zerolog.Nop())
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	all := run.Report.Changes
	paths, err := st.Apply(ctx, chosen, stage.ApplyOptions{All: all, Resume: started != nil, AfterOp: o.AfterOp,
		Start: recordApplying(ctx, db, runID, decision, started != nil)})
	var ce *stage.ConflictError
	if errors.As(err, &ce) {
		return &ApplyResult{Conflicts: ce.Conflicts, Resumed: started != nil}, err
	}
	if err != nil {
		return nil, err
	}
	res := applied(paths, all, decision, held, started != nil)
	return res, finishApply(ctx, db, runID, st, res)
}

// applyChoice returns the changes Apply writes and the decision it
// records: those of an apply that was started (whatever o chooses now),
// else o's choice, a failed run's only with Force (or OnlyAllowed).
func applyChoice(runID int64, rep *report.Report, started *history.StageEvent, o ApplyOptions) (chosen []diff.Change, decision string, held []string, err error) {
	all := rep.Changes
	if started != nil {
		// Resume exactly what was started, whatever o chooses now.
		want := map[string]bool{}
		for _, p := range started.Paths {
			want[p] = true
		}
		for _, c := range all {
			if want[c.Path] {
				chosen = append(chosen, c)
			}
		}
		return chosen, started.Decision, nil, nil
	}
	if chosen, decision, held, err = choose(runID, all, o); err != nil {
		return nil, "", nil, err
	}
	if rep.Verdict != report.Pass && !o.OnlyAllowed {
		if !o.Force {
			return nil, "", nil, &DecisionError{RunID: runID, Err: ErrFailedRun}
		}
		decision = history.ApplyForced
		if len(chosen) < len(all) {
			decision = history.ApplyForcedSubset
		}
	}
	return chosen, decision, held, nil
}

// recordApplying is the stage's Start: before it writes, the history
// records which paths the apply writes (a resumed apply's are recorded).
func recordApplying(ctx context.Context, db *history.DB, runID int64, decision string, resumed bool) func(paths []string) error {
	return func(paths []string) error {
		if resumed {
			return nil
		}
		if err := db.AddStageEvent(context.WithoutCancel(ctx), history.StageEvent{RunID: runID,
			Event: history.EventApplying, Decision: decision, Paths: paths}); err != nil {
			return fmt.Errorf("run %d: the apply could not be recorded, nothing applied: %w", runID, err)
		}
		return nil
	}
}

// applied is the outcome of writing paths of all: applied, or partially
// applied (a decision for all then becomes one for a subset).
func applied(paths []string, all []diff.Change, decision string, held []string, resumed bool) *ApplyResult {
	res := &ApplyResult{Paths: paths, Decision: decision, State: report.StageApplied, Resumed: resumed, Held: held}
	done := map[string]bool{}
	for _, p := range paths {
		done[p] = true
	}
	for _, c := range all {
		if !done[c.Path] {
			res.State = report.StagePartiallyApplied
			switch res.Decision {
			case history.ApplyAll:
				res.Decision = history.ApplySubset
			case history.ApplyForced:
				res.Decision = history.ApplyForcedSubset
			}
			break
		}
	}
	return res
}

// finishApply records the apply's outcome, removes the stage and makes
// the next staged run walk the changed workspace again.
func finishApply(ctx context.Context, db *history.DB, runID int64, st *stage.Stage, res *ApplyResult) error {
	if err := db.AddStageEvent(context.WithoutCancel(ctx), history.StageEvent{RunID: runID, Event: res.State,
		Decision: res.Decision, Paths: res.Paths}); err != nil {
		return fmt.Errorf("run %d: applied, but not recorded (apply it again to record it): %w", runID, err)
	}
	_ = st.Discard() // the history holds the decision; the stage's job is done
	// The workspace changed: the next staged run walks it again.
	if key, err := history.WorkspaceKey(st.Workspace); err == nil {
		_ = forgetShape(context.WithoutCancel(ctx), db, key)
	}
	return nil
}

// choose returns the changes o chooses among all, and how they were
// chosen.
func choose(runID int64, all []diff.Change, o ApplyOptions) (chosen []diff.Change, decision string, held []string, err error) {
	chosen = all
	decision = history.ApplyAll
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
			return nil, "", nil, fmt.Errorf("run %d has no change at %s", runID, quote.Path(left[0]))
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
	chosen, held = withoutOrphanedRemovals(chosen, all)
	if decision == history.ApplySubset && len(chosen) == len(all) {
		decision = history.ApplyAll
	}
	return chosen, decision, held, nil
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

// Discard removes run runID's stage and records it in the history. It
// always works on a pending stage, an interrupted apply included: the
// workspace then keeps what that apply wrote (HalfApplied tells first). A
// run already applied, discarded or expired, or not staged, gives a
// *DecisionError.
func Discard(ctx context.Context, db *history.DB, runID int64, stageBase string) error {
	st, err := db.StageOf(ctx, runID)
	if err != nil {
		return err
	}
	if err := decided(runID, st); err != nil {
		return err
	}
	if err := stage.Remove(stageBase, st.ID); err != nil {
		return err
	}
	if started, err := db.Applying(ctx, runID); err != nil || started != nil {
		// An interrupted apply's writes stay: the next staged run walks.
		if run, err := db.Get(ctx, runID); err == nil && run.Report != nil {
			if key, err := history.WorkspaceKey(run.Report.Workspace); err == nil {
				_ = forgetShape(context.WithoutCancel(ctx), db, key)
			}
		}
	}
	return db.AddStageEvent(context.WithoutCancel(ctx), history.StageEvent{RunID: runID, Event: report.StageDiscarded})
}

// refuseHalfApplied refuses a run on workspace (a history key) while an
// apply on it, an ancestor or a descendant was started and not completed.
func refuseHalfApplied(ctx context.Context, db *history.DB, workspace string) error {
	hs, err := db.HalfAppliedRuns(ctx)
	if err != nil {
		return &gate.SetupError{Msg: err.Error()}
	}
	for _, h := range hs {
		if fspath.Within(workspace, h.Workspace) || fspath.Within(h.Workspace, workspace) {
			return &gate.SetupError{Msg: fmt.Sprintf("workspace %s is half-applied (the apply of run %d was interrupted): run `diffgate apply %d` to resume it, or `diffgate discard %d` to keep it as it is",
				quote.Path(h.Workspace), h.RunID, h.RunID, h.RunID)}
		}
	}
	return nil
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
