//go:build !js

package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LocalPath returns the local history file: $DIFFGATE_DB when it names a
// file, else history.db in the user's configuration directory. A run whose
// team store cannot be reached is recorded there.
func LocalPath() (string, error) {
	if p := os.Getenv(EnvDB); p != "" && !IsURL(p) {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("history database: no default location (%v); set %s to a file", err, EnvDB)
	}
	return filepath.Join(dir, "diffgate", "history.db"), nil
}

// MarkPending notes that run runID, recorded in this local history, is
// meant for the team store store (its URL) and waits for Push.
func (db *DB) MarkPending(ctx context.Context, runID int64, store string) error {
	if db.pg {
		return errors.New("mark pending: a team store pushes nothing")
	}
	return db.write(ctx, "mark pending", func(tx *sqlTx) error {
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO pending_push (run_id, store) VALUES (?, ?)", runID, Redact(store))
		return err
	})
}

// Pending lists the runs waiting for the team store store (its URL),
// oldest first.
func (db *DB) Pending(ctx context.Context, store string) ([]int64, error) {
	if db.pg {
		return nil, nil
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT run_id FROM pending_push WHERE store = ? ORDER BY run_id", Redact(store))
	if err != nil {
		return nil, fmt.Errorf("pending runs: %w", dbError(err))
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("pending runs: %w", dbError(err))
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Push sends the pending run runID of this local history to the team
// store to: recorded there as a new run (a new link of its chain, its
// workspace under its stable id, its stored contents with it), then no
// longer pending here. The local run and chain stay as they are. It returns
// the run's id on the team store.
func (db *DB) Push(ctx context.Context, to *DB, runID int64) (int64, error) {
	if err := refuseInGatedRun("push"); err != nil {
		return 0, err
	}
	run, err := db.Get(ctx, runID)
	if err != nil {
		return 0, fmt.Errorf("push run %d: %w", runID, err)
	}
	contents := func(sha string) ([]byte, bool) {
		b, err := db.Content(ctx, sha)
		return b, err == nil
	}
	// A reopened report holds the stage's state; the record keeps its id
	// and mechanism only (the events are this machine's).
	if st := run.Report.Stage; st != nil {
		st.State = ""
	}
	id, err := to.Record(ctx, &Run{Report: run.Report, ScriptText: run.ScriptText, AllowlistVersion: run.AllowlistVersion}, contents, nil)
	if err != nil {
		return 0, fmt.Errorf("push run %d: %w", runID, err)
	}
	err = db.write(ctx, "push", func(tx *sqlTx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM pending_push WHERE run_id = ?", runID)
		return err
	})
	if err != nil {
		return id, fmt.Errorf("push run %d: sent as run %d, but %w", runID, id, err)
	}
	db.log.Info().Int64("run", runID).Int64("team_run", id).Str("store", to.path).Msg("run pushed")
	return id, nil
}
