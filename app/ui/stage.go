//go:build !js

package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/oneline"
)

// applyTimeout bounds an apply or discard started from the review (the
// history's write lock, and writing the changed files).
const applyTimeout = 10 * time.Minute

// applyStage applies the reviewer's choice of the staged run under review
// into its workspace, off the UI thread (pipeline.Apply: every path is
// checked first, a conflict applies nothing), and records it in the history.
func (u *UI) applyStage(r *report.Report, req review.ApplyRequest, done func(string, error)) {
	id, err := u.stagedRun()
	if err != nil {
		done("", err)
		return
	}
	// The reviewer's Apply is their decision: a failed run's changes are
	// applied as forced (the review's confirmation for it: the review issue).
	o := pipeline.ApplyOptions{OnlyAllowed: req.OnlyAllowed, Force: !req.OnlyAllowed, StageBase: u.opts.StageBase}
	if req.Partial {
		o.Paths = req.Paths
		if len(o.Paths) == 0 {
			done("", errors.New("nothing chosen to apply"))
			return
		}
	}
	db := u.hist.db
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
		defer cancel()
		res, err := pipeline.Apply(ctx, db, id, o)
		u.do(func() {
			var ce *pipeline.ConflictError
			if errors.As(err, &ce) {
				rc := &review.ConflictError{}
				for _, c := range ce.Conflicts {
					rc.Conflicts = append(rc.Conflicts, review.Conflict{Path: c.Path, Reason: c.Reason})
				}
				u.log.Info().Int64("run", id).Int("conflicts", len(rc.Conflicts)).Msg("apply: conflicts, nothing applied")
				done("", rc)
				return
			}
			if res != nil && err != nil { // applied, not recorded
				u.log.Warn().Err(err).Int64("run", id).Msg("apply")
				done(res.State, nil)
				u.review.SetDecision(oneline.Flat(err.Error()), style.FailColor)
			} else if err != nil {
				u.log.Warn().Err(err).Int64("run", id).Msg("apply")
				done("", err)
				return
			} else {
				u.log.Info().Int64("run", id).Int("paths", len(res.Paths)).Str("decision", res.Decision).Msg("applied")
				done(res.State, nil)
			}
			u.history.refresh()
		})
	}()
}

// discardStage removes the staged run's stage and records it.
func (u *UI) discardStage(r *report.Report, done func(string, error)) {
	id, err := u.stagedRun()
	if err != nil {
		done("", err)
		return
	}
	db, base := u.hist.db, u.opts.StageBase
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
		defer cancel()
		err := pipeline.Discard(ctx, db, id, base)
		u.do(func() {
			if err != nil {
				u.log.Warn().Err(err).Int64("run", id).Msg("discard")
				done("", err)
				return
			}
			u.log.Info().Int64("run", id).Msg("discarded")
			done(report.StageDiscarded, nil)
			u.history.refresh()
		})
	}()
}

// stagedRun is the history's number of the run under review, which Apply
// and Discard need.
func (u *UI) stagedRun() (int64, error) {
	if u.hist == nil {
		return 0, errNoHistory(u.histErr)
	}
	if u.reviewID == 0 {
		return 0, fmt.Errorf("this report is not a run of the history (opened from a file): apply it with diffgate apply")
	}
	return u.reviewID, nil
}
