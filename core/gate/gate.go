package gate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/core/watch"
	"github.com/diffgate/diffgate/core/wslock"
	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/oneline"
	"github.com/diffgate/diffgate/internal/quote"
)

// SetupError is a problem with the run's inputs (missing workspace, missing
// script, bad allowlist entry): nothing ran. Its message is one line.
type SetupError struct {
	Msg string
	// Err is the cause, when one is kept (a *wslock.HeldError).
	Err error
}

func (e *SetupError) Error() string { return e.Msg }

func (e *SetupError) Unwrap() error { return e.Err }

func setupf(format string, a ...any) error { return &SetupError{Msg: fmt.Sprintf(format, a...)} }

// maxScriptText bounds the script text kept in the result.
const maxScriptText = 1 << 20

// Run performs one gated run. The returned error is a *SetupError when the
// inputs are unusable; once the script has started, every outcome (failure,
// timeout, cancellation) is a Result whose report says so.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	g := &run{cfg: cfg, start: time.Now(), kept: newKeeper(cfg.KeepText, cfg.KeepBudget)}
	g.phase(Validate, snapshot.Progress{})
	if err := g.validate(); err != nil {
		return nil, err
	}
	// One run at a time per workspace, or each reports the other's writes.
	lock, err := wslock.Acquire(ctx, g.ws, cfg.LockWait, cfg.Log)
	if err != nil {
		return nil, &SetupError{Msg: err.Error(), Err: err}
	}
	defer lock.Release()
	return g.run(ctx)
}

// run is the state of one gated run.
type run struct {
	cfg        Config
	start      time.Time
	ws, script string
	// root is the workspace resolved once (Config.Root, else validate).
	root fspath.Dir
	pol  *policy.Policy
	kept *keeper
	res  Result
	// afterRoot is where after-contents are read: the workspace, or the
	// stage's upper layer or copy.
	afterRoot string
	// delta says the run takes no before-snapshot (Config.Shape); gits
	// lists the git directories below the directory the script runs in.
	delta bool
	gits  []string
	// unknown lists what the run reports unreadable beyond what the
	// snapshots found (stage.CheckDelta).
	unknown []diff.Unknown
	// watch lists the paths outside the workspace to watch.
	watch []watch.Path
	// grants and dropped are what containment granted and the variables
	// it dropped (report.Containment).
	grants  []report.Grant
	dropped []string
}

func (g *run) phase(p Phase, sp snapshot.Progress) {
	if g.cfg.Progress != nil {
		g.cfg.Progress(Progress{Phase: p, Entries: sp.Entries, Bytes: sp.Bytes, Elapsed: time.Since(g.start)})
	}
}

// ResolveWorkspace resolves a run's workspace once (absolute, symlinks
// resolved, a directory); the error is a *SetupError naming it.
func ResolveWorkspace(ws string) (fspath.Dir, error) {
	if ws == "" {
		return fspath.Dir{}, setupf("no workspace given")
	}
	r, err := fspath.ResolveDir(ws)
	if err != nil {
		return fspath.Dir{}, setupf("workspace %s: %s", quote.Path(ws), oneline.Reason(err))
	}
	return r, nil
}

func (g *run) validate() error {
	cfg := &g.cfg
	if cfg.Workspace == "" {
		return setupf("no workspace given")
	}
	root := cfg.Root
	if root.IsZero() || root.Given() != cfg.Workspace {
		r, err := ResolveWorkspace(cfg.Workspace)
		if err != nil {
			return err
		}
		root = r
	}
	g.root, g.ws = root, root.Path()
	ws := g.ws
	if cfg.Script == "" {
		return setupf("no script given")
	}
	command, err := lookCommand(cfg.Script)
	if err != nil {
		return err
	}
	g.script = command
	sc, err := scriptOf(ws, command, cfg.Args)
	if err != nil {
		return err
	}
	g.res.ScriptText = sc.text
	pol, err := policy.Parse(cfg.Allow)
	if err != nil {
		return setupf("%v", err)
	}
	g.pol = pol
	g.res.Report = &report.Report{
		Schema:    report.Schema,
		Workspace: ws,
		Script:    report.Script{Path: sc.path, SHA256: sc.sha256, Args: append([]string{}, cfg.Args...), Inline: sc.inline},
		Allowlist: append([]string{}, cfg.Allow...),
		StartedAt: g.start.UTC(),
	}
	if command != sc.path || sc.inline {
		g.res.Report.Script.Command = command
	}
	if cfg.Timeout > 0 {
		g.res.Report.Process.Timeout = cfg.Timeout.String()
	}
	return g.watchPaths()
}

