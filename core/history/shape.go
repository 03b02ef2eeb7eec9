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
	var data []byte
	err := db.sql.QueryRowContext(ctx, "SELECT data FROM workspace_shape WHERE workspace = ?", blob(workspace)).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace shape: %w", errText(err))
	}
	return data, nil
}

// SetWorkspaceShape stores data as workspace's shape, from run runID; nil
// data drops it (the workspace changed in a way no walk saw: an apply).
func (db *DB) SetWorkspaceShape(ctx context.Context, workspace string, runID int64, data []byte) error {
	if err := refuseInGatedRun("store workspace shape"); err != nil {
		return err
	}
	return db.write(ctx, "workspace shape", func(tx *sql.Tx) error {
		if data == nil {
			_, err := tx.ExecContext(ctx, "DELETE FROM workspace_shape WHERE workspace = ?", blob(workspace))
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO workspace_shape (workspace, run_id, data) VALUES (?, ?, ?)",
			blob(workspace), runID, data)
		return err
	})
}
