package review

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
)

// TestStageHiddenWithoutHost: the browser build passes no OnApply, so a
// staged report shows no Apply or Discard button; nor does a direct run.
func TestStageHiddenWithoutHost(t *testing.T) {
	staged := DemoReport()
	staged.Stage = &report.Stage{Mechanism: "overlay", State: report.StagePending}
	_, w := newTestView(t, staged, Options{})
	for _, s := range []string{"Discard", "Staged: nothing is in the workspace until you apply."} {
		if len(findText(w.Content(), s)) != 0 {
			t.Errorf("%q drawn without a host that stages", s)
		}
	}
	_, w2 := newTestView(t, DemoReport(), Options{OnApply: func(*report.Report, ApplyRequest, func(string, error)) {}})
	if len(findText(w2.Content(), "Discard")) != 0 {
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
		if v.ApplyButton().Text != label {
			t.Errorf("Apply button %q, want %q", v.ApplyButton().Text, label)
		}
		oneText(t, w.Content(), label)
	}
	want("Apply " + plural(n, "change"))
	if v.StageText() != "Staged: nothing is in the workspace until you apply.  copy stage" {
		t.Errorf("stage strip %q", v.StageText())
	}
	wantColor(t, "pending line", oneText(t, w.Content(), "Staged: nothing is in the workspace until you apply.").Color, theme.ColorNameWarning)

	// A conflict: listed, nothing changes state, the buttons stay usable.
	answerErr = &ConflictError{Conflicts: []Conflict{{Path: "config.json", Reason: "content"}}}
	test.Tap(v.ApplyButton())
	if !strings.Contains(v.StageNote(), "CONFLICT config.json (content)") || !strings.Contains(v.StageNote(), "Nothing applied") {
		t.Errorf("stage note after a conflict:\n%s", v.StageNote())
	}
	wantColor(t, "CONFLICT line", oneText(t, w.Content(), "CONFLICT config.json (content)").Color, theme.ColorNameError)
	if v.ApplyButton().Disabled() || v.DiscardButton().Disabled() || r.Stage.State != report.StagePending {
		t.Error("a conflict left the stage undecidable")
	}

	v.SetApplyScope(ScopeAllowed)
	want("Apply " + plural(allowed, "change"))
	answerErr, answer = nil, report.StagePartiallyApplied
	test.Tap(v.ApplyButton())
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
	if !v.ApplyButton().Disabled() || !v.DiscardButton().Disabled() {
		t.Error("buttons still enabled once applied")
	}
	if !strings.HasPrefix(v.StageText(), "Partially applied") {
		t.Errorf("after apply: %q", v.StageText())
	}
	wantColor(t, "state line", oneText(t, w.Content(), "Partially applied: only the chosen changes were written into the workspace.").Color, theme.ColorNameSuccess)

	// The filter's subset, then a discard on a fresh stage.
	r.Stage = &report.Stage{Mechanism: "overlay", State: report.StagePending}
	v.SetReport(r)
	v.search.SetText("config")
	v.SetApplyScope(ScopeShown)
	shown := len(v.Shown())
	if shown == 0 || shown == n {
		t.Fatalf("filter shows %d of %d", shown, n)
	}
	want("Apply " + plural(shown, "change"))
	test.Tap(v.DiscardButton())
	if !strings.Contains(v.StageNote(), "Discarded") || !v.ApplyButton().Disabled() {
		t.Errorf("after discard: %q", v.StageNote())
	}
}
