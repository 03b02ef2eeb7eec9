//go:build !js

package history

import (
	"context"
	"database/sql"
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
	return db.write(ctx, "mark viewed", func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE id = ?", runID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("run %d: %w", runID, ErrNotFound)
		}
		if !viewed {
			st, err := tx.PrepareContext(ctx, "DELETE FROM viewed WHERE run_id = ? AND path = ?")
			if err != nil {
				return err
			}
			defer st.Close()
			for _, p := range paths {
				if _, err := st.ExecContext(ctx, runID, blob(p)); err != nil {
					return err
				}
			}
			return nil
		}
		// Only the run's own changes (one pass over them: changes has no
		// index by path).
		want := make(map[string]bool, len(paths))
		for _, p := range paths {
			want[p] = true
		}
		rows, err := tx.QueryContext(ctx, "SELECT path FROM changes WHERE run_id = ?", runID)
		if err != nil {
			return err
		}
		var mark []string
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				rows.Close()
				return err
			}
			if want[p] {
				mark = append(mark, p)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, "INSERT OR IGNORE INTO viewed (run_id, path, at) VALUES (?, ?, ?)")
		if err != nil {
			return err
		}
		defer st.Close()
		for _, p := range mark {
			if _, err := st.ExecContext(ctx, runID, blob(p), at); err != nil {
				return err
			}
		}
		return nil
	})
}

// Viewed returns the paths of run runID's changes the reviewer marked
// viewed, in byte order.
func (db *DB) Viewed(ctx context.Context, runID int64) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT path FROM viewed WHERE run_id = ? ORDER BY path", runID)
	if err != nil {
		return nil, fmt.Errorf("run %d: viewed: %w", runID, errText(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("run %d: viewed: %w", runID, errText(err))
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("run %d: viewed: %w", runID, errText(err))
	}
	return out, nil
}
