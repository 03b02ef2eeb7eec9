//go:build !js

package ui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
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
// allowlist and runs the gate with live progress and output.
type runTab struct {
	u      *UI
	runner Runner
	log    zerolog.Logger

	workspace, script  *keys.SelectEntry
	wsBrowse, scBrowse *widget.Button
	demoBtn            *widget.Button
	args, timeout      *keys.Entry
	scriptView         *widget.TextGrid
	scriptInfo         *widget.RichText
	allow              *review.AllowlistEditor
	allowHint          *widget.RichText
	runBtn, cancelBtn  *widget.Button
	stage              *widget.Check
	contain            *containControls
	status             *widget.RichText
	stageInfo          *widget.RichText
	phases             *phaseProgress
	output             *outputPane
	// split divides the script and allowlist (top) from the run's
	// progress and output; a run gives the output the room.
	split *container.Split
	hint  fyne.CanvasObject
	// hintHeld: hint holds the space of the demo's hint, not the hint
	// (holdHintSpace).
	hintHeld bool
	root     fyne.CanvasObject

	scriptSHA string
	hashGen   int
	running   bool
	cancel    context.CancelFunc
	lastWS    string
	// lookupN counts the workspace field's changes (the approved
	// allowlist lookup of an older one is dropped); lookedUp is the last
	// one whose lookup was answered.
	lookupN, lookedUp int
	// presetWS is the workspace whose allowlist the editor was loaded with
	// (the demo's preset, an approved version) and presetEntries those
	// entries ("" and nil once edited away or dropped).
	presetWS      string
	presetEntries []string
	// prior holds each workspace's last after-manifest, for hash reuse
	// when there is no history (the history keeps a hash cache).
	prior *pipeline.PriorCache
	// approvedVersion is the approved allowlist version the editor was
	// loaded with (0: none) and approvedEntries its entries: a run whose
	// allowlist still equals them is recorded as using that version.
	approvedVersion int
	approvedEntries []string
	// rerunState holds a rerun's grants for the next start (rerun.go).
	rerunState
}

func newRunTab(u *UI, runner Runner) *runTab {
	t := &runTab{u: u, runner: runner, log: u.log, prior: &pipeline.PriorCache{}}
	prefs := u.app.Preferences()

	t.workspace = keys.NewSelectEntry(prefs.StringList(prefWorkspaces))
	t.workspace.SetPlaceHolder("Folder the script runs in (drop a folder on the window)")
	t.workspace.OnChanged = func(string) { t.workspaceChanged() }
	t.script = keys.NewSelectEntry(prefs.StringList(prefScripts))
	t.script.SetPlaceHolder("Script to run, e.g. generated_script.sh")
	t.script.OnChanged = func(string) { t.loadScript() }
	t.wsBrowse = widget.NewButtonWithIcon("Browse…", theme.FolderOpenIcon(), func() {
		pickFolder(u.win, t.workspace.Text, "Choose the workspace", func(p string) { t.workspace.SetText(p) })
	})
	t.scBrowse = widget.NewButtonWithIcon("Browse…", theme.FileIcon(), func() {
		start := filepath.Dir(t.script.Text)
		if t.script.Text == "" {
			start = t.workspace.Text
		}
		pickFile(u.win, start, "Choose the script", "", func(p string) { t.script.SetText(p) })
	})
	t.demoBtn = widget.NewButtonWithIcon("Load demo", theme.MediaReplayIcon(), func() { t.loadDemo() })
	t.demoBtn.Importance = widget.LowImportance

	t.args = keys.NewEntry()
	t.args.SetPlaceHolder("arguments (optional)")
	t.timeout = keys.NewEntry()
	t.timeout.SetText(prefs.StringWithFallback(prefTimeout, "10m"))
	t.timeout.Validator = func(s string) error { _, err := parseTimeout(s); return err }

	t.scriptView = widget.NewTextGrid()
	t.scriptView.Scroll = fyne.ScrollBoth
	t.scriptView.ShowLineNumbers = true
	t.scriptInfo = widget.NewRichText()
	t.scriptInfo.Wrapping = fyne.TextWrapBreak

	t.allow = review.NewAllowlistEditor()
	t.allowHint = widget.NewRichText()
	t.allowHint.Wrapping = fyne.TextWrapWord
	t.setAllowHint("Empty, every change is a violation. Start strict and allow paths after review.")

	t.runBtn = widget.NewButtonWithIcon("Run through the gate", theme.MediaPlayIcon(), t.start)
	t.runBtn.Importance = widget.HighImportance
	t.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.MediaStopIcon(), t.stop)
	t.cancelBtn.Importance = widget.DangerImportance
	t.cancelBtn.Disable()
	t.stage = widget.NewCheck("Stage changes (apply after review)", func(on bool) {
		u.app.Preferences().SetBool(prefStage, on)
	})
	if u.hist == nil {
		// Apply and Discard read the run's record.
		t.stage.SetText("Stage changes (needs the history)")
		t.stage.Disable()
	} else {
		t.stage.SetChecked(prefs.BoolWithFallback(prefStage, true))
	}
	t.contain = newContainControls(u, func() string { return strings.TrimSpace(t.workspace.Text) })
	t.status = widget.NewRichText()
	t.status.Wrapping = fyne.TextWrapWord
	t.stageInfo = widget.NewRichText()
	// One line, cut with an ellipsis: the Review tab's strip says the
	// same, and a long reason (no overlay here: …) must not push the
	// output out of a 1024×700 window.
	t.stageInfo.Truncation = fyne.TextTruncateEllipsis
	t.stageInfo.Hide()
	t.phases = newPhaseProgress()
	t.output = newOutputPane()

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
	scriptPane := container.NewBorder(
		container.NewVBox(heading("Script (read it before you run it)"), t.scriptInfo), nil, nil, nil,
		framed(t.scriptView))
	allowPane := container.NewBorder(container.NewVBox(heading("Allowlist"), t.allowHint), nil, nil, nil, t.allow)
	top := container.NewHSplit(scriptPane, allowPane)
	top.Offset = 0.6

	actions := container.NewBorder(nil, nil, container.NewHBox(t.runBtn, t.cancelBtn, t.stage), nil, t.status)
	outputPane := container.NewBorder(heading("Output"), nil, nil, nil, container.New(shrinkLayout{h: 48}, t.output.view))
	bottom := container.NewBorder(container.NewVBox(actions, t.contain.enforced, t.stageInfo, t.phases.root), nil, nil, nil, outputPane)
	// The script pane may shrink below its minimum (it scrolls) for the
	// output of a run in a 1024×700 window.
	split := container.NewVSplit(container.New(shrinkLayout{h: 100}, top), bottom)
	split.Offset = 0.5
	t.split = split
	t.hint = container.NewVBox()
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
		t.setAllowHint("Preset for this workspace. Entries allow a path, everything under a folder/, or a glob.")
	}
}

