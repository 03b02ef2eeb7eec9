package review

import (
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// applyScope is what Apply applies.
type applyScope int

// Scopes, in the order of the scope choice.
const (
	scopeAll     applyScope = iota // every change of the run
	scopeAllowed                   // only the changes the allowlist allows
	scopeShown                     // only the changes the filter shows
)

var scopeLabels = []string{"All changes", "Only allowed changes", "Only the changes shown"}

// ApplyRequest is what the reviewer chose to apply.
type ApplyRequest struct {
	// OnlyAllowed is set for ScopeAllowed while the draft allowlist is
	// the run's own (Paths are then exactly the changes the run allowed).
	OnlyAllowed bool
	// Partial is set when Paths is a subset of the run's changes.
	Partial bool
	// Paths are the changes to apply (every change's path for ScopeAll).
	Paths []string
	// Forced is set when the run failed its gate and the reviewer
	// confirmed applying what its allowlist did not allow (or a run that
	// failed for other reasons): the history records the apply as forced.
	Forced bool
}

// Titles of the questions the stage strip asks.
const (
	applyFailedTitle = "Apply changes the run's allowlist does not allow?"
	discardTitle     = "Discard the staged changes?"
	rejectTitle      = "Reject the run and discard its staged changes?"
)

// Conflict is a path that changed in the workspace since the run.
type Conflict struct{ Path, Reason string }

// ConflictError is what OnApply returns when the workspace changed under
// paths to apply: nothing was applied.
type ConflictError struct{ Conflicts []Conflict }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%d conflicting path(s), nothing applied", len(e.Conflicts))
}

// stagePane is the Apply/Discard strip under the banner, shown for a staged
// run (Report.Stage) when the host stages (Options.OnApply): Apply and
// Discard while the stage is pending, its state once decided.
type stagePane struct {
	v          *View
	runAllow   []string // the run's own allowlist
	root       *fyne.Container
	info       *widget.RichText
	scope      *widget.Select
	applyBtn   *widget.Button
	discardBtn *widget.Button
	conflicts  *widget.RichText
}

func newStagePane(v *View) *stagePane {
	p := &stagePane{v: v}
	p.info = widget.NewRichText()
	p.info.Wrapping = fyne.TextWrapWord
	p.scope = widget.NewSelect(scopeLabels, nil)
	p.scope.SetSelectedIndex(int(scopeAll))
	p.scope.OnChanged = func(string) { p.update() }
	p.applyBtn = widget.NewButtonWithIcon("Apply", theme.DownloadIcon(), p.apply)
	p.applyBtn.Importance = widget.HighImportance
	p.discardBtn = widget.NewButtonWithIcon("Discard", theme.DeleteIcon(), p.discard)
	p.discardBtn.Importance = widget.DangerImportance
	p.conflicts = widget.NewRichText()
	p.conflicts.Wrapping = fyne.TextWrapBreak
	p.conflicts.Hide()
	// One row under the banner: the stage's state, then what to apply and
	// the two buttons; conflicts, when there are any, below it.
	longest := fyne.MeasureText(scopeLabels[scopeShown], theme.TextSize(), fyne.TextStyle{}).Width
	scope := container.NewGridWrap(fyne.NewSize(longest+5*theme.Padding()+theme.IconInlineSize(), p.scope.MinSize().Height), p.scope)
	actions := container.NewHBox(scope, p.applyBtn, p.discardBtn)
	row := container.NewBorder(nil, nil, nil, actions, p.info)
	p.root = container.New(layout.NewCustomPaddedLayout(0, 0, theme.Padding(), theme.Padding()),
		container.NewVBox(row, p.conflicts))
	p.root.Hide()
	return p
}

// paths returns the paths the current scope applies.
func (p *stagePane) request() ApplyRequest {
	r := p.v.r
	if r == nil {
		return ApplyRequest{}
	}
	var req ApplyRequest
	switch applyScope(p.scope.SelectedIndex()) {
	case scopeAllowed:
		// The run's own allowlist decides (the record says "only
		// allowed"); with a draft, the paths it allows are a subset.
		req.OnlyAllowed = slices.Equal(p.v.side.editor.Entries(), p.runAllow)
		for _, c := range r.Changes {
			if c.Allowed {
				req.Paths = append(req.Paths, c.Path)
			}
		}
	case scopeShown:
		for i := range r.Changes { // in the run's order, not the list's
			if p.v.m.shown(i) {
				req.Paths = append(req.Paths, r.Changes[i].Path)
			}
		}
	default:
		req.Paths = make([]string, 0, len(r.Changes))
		for _, c := range r.Changes {
			req.Paths = append(req.Paths, c.Path)
		}
	}
	req.Partial = len(req.Paths) < len(r.Changes)
	return req
}

