package ui

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

func TestMain(m *testing.M) {
	pipeline.Supervise() // the gate re-executes this binary as its supervisor
	noNative = true      // a test never blocks on a GTK dialog
	os.Exit(m.Run())
}

// loop stands in for the driver's main goroutine: the UI's fyne.Do calls
// queue here and the test goroutine runs them, so widgets are only ever
// touched from one goroutine (the race detector checks it).
type loop struct{ ch chan func() }

func newLoop() *loop { return &loop{ch: make(chan func(), 1024)} }

func (l *loop) do(f func()) { l.ch <- f }

// until runs queued UI work until cond holds.
func (l *loop) until(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.After(timeout)
	for !cond() {
		select {
		case f := <-l.ch:
			f()
		case <-deadline:
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// settle runs whatever UI work is queued for a short while.
func (l *loop) settle(d time.Duration) {
	end := time.After(d)
	for {
		select {
		case f := <-l.ch:
			f()
		case <-end:
			return
		}
	}
}

func newTestUI(t testing.TB, opts Options) (*UI, *loop, fyne.Window) {
	t.Helper()
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, nil)
	l := newLoop()
	opts.do = l.do
	if opts.DemoDir == "" {
		opts.DemoDir = t.TempDir()
	}
	if opts.DBPath == "" { // never the user's own history
		opts.DBPath = filepath.Join(t.TempDir(), "history.db")
	}
	if opts.StageBase == "" { // nor the user's cache directory
		opts.StageBase = t.TempDir()
	}
	u := Create(a, w, opts)
	t.Cleanup(func() {
		if u.run.cancel != nil {
			u.run.cancel()
		}
		l.until(t, "the run to stop", 30*time.Second, func() bool { return !u.run.running })
		l.settle(50 * time.Millisecond)
		u.Close()
	})
	return u, l, w
}

func TestFirstLaunchOffersTheDemo(t *testing.T) {
	u, l, _ := newTestUI(t, Options{})
	r := u.run
	if !strings.HasSuffix(r.workspace.Text, "workspace") || filepath.Base(r.script.Text) != "demo.sh" {
		t.Fatalf("demo not preloaded: %q %q", r.workspace.Text, r.script.Text)
	}
	if got := strings.Join(r.allow.Entries(), ","); got != "logs/" {
		t.Errorf("demo allowlist %q", got)
	}
	if !strings.Contains(r.scriptView.Text(), "sleep 300 &") {
		t.Errorf("script text not shown: %q", r.scriptView.Text())
	}
	want, err := hashFile(r.script.Text)
	if err != nil {
		t.Fatal(err)
	}
	l.until(t, "the script hash", 5*time.Second, func() bool { return r.scriptSHA != "" })
	if r.scriptSHA != want {
		t.Errorf("shown SHA-256 %s, want %s", r.scriptSHA, want)
	}
	if !strings.Contains(uitest.RichString(r.scriptInfo), want) {
		t.Errorf("script info %q lacks the hash", uitest.RichString(r.scriptInfo))
	}
	if len(r.hint.(*fyne.Container).Objects) == 0 {
		t.Error("no demo hint")
	}

	// "Load demo" gives a fresh copy (a run edits the old one) and removes
	// the old copy.
	old := r.workspace.Text
	os.WriteFile(filepath.Join(old, "config.json"), []byte("edited"), 0o644)
	test.Tap(r.demoBtn)
	if r.workspace.Text == old {
		t.Fatal("Load demo reused the old copy")
	}
	if b, _ := os.ReadFile(filepath.Join(r.workspace.Text, "config.json")); !strings.Contains(string(b), `"debug": false`) {
		t.Errorf("fresh demo config.json: %s", b)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("the old demo copy was left behind")
	}
}

// TestRunDemoThroughRealGate runs the bundled demo through pipeline.GateRun in a
// real temporary workspace, with a real temporary history database, and
// checks what the app makes of it.
func TestRunDemoThroughRealGate(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "history.db")
	u, l, _ := newTestUI(t, Options{DBPath: dbPath})
	if u.HistoryError() != nil || u.Notice() != "" {
		t.Fatalf("history: %v, notice %q", u.HistoryError(), u.Notice())
	}
	l.until(t, "the script hash", 5*time.Second, func() bool { return u.run.scriptSHA != "" })

	test.Tap(u.run.runBtn)
	if !u.run.running || !u.run.runBtn.Disabled() || u.run.cancelBtn.Disabled() {
		t.Fatal("the run did not start")
	}
	l.until(t, "the review tab", 60*time.Second, func() bool { return u.Tabs.Selected() == u.reviewItem })

	r := u.Review().Report()
	if r.Verdict != report.Fail {
		t.Fatalf("verdict %s", r.Verdict)
	}
	byPath := map[string]diff.Change{}
	for _, c := range r.Changes {
		byPath[c.Path] = c
	}
	if c := byPath["logs/run.log"]; c.Kind != diff.Added || !c.Allowed || c.Rule != "logs/" {
		t.Errorf("logs/run.log: %+v", c)
	}
	if c := byPath["config.json"]; c.Kind != diff.Changed || c.Allowed || !strings.Contains(c.TextDiff, `+  "debug": true,`) {
		t.Errorf("config.json: %+v", c)
	}
	if c := byPath["src/app.py"]; !c.Has(diff.Mode) || c.After.Perm&0o100 == 0 {
		t.Errorf("src/app.py: %+v", c)
	}
	if c := byPath["build.lock"]; c.Kind != diff.Removed {
		t.Errorf("build.lock: %+v", c)
	}
	// The background "sleep 300" is a leftover, reported as the command it
	// runs (not as the shell that forked it).
	if len(r.Process.Leftovers) != 1 || r.Process.Leftovers[0].Cmd != "sleep 300" ||
		!strings.Contains(strings.Join(r.Reasons, ","), "1 leftover process") {
		t.Errorf("leftover sleep not reported: %+v %v", r.Process.Leftovers, r.Reasons)
	}
	if r.Script.SHA256 != u.run.scriptSHA {
		t.Errorf("report script hash %s, shown %s", r.Script.SHA256, u.run.scriptSHA)
	}

	// The review opens on the first violation and the banner says FAIL.
	if sel := u.Review().Selected(); sel < 0 || r.Changes[sel].Allowed {
		t.Errorf("review did not select a violation (%d)", sel)
	}
	if !uitest.Drawn(u.Review().Banner(), "FAIL") {
		t.Errorf("banner %q", uitest.AllText(u.Review().Banner()))
	}

	// Output: stdout lines, stderr in the warning color.
	out := u.run.output.text()
	if !strings.Contains(out, "demo: writing the run log") || !strings.Contains(out, "demo: cleaning up a stale lock") {
		t.Errorf("output pane: %q", out)
	}
	var sawStderr bool
	for _, l := range u.run.output.view.Lines() {
		if l.Text == "demo: cleaning up a stale lock" {
			sawStderr = l.Tag == tagStderr
		}
	}
	if !sawStderr {
		t.Error("the stderr line is not tagged as stderr")
	}
	// It is drawn in the warning color.
	var drawn bool
	uitest.Walk(u.run.output.view, func(o fyne.CanvasObject) {
		if tx, ok := o.(*canvas.Text); ok && tx.Text == "demo: cleaning up a stale lock" {
			drawn = uitest.SameColor(tx.Color, style.Color(theme.Current(), theme.ColorNameWarning))
		}
	})
	if !drawn {
		t.Error("the stderr line is not drawn in the warning color")
	}
	// Progress: every phase done.
	for _, ph := range pipeline.Phases() {
		if st := u.run.phases.rows[ph].state; st != phaseDone {
			t.Errorf("phase %s state %d after the run", ph, st)
		}
	}
	if !strings.Contains(u.run.phases.rows[pipeline.PhaseBefore].info.Text, "entries") {
		t.Errorf("before-snapshot info %q", u.run.phases.rows[pipeline.PhaseBefore].info.Text)
	}
	if s := uitest.RichString(u.run.status); !strings.HasPrefix(s, "FAIL: ") || !strings.Contains(s, "Recorded as run 1.") {
		t.Errorf("status %q", s)
	}

	// The run is in the database, with its script text and the kept
	// contents of config.json before and after.
	db := openDB(t, dbPath)
	run, err := db.Get(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if run.Report.Verdict != report.Fail || !strings.Contains(string(run.ScriptText), "sleep 300 &") || run.AllowlistVersion != 0 {
		t.Errorf("recorded run: %s, version %d, script %q", run.Report.Verdict, run.AllowlistVersion, run.ScriptText)
	}
	cfg := byPath["config.json"]
	for _, e := range []*snapshot.Entry{cfg.Before, cfg.After} {
		if data, err := db.Content(context.Background(), e.SHA256); err != nil || !strings.Contains(string(data), `"debug"`) {
			t.Errorf("content %s: %q %v", e.SHA256, data, err)
		}
	}
	if m, err := db.HashCache(context.Background(), r.Workspace); err != nil || m == nil || len(m.Entries) == 0 {
		t.Errorf("hash cache after the run: %v %v", m, err)
	}

	// Approving through the review saves version 1 of the workspace's
	// allowlist, records the decision and preloads the Run tab.
	v := u.Review()
	v.Allow("changed:config.json")
	test.Type(noteEntry(t, v), "debug on is fine for the demo")
	uitest.Button(t, v, "Approve allowlist").OnTapped()
	approveAnyway(t, u) // the leftover sleep still fails the run
	if d := v.Decision(); !strings.Contains(d, "allowlist version 1 ") {
		t.Errorf("decision line %q does not give the version", d)
	}
	al, err := db.LatestAllowlist(context.Background(), r.Workspace)
	if err != nil || al == nil || al.Version != 1 || strings.Join(al.Entries, ",") != "logs/,changed:config.json" || al.Note != "debug on is fine for the demo" {
		t.Fatalf("approved allowlist %+v %v", al, err)
	}
	if run, _ := db.Get(context.Background(), 1); run.Decision != history.Approve || run.DecisionNote != "debug on is fine for the demo" {
		t.Errorf("decision %q %q", run.Decision, run.DecisionNote)
	}
	if strings.Join(u.run.allow.Entries(), ",") != "logs/,changed:config.json" || u.run.allowlistVersion() != 1 {
		t.Errorf("run tab allowlist %v (version %d)", u.run.allow.Entries(), u.run.allowlistVersion())
	}

	// The History tab lists the run; opening it reopens it from the database.
	u.Tabs.Select(u.historyItem)
	rows := shownRows(t, u, l)
	if len(rows) != 1 || !strings.Contains(rows[0], "| FAIL |") || !strings.HasSuffix(rows[0], "| Approved v1") {
		t.Fatalf("history rows %q", rows)
	}
	u.history.list.Select(0)
	shown := u.Review().Report()
	test.Tap(u.history.openBtn)
	opened(t, u, l, shown)
	if u.Tabs.Selected() != u.reviewItem || u.reviewID != 1 {
		t.Error("Open does not reopen the run")
	}
	// It says which version was approved, and that the run still fails
	// with it (the mode change and the removed lock file; the leftover
	// sleep, which no allowlist allows).
	if d := u.Review().Decision(); !strings.HasPrefix(d, "Failed when it ran; approved as allowlist version 1 on ") || !strings.Contains(d, ": debug on is fine for the demo") ||
		!strings.HasSuffix(d, "demo. Version 1 (in the editor) does not cover this run: 2 changes it does not allow; 1 leftover process, which no allowlist allows.") {
		t.Errorf("reopened run's decision line %q", d)
	}
}

// noteEntry finds the review's note entry in the rendered view.
func noteEntry(t *testing.T, v *review.View) *keys.Entry {
	t.Helper()
	return uitest.Find(t, v, "note entry", func(e *keys.Entry) bool { return strings.HasPrefix(e.PlaceHolder, "Note for the record") })
}

// reviewedText is the review's "n of total reviewed" line.
func reviewedText(v fyne.CanvasObject) string {
	return uitest.RichTextWhere(v, func(s string) bool { return strings.HasSuffix(s, " reviewed") })
}

// hiddenText is the review's bar saying what the filters hide ("" when it
// is not shown).
func hiddenText(v fyne.CanvasObject) string {
	return uitest.RichTextWhere(v, func(s string) bool { return strings.HasSuffix(s, " hidden by filters —") })
}

// approveAnyway answers the question asked before approving an allowlist
// the run still fails with.
func approveAnyway(t *testing.T, u *UI) {
	t.Helper()
	test.Tap(uitest.Button(t, approvalDialog(t, u.win), "Approve anyway"))
}

// writeScript writes an executable shell script into dir.
func writeScript(t testing.TB, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCancelKillsTheScript(t *testing.T) {
	u, l, _ := newTestUI(t, Options{})
	ws, scripts := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("x"), 0o644)
	// "started" is printed once the file is made: the cancel comes after it.
	script := writeScript(t, scripts, "touch made-before-cancel\necho started\nsleep 30\ntouch never\n")
	u.run.setInputs(ws, script, []string{})
	test.Tap(u.run.runBtn)
	l.until(t, "the script to run", 20*time.Second, func() bool {
		return strings.Contains(u.run.output.text(), "started")
	})
	if u.run.phases.current != pipeline.PhaseExecute {
		t.Errorf("phase %q while the script sleeps", u.run.phases.current)
	}
	start := time.Now()
	test.Tap(u.run.cancelBtn)
	l.until(t, "the cancelled run", 20*time.Second, func() bool { return !u.run.running })
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("cancel took %s", d)
	}
	r := u.Review().Report()
	if r == nil || !r.Process.Cancelled || r.Verdict != report.Fail {
		t.Fatalf("cancelled run report: %+v", r)
	}
	if !strings.Contains(strings.Join(r.Reasons, ","), "run cancelled") {
		t.Errorf("reasons %v", r.Reasons)
	}
	// What the script did before the cancel is still reported.
	var made bool
	for _, c := range r.Changes {
		made = made || c.Path == "made-before-cancel"
	}
	if !made {
		t.Errorf("changes before the cancel are missing: %+v", r.Changes)
	}
	if _, err := os.Stat(filepath.Join(ws, "never")); err == nil {
		t.Error("the script ran on after the cancel")
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	u, l, _ := newTestUI(t, Options{})
	u.run.setInputs(filepath.Join(t.TempDir(), "missing"), u.run.script.Text, nil)
	test.Tap(u.run.runBtn)
	l.until(t, "the setup error", 20*time.Second, func() bool { return !u.run.running })
	if s := uitest.RichString(u.run.status); !strings.Contains(s, "missing") {
		t.Errorf("status %q does not name the missing workspace", s)
	}
	if u.Tabs.Selected() != u.runItem {
		t.Error("a setup error switched tabs")
	}
	// Inputs the UI checks itself: timeout, quotes, allowlist.
	u.run.timeout.SetText("soon")
	u.run.args.SetText(`"unterminated`)
	u.run.allow.SetText("/abs\n")
	test.Tap(u.run.runBtn)
	s := uitest.RichString(u.run.status)
	for _, want := range []string{"timeout", "unterminated quote", "fix the allowlist"} {
		if !strings.Contains(s, want) {
			t.Errorf("status %q lacks %q", s, want)
		}
	}
	if u.run.running {
		t.Error("ran despite bad input")
	}
}

func TestReportFlagOpensReview(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := review.DemoReport().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "r.json")
	os.WriteFile(p, buf.Bytes(), 0o644)
	u, l, _ := newTestUI(t, Options{Flags: Flags{Report: p}})
	l.until(t, "the report", 20*time.Second, func() bool { return u.Review().Report() != nil })
	if u.Tabs.Selected() != u.reviewItem {
		t.Fatal("--report did not open the review tab")
	}
	if r := u.Review().Report(); r == nil || r.Workspace != "/home/dev/demo-workspace" {
		t.Errorf("review shows %+v", r)
	}
}

func TestDropPicksWorkspaceAndScript(t *testing.T) {
	u, _, _ := newTestUI(t, Options{})
	ws, sc := t.TempDir(), t.TempDir()
	script := writeScript(t, sc, "true\n")
	u.run.dropped([]fyne.URI{storage.NewFileURI(ws), storage.NewFileURI(script)})
	if u.run.workspace.Text != ws || u.run.script.Text != script {
		t.Errorf("drop set %q %q", u.run.workspace.Text, u.run.script.Text)
	}
}

func TestRecentListsRemembered(t *testing.T) {
	u, l, _ := newTestUI(t, Options{})
	ws, sc := t.TempDir(), t.TempDir()
	script := writeScript(t, sc, "true\n")
	u.run.setInputs(ws, script, []string{})
	test.Tap(u.run.runBtn)
	l.until(t, "the run", 30*time.Second, func() bool { return !u.run.running })
	prefs := u.app.Preferences()
	if got := prefs.StringList(prefWorkspaces); len(got) == 0 || got[0] != ws {
		t.Errorf("recent workspaces %v", got)
	}
	if got := prefs.StringList(prefScripts); len(got) == 0 || got[0] != script {
		t.Errorf("recent scripts %v", got)
	}
	if r := u.Review().Report(); r.Verdict != report.Pass {
		t.Errorf("a script that changes nothing: %s %v", r.Verdict, r.Reasons)
	}
}

func TestOutputBounded(t *testing.T) {
	test.NewTempApp(t)
	b := &outputBuffer{}
	p := newOutputPane()
	test.NewTempWindow(t, p.view)
	for i := 0; i < 3*MaxOutputLines; i++ {
		b.write(pipeline.Stdout, []byte("line "+strconv.Itoa(i)+"\n"))
		if i%997 == 0 {
			p.append(b.drain(false))
		}
	}
	b.write(pipeline.Stderr, []byte("no newline at the end"))
	p.append(b.drain(true))
	if n := p.lineCount(); n > MaxOutputLines {
		t.Errorf("%d lines kept, bound is %d", n, MaxOutputLines)
	}
	text := p.text()
	if !strings.Contains(text, "line "+strconv.Itoa(3*MaxOutputLines-1)) || !strings.HasSuffix(text, "no newline at the end") {
		t.Errorf("latest lines missing: …%s", text[max(0, len(text)-80):])
	}
	if strings.Contains(text, "line 0\n") {
		t.Error("the oldest line was kept")
	}
	// Chunks split mid-line and escapes are handled.
	b.write(pipeline.Stdout, []byte("hel"))
	b.write(pipeline.Stdout, []byte("lo \x1b[31mred\x1b[0m\tx\n"))
	lines, _ := b.drain(false)
	if len(lines) != 1 || lines[0].text != "hello \x1b[31mred\x1b[0m\tx" {
		t.Fatalf("lines %+v", lines)
	}
	if s := cleanLine(lines[0].text); s != "hello red   x" {
		t.Errorf("rendered %q", s)
	}
}

func TestSplitArgs(t *testing.T) {
	got, err := splitArgs(`a "b c" 'd e' f\ g ""`)
	if err != nil || strings.Join(got, "|") != "a|b c|d e|f g|" {
		t.Errorf("%q %v", got, err)
	}
	if _, err := splitArgs(`"open`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

func TestParseFlags(t *testing.T) {
	var out bytes.Buffer
	f, err := ParseFlags([]string{"--screenshot", "x.png", "--report", "r.json"}, &out)
	if err != nil || f.Screenshot != "x.png" || f.Report != "r.json" {
		t.Errorf("%+v %v", f, err)
	}
	_, err = ParseFlags([]string{"-h"}, &out)
	if !errors.Is(err, flag.ErrHelp) || UsageExitCode(err) != 0 {
		t.Errorf("-h: %v", err)
	}
	if strings.Contains(out.String(), "--report") || !strings.Contains(out.String(), "--screenshot") {
		t.Errorf("usage:\n%s", out.String())
	}
	if _, err := ParseFlags([]string{"stray"}, &out); err == nil || UsageExitCode(err) != 2 {
		t.Errorf("stray argument: %v", err)
	}
}

// TestSwitchingAwayFromTheDemo: another workspace (typed or dropped) drops
// the demo's allowlist and its "Try the demo" hint; the demo's workspace
// brings both back; entries the reviewer edited stay.
func TestSwitchingAwayFromTheDemo(t *testing.T) {
	u, l, _ := newTestUI(t, Options{})
	r := u.run
	demo := r.workspace.Text
	hint := func() bool { return len(r.hint.(*fyne.Container).Objects) > 0 }
	if !hint() || strings.Join(r.allow.Entries(), ",") != "logs/" {
		t.Fatalf("the demo: hint %v, allowlist %q", hint(), r.allow.Entries())
	}
	other := t.TempDir()
	r.workspace.SetText(other)
	if hint() || r.allow.Text() != "" || !strings.HasPrefix(uitest.RichString(r.allowHint), "Empty") {
		t.Errorf("typed another workspace: hint %v, allowlist %q (%s)", hint(), r.allow.Text(), uitest.RichString(r.allowHint))
	}
	lookedUp(t, u, l)
	r.workspace.SetText(demo)
	if !hint() || strings.Join(r.allow.Entries(), ",") != "logs/" {
		t.Errorf("back to the demo: hint %v, allowlist %q", hint(), r.allow.Entries())
	}
	r.dropped([]fyne.URI{storage.NewFileURI(other)})
	if r.workspace.Text != other || hint() || r.allow.Text() != "" {
		t.Errorf("dropped another workspace: %q, hint %v, allowlist %q", r.workspace.Text, hint(), r.allow.Text())
	}
	r.workspace.SetText(demo)
	r.allow.SetText("logs/\nbuild/\n")
	r.workspace.SetText(other)
	lookedUp(t, u, l)
	if hint() || strings.Join(r.allow.Entries(), ",") != "logs/,build/" {
		t.Errorf("edited entries: hint %v, allowlist %q", hint(), r.allow.Entries())
	}
}

// TestSwitchingWorkspaceClearsTheLastOutcome: the last run's status,
// enforced containment, stage line and steps leave the Run tab when the
// workspace changes (they were another workspace's).
func TestSwitchingWorkspaceClearsTheLastOutcome(t *testing.T) {
	u, _, _ := newTestUI(t, Options{})
	r := u.run
	r.setStatus("FAIL: 3 violations  Recorded as run 7.", style.FailColor)
	r.contain.setEnforced(&report.Containment{Mode: "auto", Contained: true})
	r.setStageInfo("Staged: nothing is in the workspace until you apply.", style.Muted)
	r.phases.finish(true)
	r.workspace.SetText(t.TempDir())
	if s := uitest.RichString(r.status); s != "" {
		t.Errorf("status after switching workspace: %q", s)
	}
	if r.contain.enforced.Visible() || r.stageInfo.Visible() {
		t.Error("the enforced or stage line of the last run stays")
	}
	for _, ph := range pipeline.Phases() {
		if r.phases.rows[ph].state != phasePending {
			t.Errorf("step %s stays %v", ph, r.phases.rows[ph].state)
		}
	}
}

// TestDemoHintKeepsItsSpaceWhileRunning: pressing Run in the demo's
// workspace does not move the form (the hint stays while the run runs);
// the hint is gone once the review shows.
func TestDemoHintKeepsItsSpaceWhileRunning(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(fyne.NewSize(1024, 660))
	r := u.run
	hint := func() bool { return len(r.hint.(*fyne.Container).Objects) > 0 }
	script := writeScript(t, t.TempDir(), "echo hi > logs/run.log\n")
	r.setInputs(r.workspace.Text, script, []string{"logs/"})
	if !hint() {
		t.Fatal("no demo hint in the demo's workspace")
	}
	d := fyne.CurrentApp().Driver()
	before := d.AbsolutePositionForObject(r.runBtn).Y
	test.Tap(r.runBtn)
	if !r.running {
		t.Fatalf("the run did not start: %s", uitest.RichString(r.status))
	}
	if after := d.AbsolutePositionForObject(r.runBtn).Y; after != before {
		t.Errorf("Run moved from y=%.0f to y=%.0f when the run started", before, after)
	}
	l.until(t, "the review tab", 60*time.Second, func() bool { return u.Tabs.Selected() == u.reviewItem })
	if hint() {
		t.Error("the demo's hint stays after the run")
	}
}

// TestFailedRunKeepsTheHintsSpace: when a run in the demo's workspace ends
// in an error (the Run tab stays), the hint's space stays, empty, so the
// form does not move; another workspace gives it back.
func TestFailedRunKeepsTheHintsSpace(t *testing.T) {
	u, _, w := newTestUI(t, Options{})
	w.Resize(fyne.NewSize(1024, 660))
	r := u.run
	d := fyne.CurrentApp().Driver()
	before := d.AbsolutePositionForObject(r.runBtn).Y
	r.finished(nil, errors.New("setup failed"), "")
	if after := d.AbsolutePositionForObject(r.runBtn).Y; after != before {
		t.Errorf("a failed run moved Run from y=%.0f to y=%.0f", before, after)
	}
	if !r.hintHeld {
		t.Error("the hint's space is not held")
	}
	r.workspace.SetText(t.TempDir())
	if len(r.hint.(*fyne.Container).Objects) != 0 || r.hintHeld {
		t.Error("another workspace keeps the hint's space")
	}
}
