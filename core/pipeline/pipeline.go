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
func Run(ctx context.Context, p Plan) (*Result, error) {
	if p.o.Config.Root.IsZero() {
		return nil, setupf("pipeline: a run needs its Plan from Preflight")
	}
	o := p.o
	cfg := o.Config
	cfg.Allow = append([]string(nil), cfg.Allow...)
	runner := o.Runner
	if runner == nil {
		runner = gate.Run
	}
	db := p.db
	key := cfg.Root.Path() // the history's workspace key
	if o.Cache != nil && cfg.Prior == nil && !cfg.Rehash {
		cfg.Prior = o.Cache.get(key)
	}
	sctx := context.WithoutCancel(ctx)
	var mu sync.Mutex
	var used []string // text store hits, to mark as recently used
	var approved *report.ApprovedAllowlist
	var shape *stage.Shape
	var loadCache func()
	if db != nil {
		stored, err := db.Key(key) // a team store's stable id; else key
		if err != nil {
			return nil, setupf("%v", err)
		}
		if err := refuseHalfApplied(ctx, db, stored); err != nil {
			return nil, err
		}
		if o.FromHistory {
			al, err := db.LatestAllowlist(ctx, key)
			if err != nil {
				return nil, &gate.SetupError{Msg: err.Error()}
			}
			if al == nil {
				return nil, &gate.SetupError{Msg: fmt.Sprintf("no approved allowlist for %s (approve one with: diffgate allowlist approve)", key)}
			}
			cfg.Allow = append(cfg.Allow, al.Entries...)
			o.AllowlistVersion = al.Version
			at := al.CreatedAt.UTC()
			approved = &report.ApprovedAllowlist{Version: al.Version, ApprovedAt: &at, Note: al.Note, ApprovedBy: al.ApprovedBy}
		}
		if o.Stage {
			shape = stageShape(ctx, db, key, cfg.Log)
		}
		// A cache only saves time: problems reading it cost a full hash.
		// An overlay-staged run of a workspace of known shape reads none
		// (gate.Config.Shape): loaded once the stage turns out a copy.
		loadCache = func() {
			if !cfg.Rehash {
				if m, err := db.HashCache(ctx, key); err == nil && m != nil {
					cfg.Prior = m
				}
			}
		}
		if !shape.Delta() {
			loadCache()
			loadCache = nil
		}
		if o.TextBudget == 0 {
			b, err := history.TextBudget()
			if err != nil {
				return nil, &gate.SetupError{Msg: err.Error()}
			}
			o.TextBudget = b
		}
		// Before-contents of files whose hash was reused (so never read
		// this run) come from the history: the changed files' contents of
		// past runs, else the workspace's text store. The lookups outlive a
		// cancel: a cancelled run still gets its diffs.
		cfg.Stored = func(sha string) ([]byte, bool) {
			if data, err := db.Content(sctx, sha); err == nil {
				return data, true
			}
			data, err := db.Text(sctx, key, sha)
			if err != nil {
				return nil, false
			}
			mu.Lock()
			used = append(used, sha)
			mu.Unlock()
			return data, true
		}
	}
	if o.Stage && db != nil && o.StageBase == "" {
		// Before the expiry, which reads the same directory.
		if err := stageBaseUsable(); err != nil {
			return nil, err
		}
	}
	var expired []int64
	if db != nil {
		expired = expire(sctx, db, o.StageBase, cfg.Log)
	}
	var st *stage.Stage
	var probe *stage.ProbeResult
	if o.Stage {
		mech := o.StageMechanism
		if mech == "" || mech == StageAuto {
			p := stage.ProbeFor(ctx, o.StageBase, key)
			probe, mech = &p, p.Mechanism
			cfg.Log.Info().Str("mechanism", string(p.Mechanism)).Str("why", p.Why).Bool("reflink", p.Reflink).
				Dur("elapsed", p.Took).Msg("stage probe")
		}
		s, err := stage.New(o.StageBase, key, mech)
		if err != nil {
			return nil, &gate.SetupError{Msg: err.Error()}
		}
		st, cfg.Stage = s, s
		if st.Mechanism == stage.Overlay {
			cfg.Shape = shape
		}
	}
	if cfg.Shape == nil && loadCache != nil {
		loadCache()
	}
	// cfg is not used once the gate runs: the gate drops the hash cache it
	// holds after the before-snapshot, and so must everything else.
	log := cfg.Log
	res, err := runner(ctx, cfg)
	if err != nil || res == nil || res.Report == nil {
		if st != nil {
			_ = st.Discard()
		}
		return nil, err
	}
	out := &Result{Result: res, Probe: probe, Expired: expired}
	defer func() {
		if o.Cache != nil && res.After != nil {
			// Kept only while the history does not hold it.
			if out.RunID == 0 {
				o.Cache.put(key, res.After)
			} else {
				o.Cache.put(key, nil)
			}
		}
	}()
	res.Report.AllowlistApproved = approved
	if st != nil {
		res.Report.Stage = &report.Stage{Mechanism: string(st.Mechanism), Requested: string(cmp.Or(o.StageMechanism, StageAuto)),
			State: report.StagePending, ID: st.ID}
		if c := res.StageCost; c != nil {
			res.Report.Stage.Cost = &report.StageCost{PrepareMS: millis(c.Prepare), ReadMS: millis(c.Read),
				CopiedFiles: c.Copy.Files, CopiedBytes: c.Copy.Bytes}
		}
		if st.Mechanism == stage.Copy && !st.AtWorkspace {
			res.Report.Stage.RunAt = st.Copy()
		}
	}
	if db != nil {
		budgetNotes(sctx, db, key, res)
		out.RunID, out.RecordErr = record(ctx, db, res, o.AllowlistVersion)
		if p.offline != "" && out.RecordErr == nil {
			// Recorded here for want of the team store: it waits for a push.
			out.Offline = p.offline
			out.RecordErr = db.MarkPending(sctx, out.RunID, p.offline)
		}
		keepShape(sctx, db, key, out.RunID, res, log)
		if out.RecordErr != nil && st != nil {
			// Nothing can apply a stage without its record.
			_ = st.Discard()
			res.Report.Stage.State = report.StageDiscarded
		}
		if o.TextBudget > 0 && res.Kept != nil {
			mu.Lock()
			u := used
			mu.Unlock()
			kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RecordTimeout)
			out.Texts, out.TextsErr = db.KeepTexts(kctx, key, res.Kept, res.OverBudget, u, o.TextBudget)
			cancel()
			if out.TextsErr != nil {
				log.Warn().Err(out.TextsErr).Msg("text store")
			}
		}
	}
	return out, nil
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
