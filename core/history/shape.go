package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// WorkspaceShape returns the shape the latest full walk of workspace left
// (SetWorkspaceShape; opaque bytes, core/stage.Shape's encoding), or nil,
// nil when there is none.
func (db *DB) WorkspaceShape(ctx context.Context, workspace string) ([]byte, error) {
	if db.pg { // a cache of this machine's walk: in the local file
		if c := db.caches(); c != nil {
			return c.WorkspaceShape(ctx, workspace)
		}
		return nil, nil
	}
	var data []byte
	err := db.sql.QueryRowContext(ctx, "SELECT data FROM workspace_shape WHERE workspace = ?", blob(workspace)).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace shape: %w", dbError(err))
	}
	return data, nil
}

// SetWorkspaceShape stores data as workspace's shape, from run runID; nil
// data drops it (the workspace changed in a way no walk saw: an apply).
func (db *DB) SetWorkspaceShape(ctx context.Context, workspace string, runID int64, data []byte) error {
	if err := refuseInGatedRun("store workspace shape"); err != nil {
		return err
	}
	if db.pg {
		if c := db.caches(); c != nil {
			return c.SetWorkspaceShape(ctx, workspace, runID, data)
		}
		return nil
	}
	return db.write(ctx, "workspace shape", func(tx *sqlTx) error {
		if data == nil {
			_, err := tx.ExecContext(ctx, "DELETE FROM workspace_shape WHERE workspace = ?", blob(workspace))
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO workspace_shape (workspace, run_id, data) VALUES (?, ?, ?)",
			blob(workspace), runID, data)
		return err
	})
}