// watchPaths makes the list of paths to watch outside the workspace: the
// default set (unless NoDefaultWatch) and each Watch path, which must be
// absolute once resolved and, when it exists, stat-able.
func (g *run) watchPaths() error {
	env := g.cfg.WatchEnv
	if env == nil {
		e := watch.CurrentEnv()
		env = &e
	}
	if !g.cfg.NoDefaultWatch {
		g.watch = watch.Defaults(*env)
	}
	for _, p := range g.cfg.Watch {
		q := p
		if rest, ok := strings.CutPrefix(q, "~/"); (ok || q == "~") && env.Home != "" {
			q = filepath.Join(env.Home, rest)
		}
		abs, err := filepath.Abs(q)
		if err != nil || p == "" {
			return setupf("--watch %s: not a path", quote.Path(p))
		}
		if why := watch.Unstatable(abs); why != "" {
			return setupf("--watch %s: not watchable: %s (the gate cannot stat it)", quote.Path(p), why)
		}
		g.watch = append(g.watch, watch.Path{Path: abs})
	}
	return nil
}

// watchBefore records the watched paths just before the script runs,
// leaving out the workspace, the stage and the private TMPDIR.
func (g *run) watchBefore(spec *proc.Spec) *watch.Set {
	if len(g.watch) == 0 {
		return nil
	}
	opt := watch.Options{Workspace: g.ws}
	if st := g.cfg.Stage; st != nil {
		opt.Skip = append(opt.Skip, st.Dir)
	}
	if spec.Dir != g.ws {
		opt.Skip = append(opt.Skip, spec.Dir)
	}
	for _, kv := range spec.Env {
		if tmp, ok := strings.CutPrefix(kv, "TMPDIR="); ok && g.cfg.Contain.Enabled() && filepath.IsAbs(tmp) {
			opt.Skip = append(opt.Skip, tmp) // the private TMPDIR, removed after the run
		}
	}
	t := time.Now()
	set := watch.Take(g.watch, opt)
	g.cfg.Log.Debug().Int("paths", len(g.watch)).Dur("elapsed", time.Since(t)).Msg("watch: before the run")
	return set
}

// watchAfter records the watched paths again and puts the changes found
// in the report.
func (g *run) watchAfter(before *watch.Set) {
	if before == nil {
		return
	}
	t := time.Now()
	sum, changes := watch.Compare(before, before.Again())
	w, outside := WatchReport(sum, changes, g.ws)
	g.res.Report.Watch, g.res.Report.Outside = w, outside
	g.cfg.Log.Debug().Int("entries", w.Entries).Int("changes", len(outside)).Dur("elapsed", time.Since(t)).Msg("watch: after the run")
}

// run carries out the run's phases in order: the before-snapshot, the
// script's setup (its stage, the git directories), its contained
// execution, the after-state (the stage read, or the after-snapshot) and
// the verdict (finish).
func (g *run) run(ctx context.Context) (*Result, error) {
	before, err := g.takeBefore(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return g.finish(nil, nil, &proc.Result{Cancelled: true, ExitCode: -1})
		}
		return nil, setupf("%v", err)
	}
	spec, err := g.prepare(ctx, before)
	if err != nil {
		return nil, err
	}
	pr, err := g.execute(ctx, &spec, before)
	if err != nil {
		return nil, err
	}
	actx, cancel := g.afterContext(ctx)
	defer cancel()
	if g.cfg.Stage != nil {
		// Every process of the script's tree is gone (proc.Run returns
		// only then): nothing writes into the stage any more.
		g.phase(After, snapshot.Progress{})
		return g.finishStaged(actx, before, pr)
	}
	after, err := g.takeAfter(actx, before)
	if err != nil {
		return nil, err
	}
	return g.finish(before, after, pr)
}

