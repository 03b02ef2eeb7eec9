//go:build !js

package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/internal/oneline"
)

// Runner runs one gated run; pipeline.GateRun in the app.
type Runner = pipeline.Runner

// Preference keys.
const (
	prefWorkspaces = "recent.workspaces"
	prefScripts    = "recent.scripts"
	prefTimeout    = "run.timeout"
	prefStage      = "run.stage"
	prefReportDir  = "open.reportDir"
	maxRecent      = 10
	previewLimit   = 256 << 10
	flushEvery     = 50 * time.Millisecond
)

// runTab chooses a workspace and a script, shows the script, edits the
// allowlist and runs the gate with live progress and output. It composes
// one part an area (each in a file of its own): the inputs
// (run_pickers.go), the script's pane (run_script.go), the allowlist's
// (run_allow.go), the containment and stage options (run_options.go), the
// run's status, steps and output (run_status.go) and the demo's hint
// (run_hint.go).
type runTab struct {
	u      *UI
	runner Runner
	log    zerolog.Logger

	*runPickers
	*scriptPane
	*allowPane
	*runOptions
	*runStatus
	*demoHint

	// split divides the script and allowlist (top) from the run's
	// progress and output; a run gives the output the room.
	split *container.Split
	root  fyne.CanvasObject

	// prior holds each workspace's last after-manifest, for hash reuse
	// when there is no history (the history keeps a hash cache).
	prior *pipeline.PriorCache
	// rerunState holds a rerun's grants for the next start (rerun.go).
	rerunState
}

func newRunTab(u *UI, runner Runner) *runTab {
	t := &runTab{u: u, runner: runner, log: u.log, prior: &pipeline.PriorCache{}}
	t.runPickers = newRunPickers(u, t.workspaceChanged, t.loadScript, t.loadDemo)
	t.scriptPane = newScriptPane(u.do)
	t.allowPane = newAllowPane(u)
	t.runOptions = newRunOptions(u, func() string { return strings.TrimSpace(t.workspace.Text) })
	t.runStatus = newRunStatus(t.start, t.stop)
	t.demoHint = newDemoHint(func() { t.root.Refresh() })
	t.root = t.layout()
	return t
}

func (t *runTab) layout() fyne.CanvasObject {
	label := func(s string) fyne.CanvasObject {
		return widget.NewLabelWithStyle(s, fyne.TextAlignTrailing, fyne.TextStyle{Bold: true})
	}
	opts := container.NewBorder(nil, nil, nil,
		container.NewHBox(label("Timeout"), container.NewGridWrap(fyne.NewSize(90, t.timeout.MinSize().Height), t.timeout)),
		t.args)
	form := container.New(newFormLayout(),
		label("Workspace"), container.NewBorder(nil, nil, nil, container.NewHBox(t.wsBrowse, t.demoBtn), t.workspace),
		label("Script"), container.NewBorder(nil, nil, nil, t.scBrowse, t.script),
		label("Arguments"), opts,
		label("Containment"), t.contain.root,
	)
	top := container.NewHSplit(t.scriptPane.pane(), t.allowPane.pane())
	top.Offset = 0.6

	actions := container.NewBorder(nil, nil, container.NewHBox(t.runBtn, t.cancelBtn, t.stage), nil, t.status)
	bottom := container.NewBorder(container.NewVBox(actions, t.contain.enforced, t.stageInfo, t.phases.root), nil, nil, nil, t.runStatus.outputPane())
	// The script pane may shrink below its minimum (it scrolls) for the
	// output of a run in a 1024×700 window.
	split := container.NewVSplit(container.New(shrinkLayout{h: 100}, top), bottom)
	split.Offset = 0.5
	t.split = split
	return container.NewBorder(container.NewVBox(t.hint, form), nil, nil, nil, split)
}

// shrinkLayout lays its objects out at the size it is given, and asks for
// no more height than h: the output scrolls rather than make the window
// taller.
type shrinkLayout struct{ h float32 }

func (l shrinkLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objs {
		m = m.Max(o.MinSize())
	}
	return fyne.NewSize(m.Width, min(m.Height, l.h))
}

func (shrinkLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.Position{})
		o.Resize(s)
	}
}

