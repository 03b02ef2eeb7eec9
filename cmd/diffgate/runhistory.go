package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/proc"
)

// historyRun is the history database opened for one gated run (the run
// itself goes through core/pipeline).
type historyRun struct {
	db        *history.DB
	workspace string
	// offline is the team store (its URL) that could not be reached: the
	// run is recorded in the local history db instead, pending a push.
	offline string
}

// openRunHistory opens the history database for a run of workspace,
// refusing a database inside the workspace it gates.
func (c *cli) openRunHistory(dbFlag, workspace string, fromHistory bool) (*historyRun, error) {
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
	var offline string
	var db *history.DB
	if history.IsURL(path) {
		var err error
		db, err = history.Open(path, zerolog.Nop())
		if err != nil && errors.Is(err, history.ErrUnreachable) {
			if fromHistory {
				// Never pass on an allowlist it could not fetch.
				return nil, usagef("run: --allowlist-from-history: %v", err)
			}
			// Record here, say so, and push it later.
			offline = path
			if path, err = history.LocalPath(); err != nil {
				return nil, usagef("%v", err)
			}
			if err := history.CheckOutside(path, workspace); err != nil {
				return nil, usagef("%v", err)
			}
		} else if err != nil {
			return nil, usagef("%v", err)
		}
	}
	if db == nil {
		var err error
		if db, err = openHistory(path); err != nil {
			return nil, err
		}
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
	return &historyRun{db: db, workspace: ws, offline: offline}, nil
}

func (h *historyRun) close() { h.db.Close() }

// recorded tells, for a run recorded locally because its team store was
// unreachable, that it was and how to send it; the run waits for
// diffgate history push.
func (h *historyRun) recorded(ctx context.Context, w io.Writer, runID int64) error {
	if h.offline == "" || runID <= 0 {
		return nil
	}
	if err := h.db.MarkPending(ctx, runID, h.offline); err != nil {
		return err
	}
	fmt.Fprintf(w, "diffgate: team store %s unreachable: run recorded locally as run %d in %s; send it with: diffgate history push --db %s\n",
		history.Redact(h.offline), runID, h.db.Path(), quoteArg(history.Redact(h.offline)))
	return nil
}

// historyPush: diffgate history push --db URL [--from PATH]. Sends the
// runs the local history (--from, else the local default) holds for the
// team store at URL, oldest first; each becomes a new run there and stops
// being pending here. Both chains stay valid.
func (c *cli) historyPush(args []string) error {
	fs := newFlags("history push")
	dbFlag := fs.String("db", "", "the team store's `URL` (default: $"+history.EnvDB+")")
	from := fs.String("from", "", "the local history `PATH` (default: the local default)")
	if _, err := parseN(fs, args, 0); err != nil {
		return err
	}
	url := *dbFlag
	if url == "" {
		url, _ = history.DefaultPath()
	}
	if !history.IsURL(url) {
		return usagef("history push: --db postgres://... (a team store) is required")
	}
	local := *from
	if local == "" {
		var err error
		if local, err = history.LocalPath(); err != nil {
			return usagef("%v", err)
		}
	}
	ldb, err := openHistory(local)
	if err != nil {
		return err
	}
	defer ldb.Close()
	ids, err := ldb.Pending(c.ctx, url)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		fmt.Fprintf(c.stderr, "diffgate: no runs wait for %s in %s\n", history.Redact(url), ldb.Path())
		return nil
	}
	team, err := openHistory(url)
	if err != nil {
		return err
	}
	defer team.Close()
	for _, id := range ids {
		tid, err := ldb.Push(c.ctx, team, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "pushed run %d as run %d\n", id, tid)
	}
	return nil
}
