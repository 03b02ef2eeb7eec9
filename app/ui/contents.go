//go:build !js

package ui

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
)

// reviewContents is where the review's Load full diff finds the contents
// of the report under review: set on the UI goroutine when a report is
// shown, read by the loads in the background.
type reviewContents struct {
	r   *report.Report
	src *pipeline.Contents
}

// contentsFor records the sources of r's contents: the run's kept copies
// when r is the run just finished (res), the history, its pending stage
// and its workspace.
func (u *UI) contentsFor(r *report.Report, res *pipeline.GateResult) {
	if r == nil {
		u.contents.Store(nil)
		return
	}
	var kept func(string) ([]byte, bool)
	if res != nil && res.Report == r {
		kept = res.Contents
	}
	var db *history.DB
	if u.hist != nil {
		db = u.hist.db
	}
	u.contents.Store(&reviewContents{r: r, src: pipeline.ContentsOf(r, kept, db, u.opts.StageBase)})
}

// loadContents is the review's content loader (review.ContentLoader).
func (u *UI) loadContents(ctx context.Context, r *report.Report, c *diff.Change) ([]byte, []byte, error) {
	rc := u.contents.Load()
	if rc == nil || rc.r != r {
		return nil, nil, errors.New("another report is under review")
	}
	return rc.src.Load(ctx, c, review.FullDiffMax)
}

// contentsPtr is the UI's current reviewContents.
type contentsPtr = atomic.Pointer[reviewContents]
