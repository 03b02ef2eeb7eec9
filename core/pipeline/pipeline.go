//go:build !js

// Package pipeline is the one "run the gate with history" path that the CLI
// and the desktop app share: it loads the workspace's approved allowlist
// and hash cache from the history, builds the gate's configuration (hash
// reuse, stored before-contents for text diffs), runs the gate and records
// the run, a cancelled one included. The front ends only gather inputs and
// show the outcome.
//
// Staged runs (Options.Stage) run the script against a stage (core/stage):
// the workspace stays untouched, the run is recorded with its stage, and
// Apply or Discard later decide what becomes of the changes; both record
// the decision in the history. Stages older than stage.MaxAge are removed
// at the start of every run through the pipeline, and the history notes
// them as expired.
package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/internal/quote"
)

// StageAuto asks for the stage mechanism the probe picks (the default).
const StageAuto stage.Mechanism = "auto"

// RecordTimeout bounds recording a run once the run itself is over.
const RecordTimeout = 2 * time.Minute

// Runner runs one gated run; gate.Run unless a test or a tool wraps it.
type Runner func(ctx context.Context, cfg gate.Config) (*gate.Result, error)

// Options describe one run through the pipeline.
type Options struct {
	// Config is the run. Its Allow holds the caller's own entries; Prior,
	// when set, is used only when the history has no hash cache for the
	// workspace, as is Cache's.
	Config gate.Config
	// History records the run and feeds it the allowlist, the hash cache
	// and stored contents; nil runs without history, unless HistoryPath
	// names one.
	History *history.DB
	// HistoryPath, with History nil, names the database to record in:
	// Preflight opens it once it has checked where it lies (opening would
	// create it), and Plan.Close closes it. "" (and History nil) runs
	// without history; the default database is still hidden from the
	// contained script.
	HistoryPath string
	// Cache keeps the last after-manifest of each workspace for hash reuse
	// where the history has no hash cache (a run without history, or one
	// whose record failed); nil keeps none.
	Cache *PriorCache
	// FromHistory appends the workspace's latest approved allowlist to
	// Config.Allow; a workspace without one is a setup error.
	FromHistory bool
	// AllowlistVersion is the approved allowlist version Config.Allow is
	// (0: none or edited); FromHistory sets it to the version it loads.
	AllowlistVersion int
	// TextBudget bounds the history's text store for the workspace: copies
	// of its small text files, kept so that a later run can diff a file
	// whose hash it reused. 0 means history.TextBudget() (the environment,
	// else 256 MiB); negative keeps nothing.
	TextBudget int64
	// Runner runs the gate; nil means gate.Run.
	Runner Runner
	// Stage runs the script against a stage of the workspace (core/stage):
	// the workspace stays untouched until Apply. It needs History (Apply
	// and Discard read the record). The mechanism is probed once per run
	// unless StageMechanism names one.
	Stage bool
	// StageMechanism forces the stage's mechanism (stage.Overlay or
	// stage.Copy, from run --stage-mechanism); "" or "auto" means
	// stage.ProbeFor. The report's stage object records it as requested.
	StageMechanism stage.Mechanism
	// StageBase is the directory holding the stages; "" means
	// stage.BaseDir() (the user's cache directory).
	StageBase string
}

// Result is a gated run's outcome and its record.
type Result struct {
	*gate.Result
	// RunID is the run's number in the history; 0 when it was not recorded
	// (RecordErr says why, unless there is no history).
	RunID     int64
	RecordErr error
	// Texts says what the history's text store kept of this run; TextsErr
	// why it kept nothing (it does not change the run's outcome: a later
	// diff may only lack its before-content and say so).
	Texts    history.TextStats
	TextsErr error
	// Probe is what the stage's probe found (staged runs whose mechanism
	// was not forced); Report.Stage says which mechanism was used.
	Probe *stage.ProbeResult
	// Expired lists the runs whose stages this run found older than
	// stage.MaxAge and removed.
	Expired []int64
	// Offline is the team store (its URL) that could not be reached: the
	// run was recorded in the local history, pending diffgate history push.
	Offline string
}

