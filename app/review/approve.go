package review

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/core/report"
)

// ApprovalTitle is the title of the dialog that asks before an allowlist
// is approved on a run it does not make pass.
const ApprovalTitle = "Approve an allowlist the run still fails with?"

// StillFails says why r (with the draft applied) still fails, for the
// reviewer about to approve the draft: the violations the draft leaves,
// and the reasons no allowlist can allow (the process, containment,
// unreadable entries). "" when r passes.
func StillFails(r *report.Report) string {
	if r == nil || r.Verdict != report.Fail {
		return ""
	}
	// The reasons that are not about the workspace's changes: r's own
	// outcome without its changes.
	rest := *r
	rest.Changes = nil
	rest.Evaluate()
	var lines []string
	if n := r.Count().Violations; n > 0 {
		lines = append(lines, "• "+plural(n, "change")+" the draft does not allow.")
	}
	if len(rest.Reasons) > 0 {
		lines = append(lines, "• "+strings.Join(rest.Reasons, ", ")+": no allowlist allows "+
			map[bool]string{true: "this", false: "these"}[len(rest.Reasons) == 1]+
			"; the run stays failed whatever is approved.")
	}
	return "The run fails with this allowlist:\n" + strings.Join(lines, "\n") +
		"\n\nApproving saves the allowlist as the workspace's next version, which later runs start from."
}

// confirmApproval calls approve at once when the draft makes the run pass,
// and otherwise after the reviewer confirms, in a dialog saying why it
// still fails.
func (v *View) confirmApproval(approve func()) {
	if v.confirm != nil {
		return // already asked
	}
	why := StillFails(v.r)
	w := windowOf(v)
	if why == "" || w == nil {
		approve()
		return
	}
	msg := widget.NewLabel(why)
	msg.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm(ApprovalTitle, "Approve anyway", "Cancel", msg, func(ok bool) {
		if ok {
			approve()
		}
	}, w)
	d.SetOnClosed(func() { v.confirm = nil })
	v.confirm = d
	d.Show()
	d.Resize(fyne.NewSize(min(560, w.Canvas().Size().Width-40), d.MinSize().Height))
}

// windowOf is the window showing o (nil when none does).
func windowOf(o fyne.CanvasObject) fyne.Window {
	app := fyne.CurrentApp()
	if app == nil {
		return nil
	}
	c := app.Driver().CanvasForObject(o)
	for _, w := range app.Driver().AllWindows() {
		if w.Canvas() == c {
			return w
		}
	}
	return nil
}
