//go:build !js

package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
)

// showDetail fills the selected-run card from its summary s and, once
// loaded, the full run.
func (t *historyTab) showDetail(s *history.Summary, run *history.Run) {
	if s == nil {
		t.showNoDetail()
		return
	}
	vc := style.VerdictColor(s.Verdict)
	lines := []fyne.CanvasObject{container.NewBorder(nil, nil, nil, t.openBtn, detailHead(s, vc))}
	if run != nil && len(run.Report.Reasons) > 0 {
		lines = append(lines, wrapped(strings.Join(run.Report.Reasons, " · "), vc, true))
	}
	f := detailForm{container.New(layout.NewFormLayout())}
	f.add("Script", wrapped(s.Script, "", false))
	f.add("Workspace", wrapped(s.Workspace, "", false))
	f.add("Changes", countsText(s))
	if run != nil {
		f.add("Allowlist", allowlistText(run))
		f.add("Decision", decisionLine(s, run))
		if ct := run.Report.Containment; ct != nil {
			f.add("Containment", containmentLine(run.Report, ct))
		}
		if st := run.Report.Stage; st != nil {
			f.add("Stage", stageStateLine(run.Report, st))
		}
	}
	lines = append(lines, container.New(layout.NewCustomPaddedLayout(0, 0, theme.Padding()*2, 0), f.form))
	t.detail.Objects = []fyne.CanvasObject{container.NewVScroll(container.NewVBox(lines...))}
	t.detail.Refresh()
}

// showNoDetail is the card while no run is selected.
func (t *historyTab) showNoDetail() {
	t.openBtn.Disable()
	hint := widget.NewRichText(&widget.TextSegment{
		Text:  "Select a run to see its summary. Double-click it or press Enter to open it in the Review tab.",
		Style: widget.RichTextStyle{ColorName: style.Muted}})
	hint.Wrapping = fyne.TextWrapWord
	t.detail.Objects = []fyne.CanvasObject{container.NewVBox(hint)}
	t.detail.Refresh()
}

// detailForm is the card's rows: a bold name and its value.
type detailForm struct{ form *fyne.Container }

func (f detailForm) add(k string, v fyne.CanvasObject) {
	f.form.Add(style.Tight(widget.NewLabelWithStyle(k, fyne.TextAlignTrailing, fyne.TextStyle{Bold: true})))
	f.form.Add(style.Tight(v))
}

// detailHead is the card's title: the verdict (in vc), the run's number and
// when it started.
func detailHead(s *history.Summary, vc fyne.ThemeColorName) *widget.RichText {
	return widget.NewRichText(
		&widget.TextSegment{Text: verdictWord(s.Verdict) + "  ", Style: widget.RichTextStyle{ColorName: vc, Inline: true,
			SizeName: theme.SizeNameSubHeadingText, TextStyle: fyne.TextStyle{Bold: true}}},
		&widget.TextSegment{Text: fmt.Sprintf("Run %d", s.ID), Style: widget.RichTextStyle{Inline: true,
			SizeName: theme.SizeNameSubHeadingText, TextStyle: fyne.TextStyle{Bold: true}}},
		&widget.TextSegment{Text: "   " + s.StartedAt.Local().Format("Mon 2 Jan 2006, 15:04:05"), Style: widget.RichTextStyle{
			ColorName: style.Muted, Inline: true}},
	)
}

// countsText is the run's added, removed and changed counts and its
// violations.
func countsText(s *history.Summary) *widget.RichText {
	sep := func() widget.RichTextSegment {
		return &widget.TextSegment{Text: ",  ", Style: widget.RichTextStyle{Inline: true, ColorName: style.Muted}}
	}
	counts := widget.NewRichText(
		countSeg(s.Added, "+", " added", style.Added), sep(),
		countSeg(s.Removed, "−", " removed", style.Removed), sep(),
		countSeg(s.Changed, "~", " changed", style.Changed))
	if s.Violations > 0 {
		counts.Segments = append(counts.Segments, &widget.TextSegment{Text: "   " + count.Of(s.Violations, "violation"),
			Style: widget.RichTextStyle{Inline: true, ColorName: style.FailColor, TextStyle: fyne.TextStyle{Bold: true}}})
	}
	return counts
}

// allowlistText is the run's allowlist and where it came from.
func allowlistText(run *history.Run) *widget.RichText {
	al := "entered by hand"
	if run.AllowlistVersion > 0 {
		al = fmt.Sprintf("approved version %d", run.AllowlistVersion)
	}
	segs := []widget.RichTextSegment{&widget.TextSegment{Text: al + ":  ", Style: widget.RichTextStyle{Inline: true, ColorName: style.Muted}}}
	if len(run.Report.Allowlist) == 0 {
		segs = append(segs, &widget.TextSegment{Text: "empty", Style: widget.RichTextStyle{Inline: true, ColorName: style.Muted}})
	}
	for _, e := range run.Report.Allowlist {
		segs = append(segs, &widget.TextSegment{Text: e + "  ", Style: widget.RichTextStyle{Inline: true, TextStyle: fyne.TextStyle{Monospace: true}}})
	}
	alText := widget.NewRichText(segs...)
	alText.Wrapping = fyne.TextWrapWord
	return alText
}

// decisionLine is the reviewer's decision on the run.
func decisionLine(s *history.Summary, run *history.Run) *widget.RichText {
	if text, c := decisionText(run); text != "" {
		return wrapped(text, c, true)
	}
	if w := decisionWord(s); w != "Not reviewed" && w != "To apply" { // applied or discarded: not "not reviewed"
		return wrapped(w+" (no approval or rejection recorded)", style.Muted, false)
	}
	return wrapped("not reviewed yet", style.Muted, false)
}

// containmentLine is what contained the run, as loud as the verdict when
// the script was not contained.
func containmentLine(r *report.Report, ct *report.Containment) *widget.RichText {
	text, c := ct.Summary(), style.PassColor
	if !ct.Contained {
		c = style.FailColor
	}
	if n := len(r.Blocked); n > 0 {
		text += " · " + count.Of(n, "blocked action")
	}
	if n := len(r.Outside); n > 0 {
		text += " · " + count.Of(n, "change") + " outside the workspace"
	}
	return wrapped(text, c, !ct.Contained)
}

// stageStateLine is how the run was staged and what became of its stage.
func stageStateLine(r *report.Report, st *report.Stage) *widget.RichText {
	text, c := st.Mechanism+" · "+st.State, style.Muted
	switch st.State {
	case report.StagePending:
		if s := review.StagedText(r); !strings.HasPrefix(s, "Staged:") { // something outside
			text += ": " + s + " Open the run to apply or discard it"
		} else {
			text += ": nothing is in the workspace yet; open the run to apply or discard it"
		}
		c = theme.ColorNameWarning
	case report.StageApplied, report.StagePartiallyApplied:
		c = style.PassColor
	}
	return wrapped(text, c, st.State == report.StagePending)
}

// countSeg is "+3 added" in the kind's color, or "0 added" muted.
func countSeg(n int, sign, what string, c fyne.ThemeColorName) widget.RichTextSegment {
	text := fmt.Sprintf("%s%d%s", sign, n, what)
	if n == 0 {
		text, c = "0"+what, style.Muted
	}
	return &widget.TextSegment{Text: text, Style: widget.RichTextStyle{Inline: true, ColorName: c}}
}

func wrapped(s string, c fyne.ThemeColorName, bold bool) *widget.RichText {
	r := widget.NewRichText(&widget.TextSegment{Text: s, Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Bold: bold}}})
	r.Wrapping = fyne.TextWrapWord
	return r
}