// Run loads what the history holds for the workspace, runs the gate and
// records the run. The error is a *gate.SetupError (or the runner's error)
// when nothing ran; once the gate has a result, a failure to record it is
// Result.RecordErr, and the gate's verdict stands.
//
// The phases, in order: load from the history (the approved allowlist,
// the stage's shape, the hash cache, stored contents), expire old stages,
// make the stage, run the gate, describe the run in its report, record it
// (and keep its texts).
func Run(ctx context.Context, p Plan) (*Result, error) {
	if p.o.Config.Root.IsZero() {
		return nil, setupf("pipeline: a run needs its Plan from Preflight")
	}
	s := newRunState(ctx, p)
	if s.db != nil {
		if err := s.loadHistory(); err != nil {
			return nil, err
		}
	}
	if err := s.expireStages(); err != nil {
		return nil, err
	}
	if err := s.makeStage(); err != nil {
		return nil, err
	}
	if s.cfg.Shape == nil && s.loadCache != nil {
		s.loadCache()
	}
	res, err := s.runGate()
	if err != nil || res == nil || res.Report == nil {
		if s.st != nil {
			_ = s.st.Discard()
		}
		return nil, err
	}
	out := &Result{Result: res, Probe: s.probe, Expired: s.expired}
	defer s.cachePrior(out)
	s.describe(res)
	if s.db != nil {
		s.recordRun(out)
	}
	return out, nil
}

// runState carries one run through Run's phases.
type runState struct {
	ctx  context.Context
	sctx context.Context // ctx without its cancel: a cancelled run's lookups
	o    Options
	// cfg is the gate's configuration, until the gate runs (runGate).
	cfg     gate.Config
	log     zerolog.Logger
	runner  Runner
	db      *history.DB
	key     string // the history's workspace key
	offline string // the team store the run waits for (Plan.offline)

	mu   sync.Mutex
	used []string // text store hits, to mark as recently used

	approved  *report.ApprovedAllowlist
	shape     *stage.Shape
	loadCache func() // reads the history's hash cache; nil once read
	expired   []int64
	st        *stage.Stage
	probe     *stage.ProbeResult
}

// newRunState starts a run of p: its configuration, its runner and the
// prior manifest the in-memory cache holds for the workspace.
func newRunState(ctx context.Context, p Plan) *runState {
	s := &runState{ctx: ctx, sctx: context.WithoutCancel(ctx), o: p.o, cfg: p.o.Config, log: p.o.Config.Log,
		runner: p.o.Runner, db: p.db, key: p.o.Config.Root.Path(), offline: p.offline}
	s.cfg.Allow = append([]string(nil), s.cfg.Allow...)
	if s.runner == nil {
		s.runner = gate.Run
	}
	if s.o.Cache != nil && s.cfg.Prior == nil && !s.cfg.Rehash {
		s.cfg.Prior = s.o.Cache.get(s.key)
	}
	return s
}

// loadHistory loads what the history holds for the workspace: it refuses
// a half-applied stage, appends the approved allowlist, reads the stage's
// shape and the hash cache, sets the text budget and the stored contents.
func (s *runState) loadHistory() error {
	stored, err := s.db.Key(s.key) // a team store's stable id; else key
	if err != nil {
		return setupf("%v", err)
	}
	if err := refuseHalfApplied(s.ctx, s.db, stored); err != nil {
		return err
	}
	if s.o.FromHistory {
		if err := s.loadAllowlist(); err != nil {
			return err
		}
	}
	if s.o.Stage {
		s.shape = stageShape(s.ctx, s.db, s.key, s.log)
	}
	// A cache only saves time: problems reading it cost a full hash.
	// An overlay-staged run of a workspace of known shape reads none
	// (gate.Config.Shape): loaded once the stage turns out a copy.
	s.loadCache = func() {
		if !s.cfg.Rehash {
			if m, err := s.db.HashCache(s.ctx, s.key); err == nil && m != nil {
				s.cfg.Prior = m
			}
		}
	}
	if !s.shape.Delta() {
		s.loadCache()
		s.loadCache = nil
	}
	if s.o.TextBudget == 0 {
		b, err := history.TextBudget()
		if err != nil {
			return &gate.SetupError{Msg: err.Error()}
		}
		s.o.TextBudget = b
	}
	s.cfg.Stored = s.storedContent
	return nil
}

