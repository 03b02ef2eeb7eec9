//go:build !js

package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/oneline"
)

// runStatus is the run in progress and its outcome: the Run and Cancel
// buttons, the status line, the stage line, the steps and the output.
type runStatus struct {
	runBtn, cancelBtn *widget.Button
	status            *widget.RichText
	stageInfo         *widget.RichText
	phases            *phaseProgress
	output            *outputPane
	running           bool
	cancel            context.CancelFunc
}

// newRunStatus makes the status; run and stop are the buttons' actions.
func newRunStatus(run, stop func()) *runStatus {
	s := &runStatus{phases: newPhaseProgress(), output: newOutputPane()}
	s.runBtn = widget.NewButtonWithIcon("Run through the gate", theme.MediaPlayIcon(), run)
	s.runBtn.Importance = widget.HighImportance
	s.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.MediaStopIcon(), stop)
	s.cancelBtn.Importance = widget.DangerImportance
	s.cancelBtn.Disable()
	s.status = widget.NewRichText()
	s.status.Wrapping = fyne.TextWrapWord
	s.stageInfo = widget.NewRichText()
	// One line, cut with an ellipsis: the Review tab's strip says the
	// same, and a long reason (no overlay here: …) must not push the
	// output out of a 1024×700 window.
	s.stageInfo.Truncation = fyne.TextTruncateEllipsis
	s.stageInfo.Hide()
	return s
}

// outputPane is the output's heading and view.
func (s *runStatus) outputPane() fyne.CanvasObject {
	return container.NewBorder(heading("Output"), nil, nil, nil, container.New(shrinkLayout{h: 48}, s.output.view))
}

// setButtons enables Run or Cancel: Cancel while a run runs.
func (s *runStatus) setButtons(running bool) {
	s.running = running
	if running {
		s.runBtn.Disable()
		s.cancelBtn.Enable()
	} else {
		s.runBtn.Enable()
		s.cancelBtn.Disable()
	}
}

// begin clears the last run's outcome for a run with this timeout.
func (s *runStatus) begin(timeout time.Duration) {
	s.output.clear()
	s.phases.reset(timeout)
	s.setStatus("Running…", style.Muted)
	s.setStageInfo("", style.Muted)
}

// clear takes the last run's status, stage line and steps away.
func (s *runStatus) clear() {
	s.setStatus("", style.Muted)
	s.setStageInfo("", style.Muted)
	s.phases.reset(0)
}

func (s *runStatus) setStatus(text string, c fyne.ThemeColorName) {
	s.status.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Bold: c != style.Muted}}}}
	s.status.Refresh()
}

func (s *runStatus) setStageInfo(text string, c fyne.ThemeColorName) {
	s.stageInfo.Hidden = text == "" // a direct run: no line
	if text == "" {
		s.stageInfo.Segments = nil
	} else {
		s.stageInfo.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
			Style: widget.RichTextStyle{ColorName: c, SizeName: theme.SizeNameCaptionText}}}
	}
	s.stageInfo.Refresh()
}

// verdictLine is the status line of a finished run: its verdict and
// reasons, a note when the script changed after it was shown (reviewedSHA),
// and whether it was recorded.
func verdictLine(out *pipeline.Result, reviewedSHA string) string {
	r := out.Report
	msg := fmt.Sprintf("%s: %s", strings.ToUpper(r.Verdict), strings.Join(r.Reasons, ", "))
	if len(r.Reasons) == 0 {
		msg = "PASS: only allowed changes."
	}
	if reviewedSHA != "" && r.Script.SHA256 != "" && reviewedSHA != r.Script.SHA256 {
		msg += "  Note: the script changed after it was shown here."
	}
	switch {
	case out.RecordErr != nil:
		msg += "  Not recorded in the history: " + oneline.Flat(out.RecordErr.Error())
	case out.RunID > 0:
		msg += fmt.Sprintf("  Recorded as run %d.", out.RunID)
	}
	return msg
}

// stageLine says how a staged run was staged and what it cost ("" for a
// direct run), and in which color.
func stageLine(out *pipeline.Result) (string, fyne.ThemeColorName) {
	r := out.Report
	if r.Stage == nil {
		return "", style.Muted
	}
	var b strings.Builder
	cost := out.StageCost
	if cost == nil {
		cost = &pipeline.StageCost{}
	}
	switch pipeline.StageMechanism(r.Stage.Mechanism) {
	case pipeline.StageOverlay:
		b.WriteString("Staged in an overlay: the script's writes went to the stage, the workspace is untouched")
		if out.Probe != nil {
			fmt.Fprintf(&b, "; probe %s", ms(out.Probe.Took))
		}
	default:
		cp := cost.Copy
		b.WriteString("Staged in a copy of the workspace: the workspace is untouched")
		fmt.Fprintf(&b, "; copied %s (%s", count.Of(cp.Files, "file"), report.Size(cp.Bytes))
		if cp.Reflinked > 0 {
			fmt.Fprintf(&b, ", %d reflinked", cp.Reflinked)
		}
		fmt.Fprintf(&b, ") in %s", ms(cost.Prepare))
		if out.Probe != nil && out.Probe.Why != "" {
			fmt.Fprintf(&b, "; no overlay here: %s", out.Probe.Why)
		}
	}
	fmt.Fprintf(&b, "; stage read in %s.", ms(cost.Read))
	switch r.Stage.State {
	case report.StagePending:
		b.WriteString(" Apply or discard the changes in the Review tab.")
	case report.StageDiscarded: // not recorded, so nothing could apply it
		b.WriteString(" The stage was discarded: the run is not in the history.")
		return b.String(), style.FailColor
	}
	return b.String(), style.Muted
}

// ms rounds d for display.
func ms(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
