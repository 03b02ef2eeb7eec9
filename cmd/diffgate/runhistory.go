package main

import (
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/proc"
)

// historyRun is the history database opened for one gated run (the run
// itself goes through core/pipeline).
type historyRun struct {
	db        *history.DB
	workspace string
}

// openRunHistory opens the history database for a run of workspace,
// refusing a database inside the workspace it gates.
func (c *cli) openRunHistory(dbFlag, workspace string) (*historyRun, error) {
	// A gated script must not record runs (or approve its own allowlist):
	// refuse before the script runs, not after.
	if proc.InGatedRun() {
		return nil, usagef("run: recording the run %v; use --no-history", history.ErrInGatedRun)
	}
	path := dbFlag
	if path == "" {
		var err error
		if path, err = history.DefaultPath(); err != nil {
			return nil, usagef("%v", err)
		}
	}
	// Check before opening: opening would create the file.
	if err := history.CheckOutside(path, workspace); err != nil {
		return nil, usagef("%v", err)
	}
	db, err := openHistory(path)
	if err != nil {
		return nil, err
	}
	if db.ReadOnly() {
		db.Close()
		return nil, usagef("history database %s is read-only (no write access), so the run could not be recorded; use a writable --db or --no-history", db.Path())
	}
	ws, err := history.WorkspaceKey(workspace)
	if err != nil {
		db.Close()
		return nil, usagef("%v", err)
	}
	return &historyRun{db: db, workspace: ws}, nil
}

func (h *historyRun) close() { h.db.Close() }
