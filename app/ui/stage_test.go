package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
)

// stagedRun runs, through the app and the real gate, a script that edits
// a.txt, writes logs/run.log (allowed) and removes keep.txt, with staging
// on (the desktop default), and returns the UI on the review of it.
func stagedRun(t *testing.T, opts ...Options) (*UI, *loop, fyne.Window, string) {
	t.Helper()
	u, l, w := newTestUI(t, append(opts, Options{})[0])
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"a.txt": "old\n", "keep.txt": "keep\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := writeScript(t, t.TempDir(), "echo new > a.txt\necho hi > logs/run.log\nrm keep.txt\n")
	u.run.setInputs(ws, script, []string{"logs/"})
	if !u.run.stage.Checked || u.run.stage.Disabled() {
		t.Fatal("staging is not on by default in the desktop app")
	}
	test.Tap(u.run.runBtn)
	l.until(t, "the review tab", 60*time.Second, func() bool { return u.Tabs.Selected() == u.reviewItem })
	r := u.Review().Report()
	if r.Stage == nil || r.Stage.State != report.StagePending || len(r.Changes) != 3 {
		t.Fatalf("staged run: stage %+v, %d changes", r.Stage, len(r.Changes))
	}
	wantFiles(t, ws, map[string]string{"a.txt": "old\n", "keep.txt": "keep\n", "logs/run.log": ""})
	info := uitest.RichString(u.run.stageInfo)
	t.Logf("Run tab: %s", info)
	if !strings.Contains(info, "Staged in ") || !strings.Contains(info, "stage read in ") || !strings.Contains(info, "the workspace is untouched") {
		t.Errorf("Run tab stage line %q", info)
	}
	if want := map[string]string{"overlay": "overlay", "copy": "copy"}[r.Stage.Mechanism]; want == "" || !strings.Contains(info, want) {
		t.Errorf("stage line %q does not name the mechanism %q", info, r.Stage.Mechanism)
	}
	v := u.Review()
	// The run failed (two changes are not allowed): Apply defaults to the
	// allowed change.
	if applyButton(t, v).Text != "Apply 1 change" || applyButton(t, v).Disabled() || uitest.Button(t, v, "Discard").Disabled() {
		t.Fatalf("Apply %q disabled %v, Discard disabled %v", applyButton(t, v).Text, applyButton(t, v).Disabled(), uitest.Button(t, v, "Discard").Disabled())
	}
	if stageText(v) != review.StagedText(r)+"  "+r.Stage.Mechanism+" stage" {
		t.Errorf("stage strip %q", stageText(v))
	}
	// The smallest window the app supports shows both buttons whole: the
	// strip takes no more height than that (the History tab's table sets
	// the window's minimum width, 1086 on this theme, not the review).
	if m := w.Content().MinSize(); m.Height > 700 {
		t.Errorf("the review of a staged run needs %v, higher than 700", m)
	}
	w.Resize(fyne.NewSize(1024, 700))
	size := w.Canvas().Size()
	for _, b := range []*widget.Button{applyButton(t, v), uitest.Button(t, v, "Discard")} {
		p := fyne.CurrentApp().Driver().AbsolutePositionForObject(b)
		if !b.Visible() || p.X < 0 || p.Y < 0 || p.X+b.Size().Width > size.Width || p.Y+b.Size().Height > size.Height || b.Size().Width < b.MinSize().Width {
			t.Errorf("%q at %v size %v: not whole in a %v window", b.Text, p, b.Size(), size)
		}
	}
	return u, l, w, ws
}

// answerDialog taps the button labelled answer in the dialog shown over
// o's window.
func answerDialog(t *testing.T, o fyne.CanvasObject, answer string) {
	t.Helper()
	c := fyne.CurrentApp().Driver().CanvasForObject(o)
	if c == nil || c.Overlays().Top() == nil {
		t.Fatalf("no dialog to answer %q", answer)
	}
	var b *widget.Button
	uitest.Walk(c.Overlays().Top(), func(o fyne.CanvasObject) {
		if x, ok := o.(*widget.Button); ok && x.Text == answer {
			b = x
		}
	})
	if b == nil {
		t.Fatalf("the dialog has no %q button", answer)
	}
	test.Tap(b)
}

