package main

import (
	"context"
	"time"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/snapshot"
)

// historyRun is the history database as one gated run uses it: the approved
// allowlist in, the hash cache in, the record out.
type historyRun struct {
	db        *history.DB
	workspace string
	version   int
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

// latestAllowlist returns the workspace's latest approved entries.
func (h *historyRun) latestAllowlist(ctx context.Context) ([]string, error) {
	al, err := h.db.LatestAllowlist(ctx, h.workspace)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if al == nil {
		return nil, usagef("no approved allowlist for %s (approve one with: diffgate allowlist approve)", h.workspace)
	}
	h.version = al.Version
	return al.Entries, nil
}

// hashCache returns the workspace's cached hashes, or nil (a cache is an
// optimisation: problems reading it only cost a full hash).
func (h *historyRun) hashCache(ctx context.Context) *snapshot.Manifest {
	m, err := h.db.HashCache(ctx, h.workspace)
	if err != nil {
		return nil
	}
	return m
}

// recordTimeout bounds recording a run once the run itself is over.
const recordTimeout = 2 * time.Minute

// record stores the run, its contents and the new hash cache. A cancelled
// run (SIGINT, SIGTERM) is recorded too: the record does not inherit the
// run's cancellation, only a bound of its own.
func (h *historyRun) record(ctx context.Context, res *gate.Result) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	run := &history.Run{Report: res.Report, ScriptText: res.ScriptText, AllowlistVersion: h.version}
	_, err := h.db.Record(ctx, run, res.Contents, res.After)
	return err
}

// content returns a lookup of stored contents by SHA-256, for the text
// diffs of files whose hashes came from the cache.
func (h *historyRun) content(ctx context.Context) func(string) ([]byte, bool) {
	return func(sha string) ([]byte, bool) {
		data, err := h.db.Content(ctx, sha)
		return data, err == nil
	}
}