// takeBefore takes the before-snapshot, with the hash cache (Config.Prior)
// unless Rehash or it is another tree's; none (nil) for an overlay stage
// of a workspace whose shape is known (g.delta). The error is the
// snapshot's.
func (g *run) takeBefore(ctx context.Context) (*snapshot.Manifest, error) {
	cfg, log := &g.cfg, &g.cfg.Log
	prior := cfg.Prior
	// The prior (a hash cache of a whole tree) is only needed by the
	// before-snapshot: drop the run's reference so its memory can go.
	cfg.Prior = nil
	if cfg.Rehash || (prior != nil && prior.Root != g.ws) {
		prior = nil
	}
	// An overlay stage of a workspace whose shape is known: the workspace,
	// which the script cannot write, is the before-state (see Config.Shape).
	g.delta = cfg.Stage != nil && cfg.Stage.Mechanism == stage.Overlay && cfg.Shape.Delta()
	if g.delta {
		log.Info().Msg("staged by overlay over a workspace of known shape: no before-snapshot")
		return nil, nil
	}
	before, err := snapshot.TakeDir(ctx, g.root, snapshot.Options{
		Prior:       prior,
		Granularity: cfg.Granularity,
		Progress:    func(p snapshot.Progress) { g.phase(Before, p) },
		KeepMax:     g.kept.max,
		Keep:        g.kept.keep,
	})
	if err != nil {
		return nil, err
	}
	// The hash cache, or without one the walk's per-worker blocks, are
	// garbage now.
	prior = nil
	release(len(before.Entries))
	log.Info().Int("entries", len(before.Entries)).Dur("elapsed", time.Since(g.start)).Msg("before-snapshot done")
	return before, nil
}

// prepare makes the script's spec: in the workspace, or staged
// (prepareStage); and lists the git directories below where it runs (for
// containment's read-only paths) and, staged, the workspace's shape.
func (g *run) prepare(ctx context.Context, before *snapshot.Manifest) (proc.Spec, error) {
	cfg := &g.cfg
	spec := proc.Spec{
		Dir: g.ws, Path: g.script, Args: cfg.Args, Timeout: cfg.Timeout,
		KeepBytes: orDefault(cfg.OutputKeep, 64<<10), Output: cfg.Output,
	}
	g.afterRoot = g.ws
	if st := cfg.Stage; st != nil {
		if err := g.prepareStage(ctx, st, &spec, before); err != nil {
			return spec, err
		}
	}
	if g.delta {
		g.gits = g.shapeGitDirs(spec.Dir)
	} else if cfg.Contain.Enabled() || cfg.Stage != nil {
		g.gits = gitDirs(spec.Dir, before)
		if cfg.Stage != nil {
			// The workspace as the script cannot change it: the shape a
			// later overlay-staged run can trust (Config.Shape).
			g.res.Shape = stage.ShapeOf(spec.Dir, before, g.gits)
		}
	}
	return spec, nil
}

// execute runs the script, contained, with the recording proxy and the
// watched paths recorded around it, and puts how it was contained and
// what it was refused in the report.
func (g *run) execute(ctx context.Context, spec *proc.Spec, before *snapshot.Manifest) (*proc.Result, error) {
	cleanup, err := g.contain(spec, before)
	if err != nil {
		return nil, err
	}
	stopProxy, err := g.startProxy(spec)
	if err != nil {
		cleanup()
		return nil, err
	}
	watched := g.watchBefore(spec)
	g.phase(Execute, snapshot.Progress{})
	pr, err := proc.Run(ctx, *spec)
	cleanup()
	if err != nil {
		stopProxy()
		return nil, setupf("%v", err)
	}
	// The script's whole tree is gone (proc.Run returns only then).
	g.watchAfter(watched)
	g.res.Report.Containment = containmentReport(g.cfg.Contain, pr.Contained, pr.BlockedDropped, pr.BlockedDroppedKinds)
	g.res.Report.Containment.Grants, g.res.Report.Containment.DroppedEnv = g.grants, g.dropped
	g.res.Report.Blocked = blockedReport(pr.Blocked)
	stopProxy()
	g.leftovers(pr)
	return pr, nil
}