// heading is a pane's bold title, without the label's inner padding (the
// window must fit 1024×700).
func heading(s string) fyne.CanvasObject {
	return style.Tight(widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
}

// setInputs fills the inputs (used at start-up, by the demo and on drop);
// allow, when not nil, is the workspace's preset allowlist (the demo's).
func (t *runTab) setInputs(workspace, script string, allow []string) {
	t.workspace.SetText(workspace)
	t.script.SetText(script)
	if allow != nil {
		t.setPreset(workspace, allow, 0)
		t.setAllowHint(hintPreset)
	}
}

// isDemo reports whether ws is the demo's workspace.
func (t *runTab) isDemo(ws string) bool {
	d := t.u.demoData
	return d != nil && ws != "" && workspaceKey(ws) == workspaceKey(d.Workspace)
}

// loadDemo copies the bundled demo to a temporary folder and selects it.
func (t *runTab) loadDemo() {
	d, err := t.u.demo()
	if err != nil {
		t.setStatus("Cannot create the demo: "+err.Error(), style.FailColor)
		return
	}
	t.setInputs(d.Workspace, d.Script, d.Allowlist)
	t.showDemoHint(true)
}

// loadScript shows the script in the script field.
func (t *runTab) loadScript() { t.showScript(t.script.Text) }

// workspaceChanged follows the workspace field. What came with the previous
// workspace leaves at once: its preset or approved allowlist (unless the
// reviewer edited it) and, away from the demo, the demo's hint; back in
// the demo's workspace both return. Once the field rests, the newest
// allowlist approved for the workspace is looked up off the UI goroutine
// and loaded.
func (t *runTab) workspaceChanged() {
	ws := strings.TrimSpace(t.workspace.Text)
	if ws == t.lastWS {
		return
	}
	t.lastWS = ws
	if !t.running { // the last run's outcome was another workspace's
		t.clearOutcome()
	}
	t.contain.refresh()
	key := workspaceKey(ws)
	t.dropPreset(key)
	demo := t.isDemo(ws)
	if demo && t.allow.Text() == "" {
		t.setPreset(ws, t.u.demoData.Allowlist, 0)
		t.setAllowHint(hintPreset)
	}
	t.showDemoHint(demo)
	t.lookUp(ws, key)
}

// clearOutcome takes the last run's outcome off the tab: its status, the
// containment it enforced, its stage line and its steps.
func (t *runTab) clearOutcome() {
	t.runStatus.clear()
	t.contain.setEnforced(nil)
}

// lookupDone reports whether the approved allowlist of the workspace in the
// field has been looked up (tests wait on it).
func (t *runTab) lookupDone() bool {
	return t.u.hist == nil || t.lookedUp == t.lookupN || t.lastWS == ""
}

// approved takes an allowlist just approved for workspace (al: the saved
// version, nil when the history is unavailable) into the editor when the
// Run tab is set to that workspace, so the next run starts from it.
func (t *runTab) approved(workspace string, entries []string, al *history.Allowlist) {
	if workspaceKey(t.workspace.Text) == workspace {
		t.loadApproved(workspace, entries, al)
	}
}

// start runs the gate in a goroutine; progress and output reach the widgets
// through fyne.Do (u.do), so the window stays responsive.
func (t *runTab) start() {
	if t.running {
		return
	}
	req, problems := t.request()
	allow, pol := t.withGrants(t.allow.Entries(), t.contain.Policy()) // a rerun's, for this start only
	if p := t.allow.Problems(); len(p) > 0 {
		problems = append(problems, fmt.Sprintf("fix the allowlist (%s)", p[0]))
	}
	if len(problems) > 0 {
		t.setStatus("Cannot run: "+strings.Join(problems, "; ")+".", style.FailColor)
		return
	}
	buf, prog := &outputBuffer{}, &progressLog{}
	cfg := pipeline.Config{
		Workspace: req.workspace, Script: req.script, Args: req.args, Allow: allow, Timeout: req.timeout,
		Contain:     pol,
		Log:         t.log,
		Output:      buf.write,
		Granularity: t.u.opts.Granularity,
		Progress:    prog.record,
	}
	plan, err := pipeline.Preflight(t.pipelineOptions(cfg))
	if err != nil {
		t.setStatus("Cannot run: "+oneline.Flat(err.Error()), style.FailColor)
		return
	}
	t.remember(prefWorkspaces, req.workspace, t.workspace)
	t.remember(prefScripts, req.script, t.script)
	// The demo's hint stays while the run runs: the form must not move
	// under the pointer (Cancel); finished takes it away.
	t.u.app.Preferences().SetString(prefTimeout, t.timeout.Text)
	t.launch(plan, req.timeout, buf, prog)
}

// pipelineOptions are the options of a run of cfg. The pipeline checks the
// run before it starts (the workspace, the history database's place and
// writability) and says what is wrong as it is; it loads the history's
// hash cache (without history, this session's last manifest), runs the
// gate and records the run.
func (t *runTab) pipelineOptions(cfg pipeline.Config) pipeline.Options {
	opts := pipeline.Options{Config: cfg, AllowlistVersion: t.allowlistVersion(), Runner: t.runner, Cache: t.prior,
		Stage: t.staged(), StageBase: t.u.opts.StageBase, StageMechanism: t.u.opts.StageMechanism}
	if t.u.hist != nil {
		opts.History = t.u.hist.db
	}
	return opts
}

// progressLog collects a run's progress off the UI goroutine: each phase's
// last event.
type progressLog struct {
	mu     sync.Mutex
	last   *pipeline.Progress
	events []pipeline.Progress
}

func (l *progressLog) record(p pipeline.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last != nil && l.last.Phase != p.Phase {
		l.events = append(l.events, *l.last)
	}
	l.last = &p
}

// take returns the events collected since the last take.
func (l *progressLog) take() []pipeline.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs := l.events
	if l.last != nil {
		evs = append(evs, *l.last)
		l.last = nil
	}
	l.events = nil
	return evs
}

