//go:build !js

package ui

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/history"
)

// dbTimeout bounds one history operation started from the UI (the database
// retries while another process, e.g. the CLI, holds the write lock).
const dbTimeout = 15 * time.Second

// History is the app's run history: an adapter over a core/history
// database (SQLite) that the CLI shares. Every method is safe to call from
// any goroutine.
type History struct {
	db *history.DB
	// marks carries viewed-mark writes to the goroutine that performs
	// them one at a time, in the order they were made (started by the
	// first one); marksDone closes when it has finished.
	marksOnce sync.Once
	marks     chan func()
	marksDone chan struct{}
}

// OpenHistory opens the history database at path; "" means
// history.DefaultPath() ($DIFFGATE_DB, else the user's config directory).
// A file that is corrupt, foreign or too new is refused with a one-line
// error and left untouched.
func OpenHistory(path string, log zerolog.Logger) (*History, error) {
	if path == "" {
		p, err := history.DefaultPath()
		if err != nil {
			return nil, err
		}
		path = p
	}
	db, err := history.Open(path, log)
	if err != nil {
		return nil, err
	}
	return &History{db: db}, nil
}

// Path is the database file's absolute path.
func (h *History) Path() string { return h.db.Path() }

// Close waits for the viewed-mark writes queued so far and closes the
// database.
func (h *History) Close() error {
	h.marksOnce.Do(func() {}) // no writer may start after this
	if h.marks != nil {
		close(h.marks)
		<-h.marksDone
		h.marks = nil
	}
	return h.db.Close()
}

// Viewed returns the paths of run runID's changes marked viewed.
func (h *History) Viewed(runID int64) ([]string, error) {
	c, cancel := dbCtx()
	defer cancel()
	return h.db.Viewed(c, runID)
}

// SetViewedLater marks (or clears) the viewed marks of paths of run runID
// off the calling goroutine; writes happen one at a time, in the order of
// the calls. failed, when the write fails, is called with the error (on
// the writer's goroutine). Calls after Close are dropped. Like Close, it
// is called from the UI goroutine only.
func (h *History) SetViewedLater(runID int64, paths []string, viewed bool, failed func(error)) {
	h.marksOnce.Do(func() {
		h.marks, h.marksDone = make(chan func(), 256), make(chan struct{})
		go func() {
			defer close(h.marksDone)
			for f := range h.marks {
				f()
			}
		}()
	})
	if h.marks == nil {
		return
	}
	h.marks <- func() {
		c, cancel := dbCtx()
		defer cancel()
		if err := h.db.SetViewed(c, runID, paths, viewed); err != nil && failed != nil {
			failed(err)
		}
	}
}

func dbCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), dbTimeout)
}

// LatestAllowlist returns the workspace's newest approved allowlist, nil
// when there is none.
func (h *History) LatestAllowlist(workspace string) (*history.Allowlist, error) {
	c, cancel := dbCtx()
	defer cancel()
	return h.db.LatestAllowlist(c, workspace)
}

// Allowlists returns every approved version of the workspace's allowlist,
// oldest first.
func (h *History) Allowlists(workspace string) ([]history.Allowlist, error) {
	c, cancel := dbCtx()
	defer cancel()
	return h.db.Allowlists(c, workspace)
}

// List returns the runs f selects, newest first.
func (h *History) List(f history.Filter) ([]history.Summary, error) {
	c, cancel := dbCtx()
	defer cancel()
	return h.db.List(c, f)
}

// Count returns how many runs f selects.
func (h *History) Count(f history.Filter) (int, error) {
	c, cancel := dbCtx()
	defer cancel()
	return h.db.Count(c, f)
}

// Workspaces lists the workspaces that have runs, most recently used first.
func (h *History) Workspaces() ([]string, error) {
	c, cancel := dbCtx()
	defer cancel()
	return h.db.Workspaces(c, 0)
}

// Allowlist returns one approved version of the workspace's allowlist.
func (h *History) Allowlist(workspace string, version int) (*history.Allowlist, error) {
	c, cancel := dbCtx()
	defer cancel()
	return h.db.Allowlist(c, workspace, version)
}

// Get returns a stored run, rebuilt from the database alone.
func (h *History) Get(id int64) (*history.Run, error) {
	c, cancel := dbCtx()
	defer cancel()
	return h.db.Get(c, id)
}

// Approve saves entries as the next version of the workspace's allowlist
// and, when runID is a recorded run, records the approval on it.
func (h *History) Approve(runID int64, workspace string, entries []string, note string) (*history.Allowlist, error) {
	c, cancel := dbCtx()
	defer cancel()
	if runID > 0 {
		return h.db.ApproveRun(c, runID, workspace, entries, note)
	}
	return h.db.Approve(c, workspace, entries, note)
}

// Reject records that the reviewer rejected run runID.
func (h *History) Reject(runID int64, note string) error {
	c, cancel := dbCtx()
	defer cancel()
	return h.db.Decide(c, runID, history.Reject, note)
}
