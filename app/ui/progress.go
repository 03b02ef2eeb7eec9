package ui

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/count"
)

// phaseLabels name the steps in a word or two: eight columns share a
// window as narrow as 1024 px, and a label is never cut.
var phaseLabels = map[pipeline.Phase]string{
	pipeline.PhaseValidate:  "Inputs",
	pipeline.PhaseBefore:    "Before",
	pipeline.PhaseExecute:   "Script",
	pipeline.PhaseLeftovers: "Leftovers",
	pipeline.PhaseAfter:     "After",
	pipeline.PhaseCompare:   "Diff",
	pipeline.PhasePolicy:    "Allowlist",
	pipeline.PhaseVerdict:   "Verdict",
}

type phaseState int

const (
	phasePending phaseState = iota
	phaseRunning
	phaseDone
	phaseStopped
)

type phaseRow struct {
	state phaseState
	icon  *widget.Icon
	name  *widget.Label
	bar   *widget.ProgressBar
	inf   *widget.ProgressBarInfinite
	info  *widget.Label
}

// phaseProgress shows one row per gate phase: state icon, a progress bar
// (indeterminate while the amount of work is unknown) and entries / bytes /
// elapsed time. All methods run on the UI goroutine.
type phaseProgress struct {
	rows          map[pipeline.Phase]*phaseRow
	current       pipeline.Phase
	beforeEntries int64
	timeout       time.Duration
	runStart      time.Duration
	root          *fyne.Container
}

func newPhaseProgress() *phaseProgress {
	p := &phaseProgress{rows: map[pipeline.Phase]*phaseRow{}}
	var objs []fyne.CanvasObject
	for _, ph := range pipeline.Phases() {
		r := &phaseRow{icon: widget.NewIcon(nil), name: widget.NewLabel(phaseLabels[ph]),
			bar: widget.NewProgressBar(), inf: widget.NewProgressBarInfinite(), info: widget.NewLabel("")}
		r.bar.TextFormatter = func() string { return "" }
		r.inf.Stop()
		r.inf.Hide()
		r.name.Truncation = fyne.TextTruncateEllipsis
		r.info.SizeName = theme.SizeNameCaptionText
		r.info.Wrapping = fyne.TextWrapWord // "1,204 entries · 3.1 MB" on two lines when narrow
		p.rows[ph] = r
		head := container.NewBorder(nil, nil, container.NewCenter(container.NewGridWrap(fyne.NewSquareSize(theme.IconInlineSize()), r.icon)), nil, style.Tight(r.name))
		objs = append(objs, container.NewVBox(head, container.New(&thinBar{}, r.bar, r.inf), style.Tight(r.info)))
	}
	p.root = container.NewGridWithColumns(len(pipeline.Phases()), objs...)
	p.reset(0)
	return p
}

// thinBar lays out a progress bar (and its indeterminate twin) as a thin
// strip across the full width.
type thinBar struct{}

func (thinBar) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(fyne.NewSize(s.Width, 6))
	}
}

func (thinBar) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(40, 6) }

func (p *phaseProgress) reset(timeout time.Duration) {
	p.timeout = timeout
	p.current = ""
	p.beforeEntries = 0
	for _, ph := range pipeline.Phases() {
		p.set(ph, phasePending, 0, false, "")
	}
}

func (p *phaseProgress) set(ph pipeline.Phase, st phaseState, value float64, indeterminate bool, info string) {
	r := p.rows[ph]
	r.state = st
	switch st {
	case phasePending:
		r.icon.SetResource(style.Colored(theme.RadioButtonIcon(), style.Muted))
		r.name.Importance = widget.MediumImportance
	case phaseRunning:
		r.icon.SetResource(style.Colored(theme.MediaPlayIcon(), theme.ColorNamePrimary))
		r.name.Importance = widget.HighImportance
	case phaseDone:
		r.icon.SetResource(style.Colored(theme.ConfirmIcon(), style.PassColor))
		r.name.Importance = widget.MediumImportance
	case phaseStopped:
		r.icon.SetResource(style.Colored(theme.CancelIcon(), style.FailColor))
		r.name.Importance = widget.DangerImportance
	}
	if st == phasePending {
		r.bar.Hide()
		if r.inf.Running() {
			r.inf.Stop()
		}
		r.inf.Hide()
	} else if indeterminate {
		r.bar.Hide()
		r.inf.Show()
		r.inf.Start()
	} else {
		if r.inf.Running() {
			r.inf.Stop()
		}
		r.inf.Hide()
		r.bar.Show()
		r.bar.SetValue(value)
	}
	r.name.Refresh()
	r.info.SetText(info)
}

