package review

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
)

// TestStageHiddenWithoutHost: the browser build passes no OnApply, so a
// staged report shows no Apply or Discard button; nor does a direct run.
func TestStageHiddenWithoutHost(t *testing.T) {
	staged := DemoReport()
	staged.Stage = &report.Stage{Mechanism: "overlay", State: report.StagePending}
	_, w := newTestView(t, staged, Options{})
	for _, s := range []string{"Discard", "Staged: nothing is in the workspace until you apply."} {
		if len(uitest.TextsReading(w.Content(), s)) != 0 {
			t.Errorf("%q drawn without a host that stages", s)
		}
	}
	_, w2 := newTestView(t, DemoReport(), Options{OnApply: func(*report.Report, ApplyRequest, func(string, error)) {}})
	if len(uitest.TextsReading(w2.Content(), "Discard")) != 0 {
		t.Error("Discard drawn for a run that was not staged")
	}
}

// TestStageApplyScopes: the Apply button counts what the chosen scope
// applies and hands exactly those paths to the host; the outcome disables
// the buttons and shows the state in the block and the banner.
func TestStageApplyScopes(t *testing.T) {
	var got []ApplyRequest
	var answer string
	var answerErr error
	opts := Options{
		OnApply: func(r *report.Report, req ApplyRequest, done func(string, error)) {
			got = append(got, req)
			done(answer, answerErr)
		},
		OnDiscard: func(r *report.Report, done func(string, error)) { done(report.StageDiscarded, nil) },
	}
	r := DemoReport()
	r.Stage = &report.Stage{Mechanism: "copy", State: report.StagePending}
	v, w := newTestView(t, r, opts)
	n := len(r.Changes)
	allowed := r.Count().Allowed
	if allowed == 0 || allowed == n {
		t.Fatalf("demo report: %d allowed of %d", allowed, n)
	}
	want := func(label string) {
		t.Helper()
		if v.applyButton().Text != label {
			t.Errorf("Apply button %q, want %q", v.applyButton().Text, label)
		}
		uitest.OneText(t, w.Content(), label)
	}
	// The demo run failed: Apply defaults to the allowed changes.
	want("Apply " + count.Grouped(allowed, "change"))
	if v.stage.scope.Selected != "Only allowed changes" {
		t.Errorf("default scope of a failed run %q", v.stage.scope.Selected)
	}
	v.setApplyScope(scopeAll)
	want("Apply " + count.Grouped(n, "change"))
	if v.stageText() != "Staged: nothing is in the workspace until you apply.  copy stage" {
		t.Errorf("stage strip %q", v.stageText())
	}
	wantColor(t, "pending line", uitest.OneText(t, w.Content(), "Staged: nothing is in the workspace until you apply.").Color, theme.ColorNameWarning)

	// A conflict: listed, nothing changes state, the buttons stay usable.
	answerErr = &ConflictError{Conflicts: []Conflict{{Path: "config.json", Reason: "content"}}}
	test.Tap(v.applyButton())
	answerQuestion(t, w.Canvas(), applyFailedTitle, "Apply anyway")
	if !strings.Contains(v.stageNote(), "CONFLICT config.json (content)") || !strings.Contains(v.stageNote(), "Nothing applied") {
		t.Errorf("stage note after a conflict:\n%s", v.stageNote())
	}
	wantColor(t, "CONFLICT line", uitest.OneText(t, w.Content(), "CONFLICT config.json (content)").Color, theme.ColorNameError)
	if v.applyButton().Disabled() || v.discardButton().Disabled() || r.Stage.State != report.StagePending {
		t.Error("a conflict left the stage undecidable")
	}

	v.setApplyScope(scopeAllowed)
	want("Apply " + count.Grouped(allowed, "change"))
	answerErr, answer = nil, report.StagePartiallyApplied
	test.Tap(v.applyButton())
	req := got[len(got)-1]
	if !req.OnlyAllowed || !req.Partial || len(req.Paths) != allowed {
		t.Errorf("only-allowed request %+v", req)
	}
	for _, p := range req.Paths {
		i := slices.IndexFunc(r.Changes, func(c diff.Change) bool { return c.Path == p })
		if i < 0 || !r.Changes[i].Allowed {
			t.Errorf("applied %s, not an allowed change", p)
		}
	}
	if !v.applyButton().Disabled() || !v.discardButton().Disabled() {
		t.Error("buttons still enabled once applied")
	}
	if !strings.HasPrefix(v.stageText(), "Partially applied") {
		t.Errorf("after apply: %q", v.stageText())
	}
	wantColor(t, "state line", uitest.OneText(t, w.Content(), "Partially applied: only the chosen changes were written into the workspace.").Color, theme.ColorNameSuccess)

	// The filter's subset, then a discard on a fresh stage.
	r.Stage = &report.Stage{Mechanism: "overlay", State: report.StagePending}
	v.SetReport(r)
	v.filters.search.SetText("config")
	v.setApplyScope(scopeShown)
	shown := len(v.shownRows())
	if shown == 0 || shown == n {
		t.Fatalf("filter shows %d of %d", shown, n)
	}
	want("Apply " + count.Grouped(shown, "change"))
	test.Tap(v.discardButton())
	answerQuestion(t, w.Canvas(), discardTitle, "Discard")
	if !strings.Contains(v.stageNote(), "Discarded") || !v.applyButton().Disabled() {
		t.Errorf("after discard: %q", v.stageNote())
	}
}

