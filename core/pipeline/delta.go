//go:build !js

package pipeline

import (
	"context"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/rs/zerolog"
)

// stageShape returns the workspace's shape (stage.Shape) as its latest
// full walk left it in the history, for a staged run: nil when there is
// none, or it cannot be read (the run then walks the workspace).
func stageShape(ctx context.Context, db *history.DB, key string, log zerolog.Logger) *stage.Shape {
	data, err := db.WorkspaceShape(ctx, key)
	if err != nil || data == nil {
		if err != nil {
			log.Warn().Err(err).Msg("workspace shape")
		}
		return nil
	}
	s, err := stage.DecodeShape(data)
	if err != nil {
		log.Warn().Err(err).Msg("workspace shape")
		return nil
	}
	return s
}

// keepShape stores the shape a run found (a staged run that walked the
// workspace), keeps the one an overlay-staged run without a walk trusted,
// and forgets it after any other run, whose script could change the
// workspace.
func keepShape(ctx context.Context, db *history.DB, key string, runID int64, res *gate.Result, log zerolog.Logger) {
	var err error
	switch {
	case res.Shape != nil:
		err = db.SetWorkspaceShape(ctx, key, runID, res.Shape.Encode())
	case res.Delta:
	default:
		err = forgetShape(ctx, db, key)
	}
	if err != nil {
		log.Warn().Err(err).Msg("workspace shape")
	}
}

// forgetShape drops the workspace's shape, if it has one: something changed
// the workspace that no walk saw (a direct run's script, an apply).
func forgetShape(ctx context.Context, db *history.DB, key string) error {
	if data, err := db.WorkspaceShape(ctx, key); err != nil || data == nil {
		return err
	}
	return db.SetWorkspaceShape(ctx, key, 0, nil)
}