// update applies a progress event.
func (p *phaseProgress) update(ev pipeline.Progress) {
	idx := phaseIndex(ev.Phase)
	if ev.Phase != p.current {
		if p.current == pipeline.PhaseExecute { // the script ended: show how long it ran
			d := max(0, ev.Elapsed-p.runStart).Round(10 * time.Millisecond)
			p.set(pipeline.PhaseExecute, phaseDone, 1, false, "ran "+d.String())
		}
		for _, ph := range pipeline.Phases()[:max(0, idx)] {
			if r := p.rows[ph]; r.state != phaseDone {
				p.set(ph, phaseDone, 1, false, r.info.Text)
			}
		}
		if p.current == pipeline.PhaseBefore {
			p.beforeEntries = max(p.beforeEntries, 1)
		}
		p.current = ev.Phase
		if ev.Phase == pipeline.PhaseExecute {
			p.runStart = ev.Elapsed
		}
	}
	switch ev.Phase {
	case pipeline.PhaseBefore:
		p.beforeEntries = ev.Entries
		p.set(ev.Phase, phaseRunning, 0, true, snapInfo(ev))
	case pipeline.PhaseAfter:
		if ev.Entries == 0 && ev.Bytes == 0 { // a staged run reads its stage, not a snapshot
			p.set(ev.Phase, phaseRunning, 0, true, "reading…")
			break
		}
		frac := 0.0
		if p.beforeEntries > 0 {
			frac = min(0.99, float64(ev.Entries)/float64(p.beforeEntries))
		}
		p.set(ev.Phase, phaseRunning, frac, p.beforeEntries == 0, snapInfo(ev))
	case pipeline.PhaseExecute:
		p.tick(ev.Elapsed)
	default:
		p.set(ev.Phase, phaseRunning, 0.5, false, "")
	}
}

// tick updates the running script's elapsed time (called on a timer, as
// the script phase sends no events of its own).
func (p *phaseProgress) tick(elapsed time.Duration) {
	if p.current != pipeline.PhaseExecute {
		return
	}
	d := max(0, elapsed-p.runStart)
	info := d.Round(100 * time.Millisecond).String()
	if p.timeout > 0 {
		info += " of " + p.timeout.String()
		p.set(pipeline.PhaseExecute, phaseRunning, min(1, float64(d)/float64(p.timeout)), false, info)
		return
	}
	p.set(pipeline.PhaseExecute, phaseRunning, 0, true, info)
}

// finish marks every phase done (ok) or the current one stopped.
func (p *phaseProgress) finish(ok bool) {
	for _, ph := range pipeline.Phases() {
		r := p.rows[ph]
		switch {
		case ok:
			p.set(ph, phaseDone, 1, false, r.info.Text)
		case r.state == phaseRunning:
			p.set(ph, phaseStopped, r.bar.Value, false, r.info.Text)
		case r.state == phaseDone:
		default:
			p.set(ph, phasePending, 0, false, "")
		}
	}
	p.current = ""
}

func phaseIndex(ph pipeline.Phase) int {
	for i, x := range pipeline.Phases() {
		if x == ph {
			return i
		}
	}
	return -1
}

func snapInfo(ev pipeline.Progress) string {
	return entriesInfo(ev.Entries, ev.Bytes)
}

// entriesInfo is "1 entry · 12 B", "1,204 entries · 3.1 MB".
func entriesInfo(n, bytes int64) string {
	what := "entries"
	if n == 1 {
		what = "entry"
	}
	return fmt.Sprintf("%s %s · %s", count.Digits(n), what, report.Size(bytes))
}

// afterDone says what the after step found once the run is over (the
// snapshot's progress events stop short of the total): the manifest's
// entries, or for a staged run (no manifest) the changes read from the stage.
func (p *phaseProgress) afterDone(after *snapshot.Manifest, r *report.Report) {
	info := ""
	switch {
	case after != nil:
		var bytes int64
		for i := range after.Entries {
			bytes += after.Entries[i].Size
		}
		info = entriesInfo(int64(len(after.Entries)), bytes)
	case r != nil && r.Stage != nil:
		n := len(r.Changes)
		info = fmt.Sprintf("stage: %s %s", count.Digits(int64(n)), map[bool]string{true: "change", false: "changes"}[n == 1])
	default:
		return
	}
	p.set(pipeline.PhaseAfter, phaseDone, 1, false, info)
}