// wantFiles checks the workspace's files: "" means absent.
func wantFiles(t *testing.T, ws string, files map[string]string) {
	t.Helper()
	for name, want := range files {
		b, err := os.ReadFile(filepath.Join(ws, name))
		switch {
		case want == "" && !os.IsNotExist(err):
			t.Errorf("%s: present (%q, %v), want absent", name, b, err)
		case want != "" && string(b) != want:
			t.Errorf("%s: %q (%v), want %q", name, b, err, want)
		}
	}
}

// drawnIn reports whether text is drawn under o, in the theme color c.
func drawnIn(o fyne.CanvasObject, text string, c fyne.ThemeColorName) bool {
	found := false
	uitest.Walk(o, func(o fyne.CanvasObject) {
		if tx, ok := o.(*canvas.Text); ok && strings.HasPrefix(tx.Text, text) && uitest.SameColor(tx.Color, style.Color(theme.Current(), c)) {
			found = true
		}
	})
	return found
}

// TestStagedApply: Apply writes the run's changes into the workspace, the
// review and the reopened run say applied, and the buttons are disabled;
// with the mechanism the probe picks, and with the copy.
func TestStagedApply(t *testing.T) {
	t.Run("probed", func(t *testing.T) { stagedApply(t, Options{}) })
	t.Run("copy", func(t *testing.T) { stagedApply(t, Options{StageMechanism: pipeline.StageCopy}) })
}

func stagedApply(t *testing.T, opts Options) {
	u, l, w, ws := stagedRun(t, opts)
	v := u.Review()
	applyScope(t, v, "All changes")
	test.Tap(applyButton(t, v))
	answerDialog(t, v, "Apply anyway") // the run failed: it asks
	l.until(t, "the apply", 30*time.Second, func() bool { return v.Report().Stage.State != report.StagePending })
	if s := v.Report().Stage.State; s != report.StageApplied {
		t.Fatalf("state %s; %s", s, uitest.WidgetText(v))
	}
	wantFiles(t, ws, map[string]string{"a.txt": "new\n", "keep.txt": "", "logs/run.log": "hi\n"})
	if !applyButton(t, v).Disabled() || !uitest.Button(t, v, "Discard").Disabled() {
		t.Error("the buttons are still enabled once applied")
	}
	if !drawnIn(w.Content(), "Applied: the changes", theme.ColorNameSuccess) {
		t.Errorf("no 'Applied' line in the success color: %q", uitest.WidgetText(v))
	}
	if !strings.HasPrefix(stageText(v), "Applied: ") {
		t.Errorf("stage strip %q", stageText(v))
	}
	// Reopened from the history: applied, nothing left to decide.
	reopen(t, u, l, u.reviewID)
	if v.Report().Stage.State != report.StageApplied || !applyButton(t, v).Disabled() || !uitest.Button(t, v, "Discard").Disabled() {
		t.Errorf("reopened: %+v, Apply disabled %v", v.Report().Stage, applyButton(t, v).Disabled())
	}
}

// TestStagedDiscard: Discard leaves the workspace untouched and removes
// the stage; the run shows discarded.
func TestStagedDiscard(t *testing.T) {
	u, l, w, ws := stagedRun(t)
	v := u.Review()
	test.Tap(uitest.Button(t, v, "Discard"))
	answerDialog(t, v, "Discard")
	l.until(t, "the discard", 30*time.Second, func() bool { return v.Report().Stage.State != report.StagePending })
	if s := v.Report().Stage.State; s != report.StageDiscarded {
		t.Fatalf("state %s; %s", s, uitest.WidgetText(v))
	}
	wantFiles(t, ws, map[string]string{"a.txt": "old\n", "keep.txt": "keep\n", "logs/run.log": ""})
	if ents, _ := os.ReadDir(u.opts.StageBase); len(ents) != 0 {
		t.Errorf("stage left behind: %v", ents)
	}
	if !applyButton(t, v).Disabled() || !uitest.Button(t, v, "Discard").Disabled() {
		t.Error("the buttons are still enabled once discarded")
	}
	if !drawnIn(w.Content(), "Discarded: the stage", theme.ColorNameError) {
		t.Errorf("no 'Discarded' line in the error color: %q", uitest.WidgetText(v))
	}
	reopen(t, u, l, u.reviewID)
	if v.Report().Stage.State != report.StageDiscarded || !applyButton(t, v).Disabled() {
		t.Errorf("reopened: %+v", v.Report().Stage)
	}
}

