package review

import (
	"slices"

	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
)

// SetApproved shows a reopened run with the allowlist version its review
// approved: the draft holds entries (Reset returns to them) and the banner
// the verdict they give. The host says on the decision line (SetDecision)
// what the run's own verdict was and when the version was approved.
func (v *View) SetApproved(entries []string) {
	if v.r == nil {
		return
	}
	v.original = slices.Clone(entries)
	v.decided = report.Approved
	v.side.editor.SetEntries(entries) // re-evaluates (applyDraft)
	v.updateButtons()
}

// StagedText is the line for a staged run whose changes wait to be
// applied. A stage holds only the workspace: when the script changed
// something outside it, or was not contained (so it could have), the line
// says that this already happened or may have, never that nothing happened.
func StagedText(r *report.Report) string {
	switch ct := r.Containment; {
	case len(r.Outside) > 0:
		return "Staged, but " + count.Grouped(len(r.Outside), "change") + " outside already happened: only the workspace waits for Apply."
	case ct != nil && !ct.Contained:
		return "Staged, but not contained: only the workspace waits for Apply."
	}
	return "Staged: nothing is in the workspace until you apply."
}

// ExportButton is the Export button of format f (nil when there is none).
func (v *View) ExportButton(f Format) *widget.Button { return v.side.exportBtns[f] }