// setPreset loads entries that come with a workspace (the demo's preset,
// version > 0: an approved version) into the editor: they leave it again
// when the workspace changes, unless the reviewer edited them.
func (t *runTab) setPreset(workspace string, entries []string, version int) {
	t.allow.SetEntries(entries)
	t.presetWS, t.presetEntries = workspaceKey(workspace), slices.Clone(entries)
	t.approvedVersion, t.approvedEntries = 0, nil
	if version > 0 {
		t.approvedVersion, t.approvedEntries = version, slices.Clone(entries)
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

// holdHintSpace replaces the demo's hint, when it is shown, by empty space
// of its height: the hint has said what it had to, and the form below it
// stays where it is until the workspace changes.
func (t *runTab) holdHintSpace() {
	c := t.hint.(*fyne.Container)
	if len(c.Objects) == 0 || t.hintHeld {
		return
	}
	space := canvas.NewRectangle(color.Transparent)
	space.SetMinSize(fyne.NewSize(0, c.Size().Height))
	c.Objects = []fyne.CanvasObject{space}
	t.hintHeld = true
	c.Refresh()
}

func (t *runTab) showDemoHint(on bool) {
	if t.hintHeld { // the space of a hint that was shown
		t.hintHeld = false
		t.hint.(*fyne.Container).Objects = nil
		t.root.Refresh()
	}
	if shown := len(t.hint.(*fyne.Container).Objects) > 0; shown == on {
		return
	}
	if !on {
		if len(t.hint.(*fyne.Container).Objects) > 0 {
			t.hint.(*fyne.Container).Objects = nil
			t.root.Refresh()
		}
		return
	}
	msg := widget.NewRichTextFromMarkdown("**Try the demo.** `demo.sh` was asked to write `logs/run.log`, which the allowlist `logs/` permits. " +
		"It also edits `config.json`, makes a file executable, deletes a lock file and leaves `sleep 300` running, and still exits 0. " +
		"Press **Run** (Ctrl+R) and see what the gate makes of it.")
	msg.Wrapping = fyne.TextWrapWord
	t.hint.(*fyne.Container).Objects = []fyne.CanvasObject{callout(msg, theme.ColorNamePrimary)}
	t.root.Refresh() // the hint changes the height of the top area
}

func (t *runTab) setAllowHint(s string) {
	t.allowHint.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: s,
		Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText}}}
	t.allowHint.Refresh()
}