// loadAllowlist appends the workspace's latest approved allowlist to the
// run's; a workspace without one is a setup error.
func (s *runState) loadAllowlist() error {
	al, err := s.db.LatestAllowlist(s.ctx, s.key)
	if err != nil {
		return &gate.SetupError{Msg: err.Error()}
	}
	if al == nil {
		return &gate.SetupError{Msg: fmt.Sprintf("no approved allowlist for %s (approve one with: diffgate allowlist approve)", s.key)}
	}
	s.cfg.Allow = append(s.cfg.Allow, al.Entries...)
	s.o.AllowlistVersion = al.Version
	at := al.CreatedAt.UTC()
	s.approved = &report.ApprovedAllowlist{Version: al.Version, ApprovedAt: &at, Note: al.Note, ApprovedBy: al.ApprovedBy}
	return nil
}

// storedContent is gate.Config.Stored: the before-content of a file whose
// hash was reused (so never read this run) comes from the history: the
// changed files' contents of past runs, else the workspace's text store.
// The lookups outlive a cancel: a cancelled run still gets its diffs.
func (s *runState) storedContent(sha string) ([]byte, bool) {
	if data, err := s.db.Content(s.sctx, sha); err == nil {
		return data, true
	}
	data, err := s.db.Text(s.sctx, s.key, sha)
	if err != nil {
		return nil, false
	}
	s.mu.Lock()
	s.used = append(s.used, sha)
	s.mu.Unlock()
	return data, true
}

// expireStages removes the stages older than stage.MaxAge, once the
// default stage directory is known to be usable for a staged run.
func (s *runState) expireStages() error {
	if s.o.Stage && s.db != nil && s.o.StageBase == "" {
		// Before the expiry, which reads the same directory.
		if err := stageBaseUsable(); err != nil {
			return err
		}
	}
	if s.db != nil {
		s.expired = expire(s.sctx, s.db, s.o.StageBase, s.log)
	}
	return nil
}

// makeStage makes a staged run's stage, by the mechanism asked for or the
// one the probe picks; an overlay stage gets the workspace's shape.
func (s *runState) makeStage() error {
	if !s.o.Stage {
		return nil
	}
	mech := s.o.StageMechanism
	if mech == "" || mech == StageAuto {
		p := stage.ProbeFor(s.ctx, s.o.StageBase, s.key)
		s.probe, mech = &p, p.Mechanism
		s.log.Info().Str("mechanism", string(p.Mechanism)).Str("why", p.Why).Bool("reflink", p.Reflink).
			Dur("elapsed", p.Took).Msg("stage probe")
	}
	st, err := stage.New(s.o.StageBase, s.key, mech)
	if err != nil {
		return &gate.SetupError{Msg: err.Error()}
	}
	s.st, s.cfg.Stage = st, st
	if st.Mechanism == stage.Overlay {
		s.cfg.Shape = s.shape
	}
	return nil
}

// runGate runs the gate. The configuration leaves the state first: the
// gate drops the hash cache it holds after the before-snapshot, and so
// must everything else.
func (s *runState) runGate() (*gate.Result, error) {
	cfg := s.cfg
	s.cfg = gate.Config{}
	return s.runner(s.ctx, cfg)
}

// cachePrior keeps the run's after-manifest in the in-memory cache, only
// while the history does not hold it.
func (s *runState) cachePrior(out *Result) {
	if s.o.Cache != nil && out.After != nil {
		if out.RunID == 0 {
			s.o.Cache.put(s.key, out.After)
		} else {
			s.o.Cache.put(s.key, nil)
		}
	}
}