// question is the text of the open dialog titled title ("" when none is
// shown) and its buttons by label.
func question(c fyne.Canvas, title string) (string, map[string]*widget.Button) {
	top := c.Overlays().Top()
	if top == nil {
		return "", nil
	}
	titled := false
	for _, tx := range uitest.Texts(top) {
		if tx.Text == title {
			titled = true
		}
	}
	if !titled {
		return "", nil
	}
	var b strings.Builder
	buttons := map[string]*widget.Button{}
	uitest.Walk(top, func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Label:
			b.WriteString(x.Text + " ")
		case *widget.Button:
			buttons[x.Text] = x
		}
	})
	return b.String(), buttons
}

// answerQuestion taps the button labelled answer in the dialog titled
// title, and returns the dialog's text.
func answerQuestion(t *testing.T, c fyne.Canvas, title, answer string) string {
	t.Helper()
	text, buttons := question(c, title)
	if buttons[answer] == nil {
		t.Fatalf("no question %q with %q (overlay text %q)", title, answer, text)
	}
	test.Tap(buttons[answer])
	return text
}

// stagedFail is the demo run (it failed its gate) with a pending stage,
// in a view whose host records each apply, discard and reject.
func stagedFail(t *testing.T) (*View, fyne.Window, *[]ApplyRequest, *[]string) {
	var applied []ApplyRequest
	var events []string
	opts := Options{
		OnApply: func(r *report.Report, req ApplyRequest, done func(string, error)) {
			applied = append(applied, req)
			events = append(events, "apply")
			done(report.StageApplied, nil)
		},
		OnDiscard: func(r *report.Report, done func(string, error)) {
			events = append(events, "discard")
			done(report.StageDiscarded, nil)
		},
		OnReject: func(r *report.Report, note string) error {
			events = append(events, "reject")
			return nil
		},
	}
	r := DemoReport()
	r.Stage = &report.Stage{Mechanism: "copy", State: report.StagePending}
	v, w := newTestView(t, r, opts)
	return v, w, &applied, &events
}