func (t *runTab) setStatus(s string, c fyne.ThemeColorName) {
	t.status.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: s,
		Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Bold: c != style.Muted}}}}
	t.status.Refresh()
}

// workspaceKey is the form in which the gate reports, and the history
// stores, the workspace ws: absolute, symlinks resolved.
func workspaceKey(ws string) string {
	k, err := history.WorkspaceKey(strings.TrimSpace(ws))
	if err != nil {
		return ws
	}
	return k
}

// lookupDelay is how long the workspace field must rest before the
// allowlist approved for it is looked up (not on every keystroke).
const lookupDelay = 250 * time.Millisecond

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
	if t.presetWS != "" && key != t.presetWS && slices.Equal(t.allow.Entries(), t.presetEntries) {
		t.allow.SetEntries(nil)
		t.presetWS, t.presetEntries = "", nil
		t.approvedVersion, t.approvedEntries = 0, nil
		t.setAllowHint("Empty, every change is a violation. Start strict and allow paths after review.")
	}
	demo := t.isDemo(ws)
	if demo && t.allow.Text() == "" {
		t.setPreset(ws, t.u.demoData.Allowlist, 0)
		t.setAllowHint("Preset for this workspace. Entries allow a path, everything under a folder/, or a glob.")
	}
	t.showDemoHint(demo)
	t.lookupN++
	gen, h := t.lookupN, t.u.hist
	if h == nil || ws == "" {
		return
	}
	time.AfterFunc(lookupDelay, func() {
		al, err := h.LatestAllowlist(key)
		t.u.do(func() {
			if gen != t.lookupN || t.u.closed {
				return // the field changed since
			}
			if err != nil {
				t.log.Warn().Err(err).Str("workspace", ws).Msg("read approved allowlist")
				return
			}
			t.lookedUp = gen
			if al == nil {
				if t.presetWS == "" && len(t.allow.Entries()) == 0 {
					t.setAllowHint("No allowlist approved for this workspace yet: every change is a violation. Approve one after a review.")
				}
				return
			}
			t.setPreset(ws, al.Entries, al.Version)
			t.setAllowHint(fmt.Sprintf("Version %d of the allowlist approved for this workspace (%s, %s).",
				al.Version, al.CreatedAt.Local().Format("2006-01-02 15:04"), report.Plural(len(al.Entries), "entry")))
		})
	})
}

// clearOutcome takes the last run's outcome off the tab: its status, the
// containment it enforced, its stage line and its steps.
func (t *runTab) clearOutcome() {
	t.setStatus("", style.Muted)
	t.contain.setEnforced(nil)
	t.setStageInfo("", style.Muted)
	t.phases.reset(0)
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
	if workspaceKey(t.workspace.Text) != workspace {
		return
	}
	if al == nil {
		t.setPreset(workspace, entries, 0)
		t.setAllowHint("The allowlist you approved (for this session: the history is unavailable).")
		return
	}
	t.setPreset(workspace, al.Entries, al.Version)
	t.setAllowHint(fmt.Sprintf("Version %d of the allowlist approved for this workspace, approved just now (%s).",
		al.Version, report.Plural(len(al.Entries), "entry")))
}

// allowlistVersion is the approved version the editor's entries are (0
// when they were edited or none was loaded).
func (t *runTab) allowlistVersion() int {
	if t.approvedVersion > 0 && slices.Equal(t.allow.Entries(), t.approvedEntries) {
		return t.approvedVersion
	}
	return 0
}

// loadScript shows the script's text and, computed off the UI thread, its
// SHA-256.
func (t *runTab) loadScript() {
	p := t.script.Text
	t.hashGen++
	gen := t.hashGen
	t.scriptSHA = ""
	if p == "" {
		t.scriptView.SetText("")
		t.setScriptInfo("No script selected.", style.Muted)
		return
	}
	f, err := os.Open(p)
	if err != nil {
		t.scriptView.SetText("")
		t.setScriptInfo(oneline.Flat(err.Error()), style.FailColor)
		return
	}
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		f.Close()
		t.scriptView.SetText("")
		t.setScriptInfo(p+" is a folder, not a script", style.FailColor)
		return
	}
	head, _ := io.ReadAll(io.LimitReader(f, previewLimit))
	f.Close()
	text := string(head)
	switch {
	case !looksText(head):
		text = "(binary file: no preview)"
	case st.Size() > previewLimit:
		text += "\n… (preview cut at 256 KiB)"
	}
	t.scriptView.SetText(strings.ToValidUTF8(strings.ReplaceAll(text, "\t", "    "), "\uFFFD"))
	t.setScriptInfo("SHA-256 …  ·  "+report.Size(st.Size()), style.Muted)
	size := st.Size()
	go func() {
		sum, err := hashFile(p)
		t.u.do(func() {
			if gen != t.hashGen {
				return
			}
			if err != nil {
				t.setScriptInfo(oneline.Flat(err.Error()), style.FailColor)
				return
			}
			t.scriptSHA = sum
			t.setScriptInfo("SHA-256 "+sum+"  ·  "+report.Size(size), style.Muted)
		})
	}()
}