// describe puts the approved allowlist and the stage into the report.
func (s *runState) describe(res *gate.Result) {
	res.Report.AllowlistApproved = s.approved
	if s.st == nil {
		return
	}
	res.Report.Stage = &report.Stage{Mechanism: string(s.st.Mechanism), Requested: string(cmp.Or(s.o.StageMechanism, StageAuto)),
		State: report.StagePending, ID: s.st.ID}
	if c := res.StageCost; c != nil {
		res.Report.Stage.Cost = &report.StageCost{PrepareMS: millis(c.Prepare), ReadMS: millis(c.Read),
			CopiedFiles: c.Copy.Files, CopiedBytes: c.Copy.Bytes}
	}
	if s.st.Mechanism == stage.Copy && !s.st.AtWorkspace {
		res.Report.Stage.RunAt = s.st.Copy()
	}
}

// recordRun records the run (pending a push when the team store was
// offline), keeps the workspace's shape, discards a stage whose record
// failed and keeps the run's texts.
func (s *runState) recordRun(out *Result) {
	res := out.Result
	budgetNotes(s.sctx, s.db, s.key, res)
	out.RunID, out.RecordErr = record(s.ctx, s.db, res, s.o.AllowlistVersion)
	if s.offline != "" && out.RecordErr == nil {
		// Recorded here for want of the team store: it waits for a push.
		out.Offline = s.offline
		out.RecordErr = s.db.MarkPending(s.sctx, out.RunID, s.offline)
	}
	keepShape(s.sctx, s.db, s.key, out.RunID, res, s.log)
	if out.RecordErr != nil && s.st != nil {
		// Nothing can apply a stage without its record.
		_ = s.st.Discard()
		res.Report.Stage.State = report.StageDiscarded
	}
	if s.o.TextBudget > 0 && res.Kept != nil {
		s.keepTexts(out)
	}
}

// keepTexts keeps the run's small text files in the workspace's text
// store, within its budget, marking the hits the run used.
func (s *runState) keepTexts(out *Result) {
	s.mu.Lock()
	u := s.used
	s.mu.Unlock()
	kctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), RecordTimeout)
	out.Texts, out.TextsErr = s.db.KeepTexts(kctx, s.key, out.Kept, out.OverBudget, u, s.o.TextBudget)
	cancel()
	if out.TextsErr != nil {
		s.log.Warn().Err(out.TextsErr).Msg("text store")
	}
}

// budgetNotes turns a "not kept" note into "keep-budget" where the
// workspace's text store lacks the before-content for want of budget.
func budgetNotes(ctx context.Context, db *history.DB, key string, res *gate.Result) {
	for i := range res.Report.Changes {
		c := &res.Report.Changes[i]
		if c.DiffNote == diff.NoteNotKept && c.Before != nil && db.TextMissed(ctx, key, c.Before.SHA256) {
			c.DiffNote = diff.NoteKeepBudget
		}
	}
}

// record stores the run, its contents and the new hash cache. A cancelled
// run (SIGINT, SIGTERM, the app's Cancel) is recorded too: the record does
// not inherit the run's cancellation, only a bound of its own.
func record(ctx context.Context, db *history.DB, res *gate.Result, version int) (int64, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RecordTimeout)
	defer cancel()
	run := &history.Run{Report: res.Report, ScriptText: res.ScriptText, AllowlistVersion: version}
	return db.Record(ctx, run, res.Contents, res.After)
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// stageBaseUsable makes the default stage directory (stage.BaseDir), or says
// in one line where it is and how to move it: an unwritable HOME otherwise
// shows as a bare "mkdir /nonexistent: permission denied".
func stageBaseUsable() error {
	base, err := stage.BaseDir()
	if err == nil {
		err = os.MkdirAll(base, 0o700)
	}
	if err == nil {
		return nil
	}
	at := ""
	if base != "" {
		at = " " + quote.Path(base)
	}
	return &gate.SetupError{Msg: fmt.Sprintf("stage: cannot make the stage directory%s (~/.cache/diffgate/stages, or $XDG_CACHE_HOME/diffgate/stages): %s; set XDG_CACHE_HOME to a writable directory",
		at, strings.TrimPrefix(err.Error(), "stage: "))}
}