// defaultScope is what Apply applies when a report opens: only the allowed
// changes of a run that failed its gate, all of them otherwise.
func (p *stagePane) defaultScope() applyScope {
	if run := p.v.run; run != nil && run.Verdict != report.Pass {
		return scopeAllowed
	}
	return scopeAll
}

// notAllowed returns the paths of req the run's own allowlist did not
// allow, in the run's order.
func (p *stagePane) notAllowed(req ApplyRequest) []string {
	run := p.v.run
	if run == nil {
		return nil
	}
	want := make(map[string]bool, len(req.Paths))
	for _, x := range req.Paths {
		want[x] = true
	}
	var out []string
	for _, c := range run.Changes {
		if want[c.Path] && !c.Allowed {
			out = append(out, c.Path)
		}
	}
	return out
}

// forcedWhy says what applying req forces on a run that failed its gate
// (the history records such an apply as forced unless it is the run's own
// allowed changes, OnlyAllowed): the changes its allowlist did not allow
// (named, the first maxNamed) and the reasons no allowlist allows; "" when
// nothing is forced.
func (p *stagePane) forcedWhy(req ApplyRequest) string {
	run := p.v.run
	if run == nil || run.Verdict == report.Pass || req.OnlyAllowed {
		return ""
	}
	bad := p.notAllowed(req)
	_, other := Uncovered(run)
	var b strings.Builder
	fmt.Fprintf(&b, "The run failed its gate. Apply writes %s into the workspace", count.Grouped(len(req.Paths), "change"))
	if len(bad) > 0 {
		fmt.Fprintf(&b, ", %d of them not allowed by the run's allowlist:\n", len(bad))
		const maxNamed = 8
		for i, x := range bad {
			if i == maxNamed {
				fmt.Fprintf(&b, "• and %d more\n", len(bad)-maxNamed)
				break
			}
			b.WriteString("• " + quote.Path(x) + "\n")
		}
	} else {
		b.WriteString(", none of them a violation, but not the run's allowed changes as the run decided them.\n")
	}
	if len(other) > 0 {
		b.WriteString("The run also failed for: " + strings.Join(other, ", ") + ".\n")
	}
	b.WriteString("\nThe history records this apply as forced.")
	return b.String()
}

// ask shows a question with a confirm button named yes; do runs when the
// reviewer confirms. Without a window to ask in, nothing is done.
func (p *stagePane) ask(title, text, yes string, do func()) {
	v := p.v
	if v.side.confirm != nil {
		return // already asking
	}
	w := windowOf(v)
	if w == nil {
		return
	}
	msg := widget.NewLabel(text)
	msg.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm(title, yes, "Cancel", msg, func(ok bool) {
		if ok {
			do()
		}
	}, w)
	d.SetOnClosed(func() { v.side.confirm = nil })
	v.side.confirm = d
	d.Show()
	d.Resize(fyne.NewSize(min(600, w.Canvas().Size().Width-40), d.MinSize().Height))
}

// reset clears the conflicts and shows the report's stage.
func (p *stagePane) reset() {
	p.setConflicts(nil)
	p.update()
}

// update shows the state and the button texts.
func (p *stagePane) update() {
	r := p.v.r
	if p.v.opts.OnApply == nil || r == nil || r.Stage == nil {
		p.root.Hide()
		return
	}
	p.root.Show()
	n := len(p.request().Paths)
	p.applyBtn.SetText(fmt.Sprintf("Apply %s", count.Grouped(n, "change")))
	var text string
	c := style.Muted
	pending := false
	switch r.Stage.State {
	case report.StageApplied:
		text, c = "Applied: the changes were written into the workspace.", style.PassColor
	case report.StagePartiallyApplied:
		text, c = "Partially applied: only the chosen changes were written into the workspace.", style.PassColor
	case report.StageDiscarded:
		text, c = "Discarded: the stage was removed, the workspace is untouched.", style.FailColor
	case report.StageExpired:
		text = "Expired: the stage was removed after 14 days, the workspace is untouched."
	default:
		pending = true
		text, c = StagedText(r), theme.ColorNameWarning
		if p.v.decided == report.Rejected {
			pending = false
			text, c = "Rejected: Apply is off; the stage was not discarded (Discard removes it).", style.FailColor
		}
	}
	p.info.Segments = []widget.RichTextSegment{
		&widget.TextSegment{Text: text, Style: widget.RichTextStyle{Inline: true, ColorName: c, TextStyle: fyne.TextStyle{Bold: true}}},
		&widget.TextSegment{Text: "  " + r.Stage.Mechanism + " stage", Style: widget.RichTextStyle{Inline: true, ColorName: style.Muted}},
	}
	p.info.Refresh()
	if pending {
		p.scope.Enable()
		p.discardBtn.Enable()
		if n > 0 {
			p.applyBtn.Enable()
		} else {
			p.applyBtn.Disable()
		}
	} else {
		p.scope.Disable()
		p.applyBtn.Disable()
		p.discardBtn.Disable()
		if r.Stage.State == report.StagePending && p.v.opts.OnDiscard != nil {
			p.discardBtn.Enable() // rejected: the stage can still go
		}
	}
}