// leftovers logs the supervisor's diagnostics and the processes of the
// script's tree that were killed after it.
func (g *run) leftovers(pr *proc.Result) {
	log := &g.cfg.Log
	if pr.Diagnostics != "" {
		// The supervisor's own output: not the script's, never in the report.
		log.Warn().Str("output", pr.Diagnostics).Msg("supervisor diagnostics")
	}
	g.phase(Leftovers, snapshot.Progress{})
	for _, l := range pr.Leftovers {
		log.Info().Int("pid", l.PID).Str("cmd", l.Cmd).Msg("leftover process killed")
	}
}

// afterContext is the context the after-state is recorded in. The script
// ran: what it did is recorded even if the run was cancelled. A cancel or
// the timeout during the after-snapshot cuts it short: what it could not
// record is unreadable, and fails the gate.
func (g *run) afterContext(ctx context.Context) (context.Context, context.CancelFunc) {
	actx := ctx
	if ctx.Err() != nil {
		actx = context.WithoutCancel(ctx)
	}
	if g.cfg.Timeout > 0 {
		return context.WithTimeout(actx, g.cfg.Timeout)
	}
	return actx, func() {}
}

// takeAfter takes the after-snapshot of a direct run, with the
// before-snapshot as its hash cache unless Rehash. The root is taken as
// it is (a root turned symlink is never followed); a workspace the script
// removed is an empty one.
func (g *run) takeAfter(ctx context.Context, before *snapshot.Manifest) (*snapshot.Manifest, error) {
	aprior := before
	if g.cfg.Rehash {
		aprior = nil
	}
	after, err := snapshot.TakeDir(ctx, g.root, snapshot.Options{
		Prior:       aprior,
		Granularity: g.cfg.Granularity,
		Progress:    func(p snapshot.Progress) { g.phase(After, p) },
		KeepRoot:    true,
		Partial:     true,
	})
	if err != nil {
		if _, serr := os.Lstat(g.ws); !errors.Is(serr, os.ErrNotExist) {
			return nil, setupf("%v", err)
		}
		// The script removed the workspace itself: everything is gone.
		after = &snapshot.Manifest{Root: g.ws, CreatedAt: time.Now()}
	}
	return after, nil
}

// finish diffs, applies the policy and builds the verdict.
func (g *run) finish(before, after *snapshot.Manifest, pr *proc.Result) (*Result, error) {
	rep := g.res.Report
	g.res.After = after
	if before != nil && after != nil {
		g.phase(Compare, snapshot.Progress{})
		// Two passes over both manifests, each on a core of its own.
		var unreadable []diff.Unknown
		done := make(chan struct{})
		go func() {
			defer close(done)
			unreadable = diff.Unreadable(before, after)
		}()
		rep.Changes = diff.Compare(before, after, diff.Options{Root: g.ws})
		<-done
		rep.Unreadable = append(unreadable, g.unknown...)
		n := len(before.Entries)
		before = nil
		release(n)
	}
	g.phase(Policy, snapshot.Progress{})
	g.pol.Apply(rep.Changes)
	// After the policy: the diffs' budgets go to violations first.
	g.addTextDiffs(rep.Changes)
	textdiff.MarkRenames(rep.Changes, g.renameContent)
	p := &rep.Process
	p.ExitCode, p.Signal, p.TimedOut, p.Cancelled = pr.ExitCode, pr.Signal, pr.TimedOut, pr.Cancelled
	p.Supervisor = pr.SupervisorLost
	for _, l := range pr.Leftovers {
		p.Leftovers = append(p.Leftovers, report.Leftover{PID: l.PID, Cmd: l.Cmd})
	}
	p.StdoutHead, p.StdoutTail = splitCapture(pr.Stdout)
	p.StderrHead, p.StderrTail = splitCapture(pr.Stderr)
	g.phase(Verdict, snapshot.Progress{})
	rep.Evaluate()
	rep.FinishedAt = time.Now().UTC()
	g.res.Contents = g.kept.get
	g.res.Kept = g.kept.each
	g.res.OverBudget = g.kept.overBudget
	g.cfg.Log.Info().Str("verdict", rep.Verdict).Strs("reasons", rep.Reasons).Int("changes", len(rep.Changes)).Msg("gate done")
	return &g.res, nil
}

