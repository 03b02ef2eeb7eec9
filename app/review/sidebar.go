package review

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
)

// sidebar is the right pane: the draft allowlist editor, Suggest and
// Reset, the note with Approve and Reject, the decision line, and the
// export buttons with the line saying where the last export went.
type sidebar struct {
	editor                          *AllowlistEditor
	note                            *keys.Entry
	approveBtn, rejectBtn, resetBtn *widget.Button
	suggestBtn                      *widget.Button
	decision                        *widget.RichText
	decisionSeq                     int // counts SetDecision calls
	exportBtns                      map[Format]*widget.Button
	exported                        *exported
	confirm                         dialog.Dialog  // the approval question while it is asked
	suggest                         *suggestDialog // the Suggest allowlist dialog while it is shown
	root                            *fyne.Container
}

func newSidebar(v *View) *sidebar {
	s := &sidebar{}
	s.editor = NewAllowlistEditor()
	s.editor.setOnEscape(v.focusChanges)
	s.editor.OnChanged = func(entries []string, problems []Problem) { v.applyDraft(entries) }
	s.note = keys.NewMultiLineEntry()
	s.note.OnEscape = v.focusChanges
	s.note.SetPlaceHolder("Note for the record (why these changes are fine)")
	s.note.SetMinRowsVisible(1) // it scrolls; the window must fit 1024×700
	s.note.Wrapping = fyne.TextWrapWord
	s.approveBtn = widget.NewButtonWithIcon("Approve allowlist", theme.ConfirmIcon(), v.approve)
	s.approveBtn.Importance = widget.SuccessImportance
	s.rejectBtn = widget.NewButtonWithIcon("Reject", theme.CancelIcon(), v.reject)
	s.rejectBtn.Importance = widget.DangerImportance
	s.resetBtn = widget.NewButtonWithIcon("Reset", theme.ContentUndoIcon(), func() { // to the run's allowlist
		s.editor.SetEntries(v.original)
	})
	s.resetBtn.Importance = widget.LowImportance
	s.suggestBtn = widget.NewButtonWithIcon("Suggest allowlist", theme.ContentAddIcon(), func() { v.suggestAllowlist() })
	s.decision = widget.NewRichText()
	s.decision.Wrapping = fyne.TextWrapWord
	s.decision.Hide() // until there is a decision to show (saves a row)
	s.exported = newExported(v.opts.OpenFolder)
	exports := s.exportButtons(v)

	sideTitle := styledText("Allowlist", "", theme.SizeNameSubHeadingText, fyne.TextStyle{Bold: true})
	sideHint := widget.NewRichText(&widget.TextSegment{Text: "One entry per line; an edit re-evaluates, nothing reruns.",
		Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText}})
	sideHint.Wrapping = fyne.TextWrapWord
	var center fyne.CanvasObject = s.editor
	if v.opts.ReadOnly {
		center = layout.NewSpacer()
		s.editor.Disable()
	}
	s.root = container.NewBorder(container.NewVBox(style.Tight(sideTitle), style.Tight(sideHint)), s.bottom(v.opts, exports), nil, nil, center)
	return s
}

// exportButtons makes a button for each format, which exports the report
// through Options.Export.
func (s *sidebar) exportButtons(v *View) []fyne.CanvasObject {
	s.exportBtns = map[Format]*widget.Button{}
	var exports []fyne.CanvasObject
	for _, f := range formats {
		b := widget.NewButtonWithIcon(f.Label(), theme.DocumentSaveIcon(), func() {
			if v.opts.Export != nil && v.r != nil {
				v.opts.Export(v.exportReport(), f)
			}
		})
		if !f.available() {
			b.Disable()
		}
		s.exportBtns[f] = b
		exports = append(exports, b)
	}
	return exports
}

// bottom is what goes under the editor: Suggest and Reset, the note and
// the decision buttons (those the host takes), the decision line and the
// exports; a read-only view has the exports only.
func (s *sidebar) bottom(opts Options, exports []fyne.CanvasObject) *fyne.Container {
	var b *fyne.Container
	if opts.ReadOnly {
		b = container.NewVBox()
	} else {
		// Reset (to the run's allowlist) shares Suggest's row: the
		// window must fit 1024×700.
		b = container.NewVBox(container.NewBorder(nil, nil, nil, s.resetBtn, s.suggestBtn))
		if opts.OnApprove != nil || opts.OnReject != nil {
			b.Add(s.note)
			b.Add(container.NewGridWithColumns(2, s.approveBtn, s.rejectBtn))
			if opts.OnApprove == nil {
				s.approveBtn.Hide()
			}
			if opts.OnReject == nil {
				s.rejectBtn.Hide()
			}
		}
		b.Add(style.Tight(s.decision))
	}
	if opts.Export != nil {
		exportTitle := styledText("Export report", style.Muted, theme.SizeNameCaptionText, fyne.TextStyle{Bold: true})
		b.Add(widget.NewSeparator())
		b.Add(style.Tight(exportTitle))
		b.Add(container.NewGridWithColumns(3, exports...))
		b.Add(s.exported.root)
	}
	return b
}

