//go:build !js

package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/core/textdiff"
)

// Contents finds the contents of a run's changes after the run, for a diff
// the run did not compute (a file too large to keep, a copy not kept):
// from the run's kept copies, the history (changed files' contents, the
// workspace's text store), a pending stage (the after-contents) and the
// workspace as it is now. Every content is checked against the SHA-256 the
// run recorded, so nothing else is ever shown as the file's content.
type Contents struct {
	// Workspace is the run's workspace (Report.Workspace).
	Workspace string
	// StageID names the run's stage while it is pending ("" for none).
	StageID string
	// Kept returns the run's kept copy of a content (gate.Result.Contents);
	// nil for a run reopened from the history or a file.
	Kept func(sha string) ([]byte, bool)
	// History, when set, is searched for stored copies.
	History *history.DB
	// StageBase holds the stages ("" = stage.BaseDir()).
	StageBase string
}

// ContentsOf returns the Contents of run r: its workspace and its stage
// while pending. The values are copied: r may change afterwards.
func ContentsOf(r *report.Report, kept func(sha string) ([]byte, bool), db *history.DB, stageBase string) *Contents {
	c := &Contents{Workspace: r.Workspace, Kept: kept, History: db, StageBase: stageBase}
	if st := r.Stage; st != nil && st.State == report.StagePending {
		c.StageID = st.ID
	}
	return c
}

// Load returns the before and after contents of c (nil for a side the
// change does not have), each at most max bytes, or an error saying which
// side cannot be had and why. It stops when ctx is done.
func (s *Contents) Load(ctx context.Context, c *diff.Change, max int64) (before, after []byte, err error) {
	var st *stage.Stage
	if s.StageID != "" {
		st, _ = stage.Open(s.StageBase, s.StageID) // a stage applied or gone is one place less to look
	}
	if before, err = s.side(ctx, c.Before, c.Path, false, st, max); err != nil {
		return nil, nil, err
	}
	if after, err = s.side(ctx, c.After, c.Path, true, st, max); err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// side finds one side's content.
func (s *Contents) side(ctx context.Context, e *snapshot.Entry, path string, after bool, st *stage.Stage, max int64) ([]byte, error) {
	if e == nil {
		return nil, nil
	}
	which := "before"
	if after {
		which = "after"
	}
	if e.Type != snapshot.File || e.SHA256 == "" {
		return nil, fmt.Errorf("the %s side is not a file with a known content", which)
	}
	if e.Size > max {
		return nil, fmt.Errorf("the %s-content is %s, over the %d MiB limit", which, report.Size(e.Size), max>>20)
	}
	is := func(b []byte) bool {
		sum := sha256.Sum256(b)
		return int64(len(b)) == e.Size && hex.EncodeToString(sum[:]) == e.SHA256
	}
	if s.Kept != nil {
		if b, ok := s.Kept(e.SHA256); ok && is(b) {
			return b, nil
		}
	}
	if db := s.History; db != nil {
		if b, err := db.Content(ctx, e.SHA256); err == nil && is(b) {
			return b, nil
		}
		if key, err := history.WorkspaceKey(s.Workspace); err == nil {
			if b, err := db.Text(ctx, key, e.SHA256); err == nil && is(b) {
				return b, nil
			}
		}
	}
	var dirs []string
	if after && st != nil {
		dirs = append(dirs, st.Root())
	}
	dirs = append(dirs, s.Workspace)
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if b, err := snapshot.ReadContent(dir, path, max); err == nil && is(b) {
			return b, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if after {
		return nil, fmt.Errorf("the after-content (%s) is gone: the file changed since the run, and no copy was kept", report.Size(e.Size))
	}
	return nil, fmt.Errorf("the before-content (%s) was not kept: the run changed the file in place, and diffgate keeps copies of text files up to %d KiB only; a staged run keeps the workspace as it was until it is applied",
		report.Size(e.Size), textdiff.MaxInput>>10)
}