// prepareStage points the run at the stage: an overlay over the workspace,
// or a copy of it (filled now, after the before-snapshot; also for an
// overlay stage of a workspace the overlay cannot stage faithfully,
// stage.OverlayUnfit), with a script
// that lies in the workspace taken from the copy.
func (g *run) prepareStage(ctx context.Context, st *stage.Stage, spec *proc.Spec, before *snapshot.Manifest) error {
	if st.Workspace != g.ws {
		return setupf("stage %s is for %s, not %s", st.ID, quote.Path(st.Workspace), quote.Path(g.ws))
	}
	if st.Mechanism == stage.Overlay {
		// What an overlay would read differently from a direct run.
		if why := stage.OverlayUnfit(before); why != "" {
			if err := st.ToCopy(); err != nil {
				return setupf("%v", err)
			}
			g.cfg.Log.Info().Str("why", why).Msg("stage: the overlay cannot stage this workspace faithfully; copying it")
		}
	}
	g.afterRoot = st.Root()
	switch st.Mechanism {
	case stage.Overlay:
		spec.Overlay = &proc.Overlay{Lower: g.ws, Upper: st.Upper(), Work: st.Work(), UserXattr: st.UserXattr}
	case stage.Copy:
		t := time.Now()
		cs, err := st.Populate(ctx)
		if err != nil {
			return setupf("%v", err)
		}
		g.cfg.Log.Info().Int("files", cs.Files).Int("reflinked", cs.Reflinked).Int64("bytes", cs.Bytes).
			Dur("elapsed", time.Since(t)).Msg("workspace copied into the stage")
		// At the workspace's own path where a mount namespace can bind the
		// copy there; else at the copy's (the report's stage says so).
		if err := st.ProbeBind(ctx); err != nil {
			g.cfg.Log.Info().Str("why", oneline.Reason(err)).Msg("stage: the copy cannot be bound at the workspace's path; the script runs at the copy's")
		} else {
			st.AtWorkspace = true
			spec.Overlay = &proc.Overlay{Lower: g.ws, Upper: st.Copy(), Copy: true}
		}
		g.res.StageCost = &StageCost{Prepare: time.Since(t), Copy: cs}
		spec.Dir = st.RunDir()
		if rel, err := filepath.Rel(g.ws, spec.Path); err == nil && spec.Dir != g.ws && rel != ".." && !strings.HasPrefix(rel, "../") {
			spec.Path = filepath.Join(spec.Dir, rel)
		}
	default:
		return setupf("stage %s: unknown mechanism %q", st.ID, st.Mechanism)
	}
	return nil
}