// Allow appends entry to the draft allowlist and re-evaluates the verdict.
func (v *View) Allow(entry string) {
	v.side.editor.Append(entry)
}

// applyDraft re-evaluates the report against the valid draft entries.
func (v *View) applyDraft(entries []string) {
	if v.r == nil {
		return
	}
	p, err := policy.Parse(entries)
	if err != nil { // entries were validated one by one; cannot happen
		return
	}
	v.r.Apply(p, entries)
	v.banner.Refresh()
	v.keepOpen()
	v.refilter()
	if v.sel >= 0 {
		v.detail.show(v.sel)
	}
	v.updateButtons()
	if v.opts.OnDraftChanged != nil {
		v.opts.OnDraftChanged(entries)
	}
}

func (v *View) updateButtons() {
	problems := len(v.side.editor.Problems())
	if v.r == nil || problems > 0 {
		v.side.approveBtn.Disable()
	} else {
		v.side.approveBtn.Enable()
	}
	if v.r == nil {
		v.side.rejectBtn.Disable()
	} else {
		v.side.rejectBtn.Enable()
	}
	if v.r == nil || v.r.Count().Violations == 0 {
		v.side.suggestBtn.Disable()
	} else {
		v.side.suggestBtn.Enable()
	}
	if slices.Equal(v.side.editor.Entries(), v.original) && problems == 0 {
		v.side.resetBtn.Hide()
	} else {
		v.side.resetBtn.Show()
	}
}

// Approve approves the draft allowlist, as the Approve button does (a
// no-op when it is disabled or hidden).
func (v *View) Approve() {
	if v.side.approveBtn.Disabled() || !v.side.approveBtn.Visible() {
		return
	}
	v.approve()
}

func (v *View) approve() {
	if v.opts.OnApprove == nil || v.r == nil {
		return
	}
	v.confirmApproval(v.saveApproval)
}

// saveApproval hands the draft to the host and says what was saved.
func (v *View) saveApproval() {
	if v.r == nil {
		return
	}
	entries := v.side.editor.Entries()
	seq := v.side.decisionSeq
	if err := v.opts.OnApprove(v.r, entries, strings.TrimSpace(v.side.note.Text)); err != nil {
		v.setDecision("Could not save: "+err.Error(), style.FailColor)
		return
	}
	v.original = entries
	v.decided = report.Approved
	v.updateButtons()
	if v.side.decisionSeq == seq { // the host did not say more (SetDecision)
		v.setDecision(fmt.Sprintf("Approved at %s: allowlist with %s saved.", time.Now().Format("15:04"), count.Grouped(len(entries), "entry")), style.PassColor)
	}
}

// reject records the rejection; a run whose stage is pending asks first
// and then discards the stage (a rejected run's changes must not stay one
// click from the workspace).
func (v *View) reject() {
	if v.opts.OnReject == nil || v.r == nil {
		return
	}
	if v.stage.pending() {
		v.stage.ask(rejectTitle, fmt.Sprintf("Rejecting records your decision and removes the %s of this run; the workspace stays as it is.",
			count.Grouped(len(v.r.Changes), "staged change")), "Reject and discard", func() {
			if v.saveRejection() {
				v.stage.discardNow()
			}
		})
		return
	}
	v.saveRejection()
}

// saveRejection hands the rejection to the host and says what was saved.
func (v *View) saveRejection() bool {
	seq := v.side.decisionSeq
	if err := v.opts.OnReject(v.r, strings.TrimSpace(v.side.note.Text)); err != nil {
		v.setDecision("Could not save: "+err.Error(), style.FailColor)
		return false
	}
	v.decided = report.Rejected
	if v.side.decisionSeq == seq {
		v.setDecision("Rejected at "+time.Now().Format("15:04")+".", style.FailColor)
	}
	v.stage.update() // Apply is off once rejected
	return true
}

// SetDecision shows text (in the named color) on the decision line under
// the Approve and Reject buttons: a host uses it to say what an earlier
// review decided when it reopens a run, or, from inside OnApprove or
// OnReject, what exactly was saved (the default message is then skipped).
// SetReport clears it.
func (v *View) SetDecision(text string, c fyne.ThemeColorName) {
	v.side.decisionSeq++
	v.setDecision(text, c)
}

// SetDecided says what an earlier review decided on the report shown
// (report.Approved, report.Rejected or ""), as a host that reopens a run
// knows it: a rejected run's pending stage is not offered for Apply.
func (v *View) SetDecided(decision string) {
	v.decided = decision
	v.stage.update()
}

func (v *View) setDecision(text string, c fyne.ThemeColorName) {
	v.side.decision.Show()
	v.side.decision.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Bold: true}}}}
	v.side.decision.Refresh()
}

// Decision is the last approve/reject status line shown ("" if none).
func (v *View) Decision() string { return segmentsText(v.side.decision) }
