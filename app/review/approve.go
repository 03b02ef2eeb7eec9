package review

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
)

// approvalTitle is the title of the dialog that asks before an allowlist
// is approved on a run it does not make pass.
const approvalTitle = "Approve an allowlist the run still fails with?"

// stillFails says why r (with the draft applied) still fails, for the
// reviewer about to approve the draft: the violations the draft leaves,
// and the reasons no allowlist can allow (the process, containment,
// unreadable entries). "" when r passes.
func stillFails(r *report.Report) string {
	if r == nil || r.Verdict != report.Fail {
		return ""
	}
	n, other := Uncovered(r)
	var lines []string
	if n > 0 {
		lines = append(lines, "• "+count.Grouped(n, "change")+" the draft does not allow.")
	}
	if len(other) > 0 {
		lines = append(lines, "• "+strings.Join(other, ", ")+": no allowlist allows "+thisOrThese(len(other))+
			"; the run stays failed whatever is approved.")
	}
	return "The run fails with this allowlist:\n" + strings.Join(lines, "\n") +
		"\n\nApproving saves the allowlist as the workspace's next version, which later runs start from."
}

// Uncovered splits why r fails (as evaluated with its allowlist): the
// changes its allowlist does not allow, and the reasons no allowlist can
// allow (the script's exit, leftover processes, blocked actions, changes
// outside the workspace, unreadable entries), as the verdict words them.
func Uncovered(r *report.Report) (changes int, other []string) {
	rest := *r // r's own outcome without its changes
	rest.Changes = nil
	rest.Evaluate()
	return r.Count().Violations, rest.Reasons
}

// thisOrThese is "this" for one thing, "these" for more.
func thisOrThese(n int) string {
	if n == 1 {
		return "this"
	}
	return "these"
}

// confirmApproval calls approve at once when the draft makes the run pass,
// and otherwise after the reviewer confirms, in a dialog saying why it
// still fails.
func (v *View) confirmApproval(approve func()) {
	if v.side.confirm != nil {
		return // already asked
	}
	why := stillFails(v.r)
	w := windowOf(v)
	if why == "" || w == nil {
		approve()
		return
	}
	msg := widget.NewLabel(why)
	msg.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm(approvalTitle, "Approve anyway", "Cancel", msg, func(ok bool) {
		if ok {
			approve()
		}
	}, w)
	d.SetOnClosed(func() { v.side.confirm = nil })
	keys.For(v).Modal(d) // Escape cancels
	v.side.confirm = d
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