// finishStaged reads the script's changes from the stage and lays them over
// the before-snapshot. A stage that cannot be read leaves the whole
// workspace unknown, which fails the gate.
func (g *run) finishStaged(ctx context.Context, before *snapshot.Manifest, pr *proc.Result) (*Result, error) {
	if g.delta {
		return g.finishDelta(ctx, pr)
	}
	t := time.Now()
	d, err := g.cfg.Stage.Read(ctx)
	var after *snapshot.Manifest
	if err != nil {
		self := *before.Self
		self.Err = "cannot read the stage: " + err.Error()
		after = &snapshot.Manifest{Root: g.ws, CreatedAt: time.Now(), Self: &self}
	} else {
		after = stage.Merge(before, d)
		g.cfg.Log.Info().Int("after_entries", len(d.After.Entries)).Dur("elapsed", time.Since(t)).Msg("stage read")
	}
	if g.res.StageCost == nil {
		g.res.StageCost = &StageCost{}
	}
	g.res.StageCost.Read = time.Since(t)
	res, err := g.finish(before, after, pr)
	if res != nil {
		res.After = before // the workspace, which the script left as it was
	}
	return res, err
}

// largeTree is the number of entries from which a manifest the run no
// longer needs is worth an immediate collection (the 50,000-file tree of
// the timing benchmarks stays below it).
const largeTree = 100_000

// release returns a dropped manifest's memory (the hash cache, the before
// manifest, a walk's scratch blocks) to the system right away when it had
// n >= largeTree entries.
// Left to the pacer, a collection only comes once the heap has doubled
// again, and even collected, the freed blocks rarely fit the next phase's
// (the after-snapshot's entries are one block a little larger than the
// before-snapshot's): on a tree of a million entries that is a few hundred
// MiB more at the peak. On small trees it does nothing (the collection
// would cost more time than it saves memory). With the walks' pacer off
// (gcpause) these are a large tree's only collections. It runs on the
// gate's own goroutine, where the manifest was dropped: a collection on
// another goroutine, started while this one was preempted asynchronously,
// scans its frame conservatively and kept the hash cache of a million
// entries alive through the after-snapshot (711 instead of 597 MiB at the
// peak).
func release(n int) {
	if n >= largeTree {
		debug.FreeOSMemory()
	}
}

// splitCapture turns a bounded capture into report strings: the whole output
// as the tail when nothing was dropped, else head and tail.
func splitCapture(c proc.Capture) (head, tail string) {
	if !c.Truncated() {
		return "", strings.ToValidUTF8(string(c.Head)+string(c.Tail), "\uFFFD")
	}
	return strings.ToValidUTF8(string(c.Head), "\uFFFD"), strings.ToValidUTF8(string(c.Tail), "\uFFFD")
}

// Bounds of the text diffs a run computes: all its text diffs together
// (DiffBudget's default), and the large files (over KeepText) read to diff
// them.
const (
	defaultDiffBudget = 64 << 20
	largeDiffBudget   = 256 << 20
)

