package gate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/stage"
)

// shapeGitDirs lists the git directories of the run's shape below dir (the
// workspace, where an overlay-staged script runs), and the workspace's own
// .git when it is a directory now (it is the one most likely made since
// the shape's walk).
func (g *run) shapeGitDirs(dir string) []string {
	var out []string
	for _, d := range g.cfg.Shape.GitDirs {
		out = append(out, filepath.Join(dir, filepath.FromSlash(d)))
	}
	top := filepath.Join(dir, ".git")
	if fi, err := os.Lstat(top); err == nil && fi.IsDir() && !slices.Contains(out, top) {
		out = append(out, top)
		slices.Sort(out)
	}
	return out
}

// finishDelta finishes an overlay-staged run that took no before-snapshot
// (Config.Shape): the upper layer gives the changes, the workspace (the
// lower layer, which the script could not write) their before side
// (stage.Read). Where that cannot stand in for a walk, stage.CheckDelta
// says so: a symlink among the changes brings in every symlink of the
// workspace (so an untouched one that now leads outside is seen), and an
// entry the overlay could not have staged as a direct run would is
// reported unreadable, which fails the gate. The run stores no hash cache
// (Result.After is nil): it hashed only what the script touched.
func (g *run) finishDelta(ctx context.Context, pr *proc.Result) (*Result, error) {
	t := time.Now()
	g.res.Delta = true
	d, err := g.cfg.Stage.Read(ctx)
	var before, after *snapshot.Manifest
	if err != nil {
		// The whole workspace is unknown: the root's own entry says why.
		before, _ = snapshot.Paths(ctx, g.ws, nil, snapshot.PathsOptions{})
		if before == nil || before.Self == nil {
			before = &snapshot.Manifest{Root: g.ws, Self: &snapshot.Entry{Path: diff.RootPath, Type: snapshot.Dir}}
		}
		self := *before.Self
		self.Err = "cannot read the stage: " + err.Error()
		after = &snapshot.Manifest{Root: g.ws, CreatedAt: time.Now(), Self: &self}
	} else {
		before, after = d.Before, d.After
		walk, unfaithful := stage.CheckDelta(g.ws, d, g.cfg.Shape, g.start)
		for _, u := range unfaithful {
			g.unknown = append(g.unknown, diff.Unknown{Path: u.Path, When: "after", Reason: u.Reason})
		}
		if walk {
			if before, err = stage.WithLowerSymlinks(ctx, g.ws, d); err != nil {
				self := *d.After.Self
				self.Err = "cannot list the workspace's symlinks: " + err.Error()
				before, after = d.Before, &snapshot.Manifest{Root: g.ws, CreatedAt: time.Now(), Self: &self}
			} else {
				after = stage.Merge(before, d)
			}
		}
		g.cfg.Log.Info().Int("after_entries", len(d.After.Entries)).Int("before_entries", len(d.Before.Entries)).
			Bool("symlinks", walk).Int("unfaithful", len(unfaithful)).Dur("elapsed", time.Since(t)).Msg("stage read (no before-snapshot)")
	}
	if g.res.StageCost == nil {
		g.res.StageCost = &StageCost{}
	}
	g.res.StageCost.Read = time.Since(t)
	res, err := g.finish(before, after, pr)
	if res != nil {
		res.After = nil // no walk: no hash cache to store
	}
	return res, err
}