// apply applies the chosen scope; on a run that failed its gate, a scope
// with changes its allowlist did not allow asks first, naming them.
func (p *stagePane) apply() {
	if p.v.opts.OnApply == nil || p.v.r == nil {
		return
	}
	req := p.request()
	why := p.forcedWhy(req)
	if why == "" {
		p.applyNow(req)
		return
	}
	req.Forced = true
	p.ask(applyFailedTitle, why, "Apply anyway", func() { p.applyNow(req) })
}

func (p *stagePane) applyNow(req ApplyRequest) {
	p.busy("Applying…")
	p.v.opts.OnApply(p.v.r, req, p.outcome)
}

// discard asks, then removes the stage.
func (p *stagePane) discard() {
	if p.v.opts.OnDiscard == nil || p.v.r == nil {
		return
	}
	n := len(p.v.r.Changes)
	p.ask(discardTitle, fmt.Sprintf("The %s of this run are removed; the workspace stays as it is. This cannot be undone.", count.Grouped(n, "staged change")),
		"Discard", p.discardNow)
}

func (p *stagePane) discardNow() {
	if p.v.opts.OnDiscard == nil || p.v.r == nil {
		return
	}
	p.busy("Discarding…")
	p.v.opts.OnDiscard(p.v.r, p.outcome)
}

// pending reports whether the report shown has a stage the host can still
// apply or discard.
func (p *stagePane) pending() bool {
	r := p.v.r
	return r != nil && r.Stage != nil && r.Stage.State == report.StagePending && p.v.opts.OnDiscard != nil
}

// busy disables the controls while the host applies or discards.
func (p *stagePane) busy(text string) {
	p.scope.Disable()
	p.applyBtn.Disable()
	p.discardBtn.Disable()
	// In the state's place: a line more would push the page down.
	p.setConflicts(nil)
	p.info.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{Inline: true, ColorName: style.Muted, TextStyle: fyne.TextStyle{Bold: true}}}}
	p.info.Refresh()
}

// setConflicts shows segs under the row (hidden when there are none: the
// strip takes one row of the window's height).
func (p *stagePane) setConflicts(segs []widget.RichTextSegment) {
	p.conflicts.Segments = segs
	p.conflicts.Hidden = len(segs) == 0
	p.conflicts.Refresh()
}

// outcome shows what the host's apply or discard did: the stage's new
// state, or why nothing changed.
func (p *stagePane) outcome(state string, err error) {
	if err == nil {
		if r := p.v.r; r != nil && r.Stage != nil {
			r.Stage.State = state
		}
		p.v.banner.Refresh()
		p.reset()
		return
	}
	p.update() // still pending: the buttons come back
	var segs []widget.RichTextSegment
	fail := widget.RichTextStyle{ColorName: style.FailColor, TextStyle: fyne.TextStyle{Bold: true}}
	if ce, ok := err.(*ConflictError); ok {
		segs = append(segs, &widget.TextSegment{Style: fail,
			Text: fmt.Sprintf("Nothing applied: %s changed in the workspace since the run.", count.Grouped(len(ce.Conflicts), "path"))})
		for _, c := range ce.Conflicts {
			line := "CONFLICT " + c.Path
			if c.Reason != "" {
				line += " (" + c.Reason + ")"
			}
			segs = append(segs, &widget.TextSegment{Text: line, Style: widget.RichTextStyle{
				ColorName: style.FailColor, TextStyle: fyne.TextStyle{Monospace: true}}})
		}
	} else {
		segs = append(segs, &widget.TextSegment{Style: fail, Text: strings.ReplaceAll(err.Error(), "\n", " ")})
	}
	p.setConflicts(segs)
}

// stageNote is the text of the stage block: its state line and any
// conflict lines, one per line.
func (v *View) stageNote() string {
	var b strings.Builder
	for _, rt := range []*widget.RichText{v.stage.info, v.stage.conflicts} {
		for _, s := range rt.Segments {
			if t, ok := s.(*widget.TextSegment); ok {
				b.WriteString(t.Text)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// stageText is the stage strip's state line ("" when it is hidden).
func (v *View) stageText() string {
	if !v.stage.root.Visible() {
		return ""
	}
	return segmentsText(v.stage.info)
}