// addTextDiffs fills TextDiff for text files in the order reports show
// them (report.RankOrder: violations first, then the allowed changes, each
// part edits of existing files before removals and added files), so that
// the budgets (the keep budget for after-contents, the run's diff budget,
// the bytes of large files read) go to what a reviewer reads first. A
// content change left without a diff gets a DiffNote saying why.
//
// Before-contents come from the copies kept during the before-snapshot or
// stored in the history, and, in a staged run, from the workspace itself,
// which the script left as it was; after-contents are read back from the
// workspace or the stage. A file over KeepText (too large to keep a copy
// of) is diffed when both its contents can be read (up to
// textdiff.MaxFullInput: in a staged run), its first textdiff.ReportHunks
// hunks kept.
func (g *run) addTextDiffs(cs []diff.Change) {
	order := report.RankOrder(cs)
	budget := orDefault64(g.cfg.DiffBudget, defaultDiffBudget)
	large := int64(largeDiffBudget)
	for _, i := range order {
		c := &cs[i]
		b, a := c.Before, c.After
		if (b != nil && b.Type != snapshot.File) || (a != nil && a.Type != snapshot.File) {
			continue
		}
		if b != nil && a != nil && !c.Has(diff.Content) {
			continue
		}
		big := (b != nil && b.Size > g.kept.max) || (a != nil && a.Size > g.kept.max)
		tooLarge := (b != nil && b.Size > textdiff.MaxFullInput) || (a != nil && a.Size > textdiff.MaxFullInput)
		if big && !tooLarge {
			var n int64
			if b != nil {
				n += b.Size
			}
			if a != nil {
				n += a.Size
			}
			if n > large {
				tooLarge = true
			} else {
				large -= n
			}
		}
		if tooLarge {
			c.DiffNote = diff.NoteTooLarge
			continue
		}
		// A small file's after-content first (binary: no diff whatever the
		// before), a large one's only once its before-content is there.
		var cur []byte
		if a != nil && !big {
			if cur, c.DiffNote = g.afterContent(c, g.kept.max); c.DiffNote != "" {
				continue
			}
			g.kept.keep(a, cur)
		}
		old, oldOK := g.beforeContent(c, big)
		if b != nil && !oldOK {
			c.DiffNote = g.kept.why(b.SHA256)
			if big {
				c.DiffNote = diff.NoteTooLarge // never kept: too large
			}
			continue
		}
		if a != nil && big {
			if cur, c.DiffNote = g.afterContent(c, textdiff.MaxFullInput); c.DiffNote != "" {
				continue
			}
		}
		var d string
		if big {
			var err error
			if d, _, err = textdiff.Full(context.Background(), old, cur, c.Path, textdiff.ReportHunks, textdiff.MaxOutput); err != nil {
				c.DiffNote = diff.NoteBinary
				if !errors.Is(err, textdiff.ErrNotText) {
					c.DiffNote = diff.NoteTooLarge
				}
				continue
			}
		} else if td, ok := textdiff.Lines(old, cur, c.Path); ok {
			d = td
		} else {
			c.DiffNote = diff.NoteBinary
			continue
		}
		if int64(len(d)) > budget {
			c.DiffNote = diff.NoteBudget
			continue
		}
		budget -= int64(len(d))
		c.TextDiff = d
	}
}

// afterContent reads c's after-content (at most max bytes) back from the
// workspace or the stage, or says why it has none: not the content the
// after-snapshot hashed (it changed again), or binary.
func (g *run) afterContent(c *diff.Change, max int64) ([]byte, string) {
	data, err := snapshot.ReadContent(g.afterRoot, c.Path, max)
	if err != nil || sha(data) != c.After.SHA256 {
		return nil, diff.NoteNotKept
	}
	if !looksText(data) {
		return nil, diff.NoteBinary
	}
	return data, ""
}

// renameContent returns the content of a removed file (its before) or an
// added one (its after) for rename detection: small files only.
func (g *run) renameContent(c *diff.Change) ([]byte, bool) {
	switch c.Kind {
	case diff.Removed:
		if c.Before.Size <= g.kept.max {
			return g.beforeContent(c, false)
		}
	case diff.Added:
		if data, ok := g.kept.get(c.After.SHA256); ok {
			return data, true
		}
		if c.After.Size <= g.kept.max {
			data, note := g.afterContent(c, g.kept.max)
			return data, note == ""
		}
	}
	return nil, false
}