// On a failed run, Apply of all the changes asks first, naming the
// changes the allowlist did not allow; Cancel applies nothing, Apply
// anyway hands the host a forced request. The allowed changes (the
// default) apply without a question and unforced.
func TestStageApplyFailedRunAsks(t *testing.T) {
	v, w, applied, _ := stagedFail(t)
	c := w.Canvas()
	r := v.Report()
	if applyScope(v.stage.scope.SelectedIndex()) != scopeAllowed {
		t.Fatalf("default scope %q on a failed run", v.stage.scope.Selected)
	}
	v.setApplyScope(scopeAll)
	test.Tap(v.applyButton())
	text, buttons := question(c, applyFailedTitle)
	if buttons["Cancel"] == nil {
		t.Fatalf("Apply of all the changes of a failed run asked nothing (applied %v)", *applied)
	}
	for _, ch := range r.Changes {
		if named := strings.Contains(text, "• "+ch.Path); named == ch.Allowed {
			t.Errorf("%s (allowed %v) named %v in %q", ch.Path, ch.Allowed, named, text)
		}
	}
	if !strings.Contains(text, "5 of them not allowed by the run's allowlist") || !strings.Contains(text, "records this apply as forced") {
		t.Errorf("question %q", text)
	}
	test.Tap(buttons["Cancel"])
	if len(*applied) != 0 || r.Stage.State != report.StagePending || v.applyButton().Disabled() {
		t.Fatalf("Cancel applied %v", *applied)
	}
	// Asked again: Apply anyway.
	test.Tap(v.applyButton())
	answerQuestion(t, c, applyFailedTitle, "Apply anyway")
	if len(*applied) != 1 || !(*applied)[0].Forced || len((*applied)[0].Paths) != len(r.Changes) {
		t.Fatalf("applied %+v", *applied)
	}

	// The default scope: no question, not forced.
	v2, w2, applied2, _ := stagedFail(t)
	test.Tap(v2.applyButton())
	if text, _ := question(w2.Canvas(), applyFailedTitle); text != "" {
		t.Errorf("asked for the allowed changes: %q", text)
	}
	if len(*applied2) != 1 || (*applied2)[0].Forced || !(*applied2)[0].OnlyAllowed {
		t.Errorf("applied %+v", *applied2)
	}
}

// Discard asks; Cancel keeps the stage.
func TestStageDiscardAsks(t *testing.T) {
	v, w, _, events := stagedFail(t)
	test.Tap(v.discardButton())
	if len(*events) != 0 {
		t.Fatalf("Discard without a question: %v", *events)
	}
	answerQuestion(t, w.Canvas(), discardTitle, "Cancel")
	if len(*events) != 0 || v.Report().Stage.State != report.StagePending {
		t.Fatalf("Cancel discarded: %v", *events)
	}
	test.Tap(v.discardButton())
	answerQuestion(t, w.Canvas(), discardTitle, "Discard")
	if !slices.Equal(*events, []string{"discard"}) || v.Report().Stage.State != report.StageDiscarded {
		t.Errorf("events %v, state %s", *events, v.Report().Stage.State)
	}
}

// Reject on a pending stage asks, then records the rejection and discards
// the stage; Apply is no longer offered. A rejected run reopened with its
// stage still pending has Apply off, with the reason.
func TestRejectDiscardsStage(t *testing.T) {
	v, w, _, events := stagedFail(t)
	test.Tap(v.side.rejectBtn)
	if len(*events) != 0 {
		t.Fatalf("Reject without a question: %v", *events)
	}
	text := answerQuestion(t, w.Canvas(), rejectTitle, "Reject and discard")
	if !strings.Contains(text, "removes the 7 staged changes") {
		t.Errorf("question %q", text)
	}
	if !slices.Equal(*events, []string{"reject", "discard"}) || v.Report().Stage.State != report.StageDiscarded {
		t.Errorf("events %v, state %s", *events, v.Report().Stage.State)
	}
	if !v.applyButton().Disabled() {
		t.Error("Apply enabled after Reject")
	}

	// Reopened rejected, the stage still pending.
	v2, _, _, events2 := stagedFail(t)
	v2.SetDecided(report.Rejected)
	if !v2.applyButton().Disabled() || v2.discardButton().Disabled() || !strings.HasPrefix(v2.stageText(), "Rejected: Apply is off") {
		t.Errorf("rejected run: Apply disabled %v, Discard disabled %v, strip %q", v2.applyButton().Disabled(), v2.discardButton().Disabled(), v2.stageText())
	}
	test.Tap(v2.applyButton())
	if len(*events2) != 0 {
		t.Errorf("a rejected run applied: %v", *events2)
	}
}