// TestStagedConflict: the workspace changed under a path after the run:
// Apply shows CONFLICT and applies nothing; the run stays pending (also
// when reopened from the history), and applying only the allowed change,
// which does not conflict, then works and shows partially applied.
func TestStagedConflict(t *testing.T) {
	u, l, w, ws := stagedRun(t)
	v := u.Review()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("edited meanwhile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	applyScope(t, v, "All changes")
	test.Tap(applyButton(t, v))
	answerDialog(t, v, "Apply anyway")
	l.until(t, "the conflict", 30*time.Second, func() bool { return strings.Contains(uitest.WidgetText(v), "CONFLICT") })
	if !strings.Contains(uitest.WidgetText(v), "CONFLICT a.txt") || !strings.Contains(uitest.WidgetText(v), "Nothing applied") {
		t.Errorf("stage note %q", uitest.WidgetText(v))
	}
	if !drawnIn(w.Content(), "CONFLICT a.txt", theme.ColorNameError) {
		t.Error("the CONFLICT line is not drawn in the error color")
	}
	wantFiles(t, ws, map[string]string{"a.txt": "edited meanwhile\n", "keep.txt": "keep\n", "logs/run.log": ""})
	if v.Report().Stage.State != report.StagePending || applyButton(t, v).Disabled() || uitest.Button(t, v, "Discard").Disabled() {
		t.Fatalf("after a conflict: %+v, Apply disabled %v", v.Report().Stage, applyButton(t, v).Disabled())
	}

	// Reopened from the History tab: still pending, still decidable.
	id := u.reviewID
	showHistory(t, u, l)
	u.history.list.Select(u.history.indexOf(id))
	pending := "pending: nothing is in the workspace yet"
	if s := review.StagedText(v.Report()); !strings.HasPrefix(s, "Staged:") { // not contained here (a chroot)
		pending = "pending: " + s
	}
	l.until(t, "the run's detail", 5*time.Second, func() bool {
		return strings.Contains(uitest.WidgetText(u.history.detail), pending)
	})
	shown := v.Report()
	u.history.list.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	opened(t, u, l, shown)
	if u.Tabs.Selected() != u.reviewItem || u.reviewID != id {
		t.Fatalf("Enter on the run: tab %s, run %d", u.Tabs.Selected().Text, u.reviewID)
	}
	if v.Report().Stage == nil || v.Report().Stage.State != report.StagePending || applyButton(t, v).Disabled() {
		t.Fatalf("reopened: %+v", v.Report().Stage)
	}
	applyScope(t, v, "Only allowed changes")
	if applyButton(t, v).Text != "Apply 1 change" {
		t.Errorf("only allowed: %q", applyButton(t, v).Text)
	}
	test.Tap(applyButton(t, v))
	l.until(t, "the apply", 30*time.Second, func() bool { return v.Report().Stage.State != report.StagePending })
	if s := v.Report().Stage.State; s != report.StagePartiallyApplied {
		t.Fatalf("state %s; %s", s, uitest.WidgetText(v))
	}
	wantFiles(t, ws, map[string]string{"a.txt": "edited meanwhile\n", "keep.txt": "keep\n", "logs/run.log": "hi\n"})
	if !strings.HasPrefix(stageText(v), "Partially applied") || !drawnIn(w.Content(), "Partially applied", theme.ColorNameSuccess) {
		t.Errorf("stage strip %q", stageText(v))
	}
}

// applyButton is the stage strip's Apply button.
func applyButton(t *testing.T, v fyne.CanvasObject) *widget.Button {
	t.Helper()
	return uitest.ButtonWithPrefix(t, v, "Apply ")
}

// stageText is the stage strip's state line ("" when the strip is hidden).
func stageText(v fyne.CanvasObject) string {
	return uitest.RichTextWhere(v, func(s string) bool { return strings.HasSuffix(s, " stage") })
}

// applyScope chooses what Apply applies, as the strip's choice does.
func applyScope(t *testing.T, v fyne.CanvasObject, scope string) {
	t.Helper()
	uitest.Find(t, v, "apply scope", func(s *widget.Select) bool { return slices.Contains(s.Options, scope) }).SetSelected(scope)
}