// beforeContent returns c's before-content: a kept or stored copy, or, in a
// staged run, the workspace's file (checked against its hash); big says
// the file is too large for a copy to have been kept.
func (g *run) beforeContent(c *diff.Change, big bool) ([]byte, bool) {
	b := c.Before
	if b == nil {
		return nil, false
	}
	if !big {
		if old, ok := g.kept.get(b.SHA256); ok {
			return old, true
		}
		if g.cfg.Stored != nil {
			if old, ok := g.cfg.Stored(b.SHA256); ok {
				g.kept.keep(b, old)
				return old, true
			}
		}
	}
	if g.cfg.Stage == nil {
		return nil, false
	}
	max := g.kept.max
	if big {
		max = textdiff.MaxFullInput
	}
	data, err := snapshot.ReadContent(g.ws, c.Path, max)
	if err != nil || sha(data) != b.SHA256 {
		return nil, false
	}
	if !big {
		g.kept.keep(b, data)
	}
	return data, true
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// keeper is a bounded, content-addressed, in-memory store of small text
// contents. Its keep method may be called from several goroutines.
type keeper struct {
	max, budget int64
	mu          sync.Mutex
	used        int64
	data        map[string][]byte
	// refused holds why content offered was not kept (diff.NoteBinary or
	// diff.NoteKeepBudget), by SHA-256.
	refused map[string]string
	// otherUsed is what contents not sourceLike take of the budget: at
	// most a quarter, so that a vendor tree walked first cannot spend what
	// the source files need.
	otherUsed int64
}

// sourceMax is the largest file that counts as source-like.
const sourceMax = 64 << 10

// sourceLike reports whether e is what a reviewer reads first, whose
// before-content a direct run keeps first: a small file outside vendor
// and cache trees (node_modules, .venv, ...).
func sourceLike(e *snapshot.Entry) bool {
	if e.Size > sourceMax {
		return false
	}
	_, vendor := policy.VendorDir(path.Dir(e.Path))
	return !vendor
}

func newKeeper(max, budget int64) *keeper {
	return &keeper{max: orDefault64(max, 256<<10), budget: orDefault64(budget, 64<<20),
		data: map[string][]byte{}, refused: map[string]string{}}
}

func (k *keeper) keep(e *snapshot.Entry, data []byte) {
	if int64(len(data)) > k.max {
		return
	}
	if !looksText(data) {
		k.mu.Lock()
		k.refused[e.SHA256] = diff.NoteBinary
		k.mu.Unlock()
		return
	}
	// Claim the key and the budget under the lock, copy outside it: the
	// walk's workers must not queue behind each other's copies.
	k.mu.Lock()
	if _, ok := k.data[e.SHA256]; ok {
		k.mu.Unlock()
		return
	}
	src, n := sourceLike(e), int64(len(data))
	if k.used+n > k.budget || !src && k.otherUsed+n > k.budget/4 {
		k.refused[e.SHA256] = diff.NoteKeepBudget
		k.mu.Unlock()
		return
	}
	k.data[e.SHA256] = nil
	k.used += n
	if !src {
		k.otherUsed += n
	}
	k.mu.Unlock()
	c := append(make([]byte, 0, len(data)), data...)
	k.mu.Lock()
	k.data[e.SHA256] = c
	k.mu.Unlock()
}

// get returns kept content; a claim whose copy is still under way counts as
// not kept.
func (k *keeper) get(sha string) ([]byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	d, ok := k.data[sha]
	return d, ok && d != nil
}

// why says why content is not kept: binary, the budget, or never offered.
func (k *keeper) why(sha string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r, ok := k.refused[sha]; ok {
		return r
	}
	return diff.NoteNotKept
}

// overBudget calls yield with every content refused for the budget.
func (k *keeper) overBudget(yield func(sha string) bool) {
	k.mu.Lock()
	var all []string
	for sha, why := range k.refused {
		if why == diff.NoteKeepBudget {
			all = append(all, sha)
		}
	}
	k.mu.Unlock()
	for _, sha := range all {
		if !yield(sha) {
			return
		}
	}
}

// each calls yield with every kept content, until yield returns false.
func (k *keeper) each(yield func(sha string, data []byte) bool) {
	k.mu.Lock()
	all := make([]string, 0, len(k.data))
	for sha, d := range k.data {
		if d != nil {
			all = append(all, sha)
		}
	}
	k.mu.Unlock()
	for _, sha := range all {
		if d, ok := k.get(sha); ok && !yield(sha, d) {
			return
		}
	}
}

// looksText reports whether data is valid UTF-8 without NUL bytes.
func looksText(data []byte) bool {
	return bytes.IndexByte(data, 0) < 0 && utf8.Valid(data)
}

type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		q := p
		if int64(len(q)) > l.n {
			q = q[:l.n]
		}
		l.w.Write(q)
		l.n -= int64(len(q))
	}
	return len(p), nil
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

func orDefault64(v, d int64) int64 {
	if v > 0 {
		return v
	}
	return d
}
