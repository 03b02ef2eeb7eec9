//go:build !js

package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/oneline"
)

// reopened is what openRun reads off the UI goroutine: the run and, for an
// approved one, the allowlist version approved and what the run comes to
// with it.
type reopened struct {
	run *history.Run
	// ran is the verdict the run had (the review re-evaluates the report
	// it shows in place).
	ran string
	// approved is the version the decision approved (nil: none recorded,
	// or alErr says why it could not be read).
	approved *history.Allowlist
	alErr    error
	// uncovered and other: what the run still fails for with approved
	// (review.Uncovered).
	uncovered int
	other     []string
	// viewed are the paths the reviewer marked viewed (nil when they
	// could not be read: viewedErr).
	viewed    []string
	viewedErr error
}

// openRun reopens run id from the history database alone, off the UI
// goroutine, and shows it with what its review decided: for an approval,
// which allowlist version was approved and whether that version covers the
// run (the run re-evaluated with it). A newer open (of a run or a report)
// wins over a slower older one; failed is called on the UI goroutine when
// the run cannot be read.
func (u *UI) openRun(id int64, failed func(error)) {
	if u.hist == nil {
		failed(errNoHistory(u.histErr))
		return
	}
	h := u.hist
	u.openN++
	gen := u.openN
	go func() {
		o, err := readRun(h, id)
		u.do(func() {
			if gen != u.openN || u.closed {
				return
			}
			if err != nil {
				failed(err)
				return
			}
			u.reviewID = id
			u.showReview(o.run.Report)
			if o.approved != nil { // the editor and banner as approved
				u.review.SetApproved(o.approved.Entries)
			}
			if o.run.Decision == history.Reject {
				u.review.SetDecided(report.Rejected)
			}
			if text, c := o.decision(); text != "" {
				u.review.SetDecision(text, c)
			}
			if o.viewedErr != nil {
				u.log.Warn().Err(o.viewedErr).Int64("run", id).Msg("viewed marks")
			} else {
				u.review.SetViewed(o.viewed)
			}
		})
	}()
}

// readRun reads run id, its viewed marks and, for an approved run, the
// approved version and the run evaluated with it (on a copy: the review shows the run as it was).
func readRun(h *History, id int64) (*reopened, error) {
	run, err := h.Get(id)
	if err != nil {
		return nil, err
	}
	o := &reopened{run: run, ran: run.Report.Verdict}
	o.viewed, o.viewedErr = h.Viewed(id)
	if run.Decision != history.Approve || run.ApprovedVersion == 0 {
		return o, nil
	}
	o.approved, o.alErr = h.Allowlist(run.Report.Workspace, run.ApprovedVersion)
	if o.alErr != nil {
		o.approved = nil
		return o, nil
	}
	p, err := policy.Parse(o.approved.Entries)
	if err != nil {
		o.approved, o.alErr = nil, err
		return o, nil
	}
	r := run.Report.Clone()
	r.Apply(p, o.approved.Entries)
	o.uncovered, o.other = review.Uncovered(r)
	return o, nil
}

// decision is the decision line of a reopened run, and its color. For an
// approval it starts with the run's own verdict as history ("Failed when it
// ran; approved as allowlist version 1 on …"): the banner above shows the
// verdict with the approved version.
func (o *reopened) decision() (string, fyne.ThemeColorName) {
	text, c := decisionText(o.run)
	if o.run.Decision != history.Approve {
		return text, c
	}
	v := o.run.ApprovedVersion
	if v > 0 {
		ran := "Failed"
		if o.ran == report.Pass {
			ran = "Passed"
		}
		text = fmt.Sprintf("%s when it ran; approved as allowlist version %d on %s", ran, v, o.run.DecidedAt.Local().Format("2006-01-02 15:04"))
		if o.run.DecisionNote != "" {
			text += ": " + o.run.DecisionNote
		}
	}
	if !strings.HasSuffix(text, ".") {
		text += "."
	}
	switch {
	case o.alErr != nil:
		return text + fmt.Sprintf(" Version %d cannot be read: %s.", v, oneline.Flat(o.alErr.Error())), style.FailColor
	case o.approved == nil:
		return text + " Which allowlist version was approved was not recorded (an approval made before diffgate recorded it).", c
	case o.uncovered == 0 && len(o.other) == 0:
		return text + fmt.Sprintf(" Version %d (in the editor) covers this run: every change is allowed.", v), style.PassColor
	}
	var why []string
	if o.uncovered > 0 {
		why = append(why, count.Of(o.uncovered, "change")+" it does not allow")
	}
	if len(o.other) > 0 {
		why = append(why, strings.Join(o.other, ", ")+", which no allowlist allows")
	}
	return text + fmt.Sprintf(" Version %d (in the editor) does not cover this run: %s.", v, strings.Join(why, "; ")), theme.ColorNameWarning
}
