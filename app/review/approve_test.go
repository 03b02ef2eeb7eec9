package review

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
)

// approvalQuestion is the text of the question asked before approving an
// allowlist the run still fails with ("" when none is shown), and its
// buttons.
func approvalQuestion(c fyne.Canvas) (text string, yes, no *widget.Button) {
	top := c.Overlays().Top()
	if top == nil {
		return "", nil, nil
	}
	var b strings.Builder
	uitest.Walk(top, func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Label:
			b.WriteString(x.Text + " ")
		case *widget.Button:
			switch x.Text {
			case "Approve anyway":
				yes = x
			case "Cancel":
				no = x
			}
		}
	})
	for _, tx := range uitest.Texts(top) {
		if tx.Text == approvalTitle {
			return b.String(), yes, no
		}
	}
	return "", nil, nil
}

// confirmApproval taps Approve anyway in the approval question.
func confirmApproval(t *testing.T, c fyne.Canvas) {
	t.Helper()
	_, yes, _ := approvalQuestion(c)
	if yes == nil {
		t.Fatal("no approval question")
	}
	test.Tap(yes)
}

// TestApproveAsksWhenTheRunStillFails: approving a draft that leaves
// violations, or on a run that failed for reasons no allowlist allows, asks
// first and says why; Cancel approves nothing. A draft that makes the run
// pass is approved at once.
func TestApproveAsksWhenTheRunStillFails(t *testing.T) {
	var approved [][]string
	opts := Options{OnApprove: func(_ *report.Report, a []string, _ string) error {
		approved = append(approved, a)
		return nil
	}}
	v, w := newTestView(t, cleanReport(), opts)
	c := w.Canvas()
	n := v.Report().Count().Violations
	test.Tap(v.side.approveBtn)
	text, _, no := approvalQuestion(c)
	if !strings.Contains(text, count.Grouped(n, "change")+" the draft does not allow") || strings.Contains(text, "no allowlist allows") {
		t.Errorf("question for %d violations: %q", n, text)
	}
	test.Tap(no)
	if len(approved) != 0 || v.Decision() != "" {
		t.Fatalf("Cancel approved %v (%q)", approved, v.Decision())
	}
	// A second Approve while the question is open asks once.
	test.Tap(v.side.approveBtn)
	test.Tap(v.side.approveBtn)
	if k := len(c.Overlays().List()); k != 1 {
		t.Errorf("%d dialogs after two taps", k)
	}
	confirmApproval(t, c)
	if len(approved) != 1 || !strings.HasPrefix(v.Decision(), "Approved at ") {
		t.Fatalf("Approve anyway: %v %q", approved, v.Decision())
	}

	// Every change allowed, but the script exited 3 and left a process.
	r := cleanReport()
	r.Process.ExitCode = 3
	r.Process.Leftovers = []report.Leftover{{PID: 42, Cmd: "sleep 300"}}
	v.SetReport(r)
	v.Editor().appendAll(policy.Suggest(v.Report().Changes)) // allow every violation
	if v.Report().Count().Violations != 0 {
		t.Fatal("the suggestion leaves violations")
	}
	test.Tap(v.side.approveBtn)
	text, _, _ = approvalQuestion(c)
	if !strings.Contains(text, "script exited 3, 1 leftover process: no allowlist allows these") || strings.Contains(text, "the draft does not allow") {
		t.Errorf("question for a process failure: %q", text)
	}
	confirmApproval(t, c)
	if len(approved) != 2 {
		t.Fatalf("approved %d times", len(approved))
	}

	// A draft that passes the run: no question.
	v.SetReport(cleanReport())
	v.Editor().appendAll(policy.Suggest(v.Report().Changes)) // allow every violation
	test.Tap(v.side.approveBtn)
	if text, _, _ := approvalQuestion(c); text != "" || len(approved) != 3 {
		t.Errorf("a passing draft: question %q, %d approvals", text, len(approved))
	}
}