// launch runs plan; a flusher shows its progress and output at most once a
// tick, and finished its outcome.
func (t *runTab) launch(plan pipeline.Plan, timeout time.Duration, buf *outputBuffer, prog *progressLog) {
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	t.setRunning(true)
	t.begin(timeout)
	reviewedSHA := t.scriptSHA
	t.contain.setEnforced(nil)
	started := time.Now()
	drain := func(final bool) {
		for _, ev := range prog.take() {
			t.phases.update(ev)
		}
		t.phases.tick(time.Since(started))
		t.output.append(buf.drain(final))
	}
	done := make(chan struct{})
	go func() { // the flusher: at most one UI update per tick
		tk := time.NewTicker(flushEvery)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				t.u.do(func() { drain(false) })
			}
		}
	}()
	go func() {
		out, err := pipeline.Run(ctx, plan)
		close(done)
		t.u.do(func() {
			drain(true)
			t.finished(out, err, reviewedSHA)
		})
	}()
}

// stop cancels the run; the gate kills the script and still reports.
func (t *runTab) stop() {
	if t.cancel != nil {
		t.cancel()
		t.setStatus("Cancelling: stopping the script…", style.Muted)
	}
}

// finished shows the outcome of a run; out.RunID is its number in the
// history (0 when it was not recorded: out.RecordErr says why, unless there
// is no history).
func (t *runTab) finished(out *pipeline.Result, err error, reviewedSHA string) {
	t.setRunning(false)
	t.cancel = nil
	if err != nil {
		t.failed(err)
		return
	}
	t.phases.finish(true)
	// The script was read before the run: its output needs the room now
	// (in a 1024×700 window it would be two lines). The split keeps the
	// script pane at its minimum; the reviewer may drag it back. Not when
	// the run starts, nor after a failed one (the tab stays in view): Run
	// and Cancel must not move under the pointer; the review is shown now.
	t.split.SetOffset(0)
	r := out.Report
	t.phases.afterDone(out.After, r)
	t.setStageInfo(stageLine(out))
	t.contain.setEnforced(r.Containment)
	if out.RecordErr != nil {
		t.log.Warn().Err(out.RecordErr).Msg("record run in history")
	}
	t.setStatus(verdictLine(out, reviewedSHA), style.VerdictColor(r.Verdict))
	t.showDemoHint(false) // tried: the hint has said what it had to (the review tab is shown now)
	t.u.showResult(out.Result, out.RunID)
	if t.u.onRunDone != nil {
		t.u.onRunDone(r, nil)
	}
}

// failed shows a run that did not come to a report.
func (t *runTab) failed(err error) {
	t.holdHintSpace() // the tab stays: nothing moves
	t.phases.finish(false)
	var se *pipeline.SetupError
	msg := oneline.Flat(err.Error())
	if !errors.As(err, &se) {
		msg = "The gate failed: " + msg
	}
	t.setStatus(msg, style.FailColor)
	t.log.Warn().Err(err).Msg("gate run")
	if t.u.onRunDone != nil {
		t.u.onRunDone(nil, err)
	}
}

// setRunning disables the inputs and options while a run runs, and
// enables Cancel.
func (t *runTab) setRunning(on bool) {
	for _, w := range t.disableables() {
		setEnabled(w, !on)
	}
	if on {
		t.allow.Disable()
	} else {
		t.allow.Enable()
	}
	t.setButtons(on)
	t.runOptions.setEnabled(!on)
}

// remember puts v first in the recent list under key.
func (t *runTab) remember(key, v string, e *keys.SelectEntry) {
	prefs := t.u.app.Preferences()
	list := []string{v}
	for _, x := range prefs.StringList(key) {
		if x != v && len(list) < maxRecent {
			list = append(list, x)
		}
	}
	prefs.SetStringList(key, list)
	e.SetOptions(list)
}

// dropped takes a folder (workspace) or file (script) dropped on the window.
func (t *runTab) dropped(uris []fyne.URI) {
	for _, u := range uris {
		p := u.Path()
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		if st.IsDir() {
			t.workspace.SetText(p)
		} else {
			t.script.SetText(p)
		}
		t.showDemoHint(false)
	}
}