func (t *runTab) setScriptInfo(s string, c fyne.ThemeColorName) {
	t.scriptInfo.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: s,
		Style: widget.RichTextStyle{ColorName: c, SizeName: theme.SizeNameCaptionText, TextStyle: fyne.TextStyle{Monospace: true}}}}
	t.scriptInfo.Refresh()
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func looksText(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	for _, c := range b {
		if c == 0 {
			return false
		}
	}
	return utf8.Valid(b) || len(b) == previewLimit
}

func parseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("timeout: a duration such as 30s or 2m")
	}
	return d, nil
}

// splitArgs splits an argument line on spaces, honouring "double" and
// 'single' quotes and backslash escapes.
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inArg, quote := false, rune(0)
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc, inArg = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				out = append(out, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 || esc {
		return nil, errors.New("arguments: unterminated quote or escape")
	}
	if inArg {
		out = append(out, cur.String())
	}
	return out, nil
}

// start runs the gate in a goroutine; progress and output reach the widgets
// through fyne.Do (u.do), so the window stays responsive.
func (t *runTab) start() {
	if t.running {
		return
	}
	ws, script := strings.TrimSpace(t.workspace.Text), strings.TrimSpace(t.script.Text)
	allow, pol := t.withGrants(t.allow.Entries(), t.contain.Policy()) // a rerun's, for this start only
	var problems []string
	if ws == "" {
		problems = append(problems, "choose a workspace folder")
	}
	if script == "" {
		problems = append(problems, "choose a script")
	}
	timeout, err := parseTimeout(t.timeout.Text)
	if err != nil {
		problems = append(problems, err.Error())
	}
	args, err := splitArgs(t.args.Text)
	if err != nil {
		problems = append(problems, err.Error())
	}
	if p := t.allow.Problems(); len(p) > 0 {
		problems = append(problems, fmt.Sprintf("fix the allowlist (%s)", p[0]))
	}
	if len(problems) > 0 {
		t.setStatus("Cannot run: "+strings.Join(problems, "; ")+".", style.FailColor)
		return
	}
	hist := t.u.hist
	staged := t.stage.Checked && hist != nil
	buf := &outputBuffer{}
	var mu sync.Mutex
	var last *pipeline.Progress
	var events []pipeline.Progress
	cfg := pipeline.Config{
		Workspace: ws, Script: script, Args: args, Allow: allow, Timeout: timeout,
		Contain:     pol,
		Log:         t.log,
		Output:      buf.write,
		Granularity: t.u.opts.Granularity,
		Progress: func(p pipeline.Progress) {
			mu.Lock()
			if last != nil && last.Phase != p.Phase {
				events = append(events, *last)
			}
			last = &p
			mu.Unlock()
		},
	}
	// The pipeline checks the run before it starts (the workspace, the
	// history database's place and writability) and says what is wrong as
	// it is; it loads the history's hash cache (without history, this
	// session's last manifest), runs the gate and records the run.
	opts := pipeline.Options{Config: cfg, AllowlistVersion: t.allowlistVersion(), Runner: t.runner, Cache: t.prior,
		Stage: staged, StageBase: t.u.opts.StageBase, StageMechanism: t.u.opts.StageMechanism}
	if hist != nil {
		opts.History = hist.db
	}
	plan, err := pipeline.Preflight(opts)
	if err != nil {
		t.setStatus("Cannot run: "+oneline.Flat(err.Error()), style.FailColor)
		return
	}
	t.remember(prefWorkspaces, ws, t.workspace)
	t.remember(prefScripts, script, t.script)
	// The demo's hint stays while the run runs: the form must not move
	// under the pointer (Cancel); finished takes it away.
	t.u.app.Preferences().SetString(prefTimeout, t.timeout.Text)

	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	t.setRunning(true)
	t.output.clear()
	t.phases.reset(timeout)
	t.setStatus("Running…", style.Muted)
	t.setStageInfo("", style.Muted)
	reviewedSHA := t.scriptSHA
	t.contain.setEnforced(nil)
	started := time.Now()
	drain := func(final bool) {
		mu.Lock()
		evs := events
		if last != nil {
			evs = append(evs, *last)
			last = nil
		}
		events = nil
		mu.Unlock()
		for _, ev := range evs {
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
		return
	}
	t.phases.finish(true)
	// The script was read before the run: its output needs the room now
	// (in a 1024×700 window it would be two lines). The split keeps the
	// script pane at its minimum; the reviewer may drag it back. Not when
	// the run starts, nor after a failed one (the tab stays in view): Run
	// and Cancel must not move under the pointer; the review is shown now.
	t.split.SetOffset(0)
	res, id, recErr := out.Result, out.RunID, out.RecordErr
	r := res.Report
	t.phases.afterDone(res.After, r)
	t.setStageInfo(stageLine(out))
	t.contain.setEnforced(r.Containment)
	msg := fmt.Sprintf("%s: %s", strings.ToUpper(r.Verdict), strings.Join(r.Reasons, ", "))
	if len(r.Reasons) == 0 {
		msg = "PASS: only allowed changes."
	}
	if reviewedSHA != "" && r.Script.SHA256 != "" && reviewedSHA != r.Script.SHA256 {
		msg += "  Note: the script changed after it was shown here."
	}
	switch {
	case recErr != nil:
		msg += "  Not recorded in the history: " + oneline.Flat(recErr.Error())
		t.log.Warn().Err(recErr).Msg("record run in history")
	case id > 0:
		msg += fmt.Sprintf("  Recorded as run %d.", id)
	}
	t.setStatus(msg, style.VerdictColor(r.Verdict))
	t.showDemoHint(false) // tried: the hint has said what it had to (the review tab is shown now)
	t.u.showResult(res, id)
	if t.u.onRunDone != nil {
		t.u.onRunDone(r, nil)
	}
}

func (t *runTab) setRunning(on bool) {
	t.running = on
	ws := []fyne.Disableable{t.workspace, t.script, t.wsBrowse, t.scBrowse, t.demoBtn, t.args, t.timeout, t.runBtn}
	if t.u.hist != nil {
		ws = append(ws, t.stage)
	}
	for _, w := range ws {
		if on {
			w.Disable()
		} else {
			w.Enable()
		}
	}
	if on {
		t.allow.Disable()
		t.cancelBtn.Enable()
	} else {
		t.allow.Enable()
		t.cancelBtn.Disable()
	}
	t.contain.setEnabled(!on)
}

func (t *runTab) setStageInfo(s string, c fyne.ThemeColorName) {
	t.stageInfo.Hidden = s == "" // a direct run: no line
	if s == "" {
		t.stageInfo.Segments = nil
	} else {
		t.stageInfo.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: s,
			Style: widget.RichTextStyle{ColorName: c, SizeName: theme.SizeNameCaptionText}}}
	}
	t.stageInfo.Refresh()
}

