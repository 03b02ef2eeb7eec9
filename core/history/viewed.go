//go:build !js

package history

import (
	"context"
	"fmt"
	"time"
)

// SetViewed marks the changes at paths of run runID as viewed by the
// reviewer (or clears the marks when viewed is false). Paths that are not
// changes of the run are ignored. Marks are the reviewer's progress, not
// links of the hash chain. An unknown run gives an error wrapping
// ErrNotFound.
func (db *DB) SetViewed(ctx context.Context, runID int64, paths []string, viewed bool) error {
	if err := refuseInGatedRun("mark viewed"); err != nil {
		return err
	}
	at := formatTime(time.Now().UTC())
	return db.write(ctx, "mark viewed", func(tx *sqlTx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		q, args := "DELETE FROM viewed WHERE run_id = ? AND path = ?", func(p string) []any { return []any{runID, blob(p)} }
		if viewed {
			// Only the run's own changes (one pass over them: changes has
			// no index by path).
			want := make(map[string]bool, len(paths))
			for _, p := range paths {
				want[p] = true
			}
			all, err := queryStrings(ctx, tx, "SELECT path FROM changes WHERE run_id = ?", runID)
			if err != nil {
				return err
			}
			paths = paths[:0:0]
			for _, p := range all {
				if want[p] {
					paths = append(paths, p)
				}
			}
			q, args = "INSERT OR IGNORE INTO viewed (run_id, path, at) VALUES (?, ?, ?)", func(p string) []any { return []any{runID, blob(p), at} }
		}
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, p := range paths {
			if _, err := st.ExecContext(ctx, args(p)...); err != nil {
				return err
			}
		}
		return nil
	})
}

// Viewed returns the paths of run runID's changes the reviewer marked
// viewed, in byte order.
func (db *DB) Viewed(ctx context.Context, runID int64) ([]string, error) {
	out, err := queryStrings(ctx, db.sql, "SELECT path FROM viewed WHERE run_id = ? ORDER BY path", runID)
	if err != nil {
		return nil, fmt.Errorf("run %d: viewed: %w", runID, dbError(err))
	}
	return out, nil
}

// queryStrings returns the one column of text (or BLOB) that query selects.
func queryStrings(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// runExists returns an error wrapping ErrNotFound unless run runID is in
// the database.
func runExists(ctx context.Context, q querier, runID int64) error {
	var n int
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE id = ?", runID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("run %d: %w", runID, ErrNotFound)
	}
	return nil
}