// stageLine says how a staged run was staged and what it cost ("" for a
// direct run), and in which color.
func stageLine(out *pipeline.Result) (string, fyne.ThemeColorName) {
	r := out.Report
	if r.Stage == nil {
		return "", style.Muted
	}
	var b strings.Builder
	cost := out.StageCost
	if cost == nil {
		cost = &pipeline.StageCost{}
	}
	switch pipeline.StageMechanism(r.Stage.Mechanism) {
	case pipeline.StageOverlay:
		b.WriteString("Staged in an overlay: the script's writes went to the stage, the workspace is untouched")
		if out.Probe != nil {
			fmt.Fprintf(&b, "; probe %s", ms(out.Probe.Took))
		}
	default:
		cp := cost.Copy
		b.WriteString("Staged in a copy of the workspace: the workspace is untouched")
		fmt.Fprintf(&b, "; copied %s (%s", report.Plural(cp.Files, "file"), report.Size(cp.Bytes))
		if cp.Reflinked > 0 {
			fmt.Fprintf(&b, ", %d reflinked", cp.Reflinked)
		}
		fmt.Fprintf(&b, ") in %s", ms(cost.Prepare))
		if out.Probe != nil && out.Probe.Why != "" {
			fmt.Fprintf(&b, "; no overlay here: %s", out.Probe.Why)
		}
	}
	fmt.Fprintf(&b, "; stage read in %s.", ms(cost.Read))
	switch r.Stage.State {
	case report.StagePending:
		b.WriteString(" Apply or discard the changes in the Review tab.")
	case report.StageDiscarded: // not recorded, so nothing could apply it
		b.WriteString(" The stage was discarded: the run is not in the history.")
		return b.String(), style.FailColor
	}
	return b.String(), style.Muted
}

// ms rounds d for display.
func ms(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
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
