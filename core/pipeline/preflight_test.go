//go:build !js

package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
)

// preflightRun is Preflight then Run, as the front ends do.
func preflightRun(ctx context.Context, o Options) (*Result, error) {
	p, err := Preflight(o)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return Run(ctx, p)
}

// TestPreflightResolvesTheWorkspaceOnce: the gate gets the workspace as
// Preflight resolved it (a symlink followed), and the report names it.
func TestPreflightResolvesTheWorkspaceOnce(t *testing.T) {
	ws, scripts, db := setup(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(ws)
	var root string
	runner := func(ctx context.Context, cfg gate.Config) (*gate.Result, error) {
		root = cfg.Root.Path()
		return gate.Run(ctx, cfg)
	}
	p, err := Preflight(Options{Config: gate.Config{Workspace: link, Script: script(t, scripts, "true\n")}, History: db, Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	if p.Workspace() != real {
		t.Errorf("Plan.Workspace() = %q, want %q", p.Workspace(), real)
	}
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if root != real || res.Report.Workspace != real {
		t.Errorf("gate got %q, report names %q; want %q", root, res.Report.Workspace, real)
	}
	for _, bad := range []string{filepath.Join(ws, "missing"), script(t, scripts, "true\n")} {
		_, err := Preflight(Options{Config: gate.Config{Workspace: bad}})
		var se *gate.SetupError
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "workspace ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Preflight(%s) = %v, want a one-line workspace setup error", bad, err)
		}
	}
	if _, err := Run(context.Background(), Plan{}); err == nil {
		t.Error("Run of a Plan without Preflight ran")
	}
}

// TestPreflightHidesTheDatabase: the history database's files are denied
// to the contained script whether the run is recorded in it (opened or by
// path) or not (the default database).
func TestPreflightHidesTheDatabase(t *testing.T) {
	ws, scripts, db := setup(t)
	other := filepath.Join(t.TempDir(), "other.db")
	def := filepath.Join(t.TempDir(), "default.db")
	t.Setenv(history.EnvDB, def)
	cfg := gate.Config{Workspace: ws, Script: script(t, scripts, "true\n"), Contain: contain.Policy{Mode: contain.Auto, Hidden: []string{"/keep"}}}
	for _, c := range []struct {
		name string
		o    Options
		db   string
	}{
		{"opened", Options{Config: cfg, History: db}, db.Path()},
		{"path", Options{Config: cfg, HistoryPath: other}, other},
		{"none", Options{Config: cfg}, def},
	} {
		p, err := Preflight(c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := p.o.Config.Contain.Hidden
		if want := append([]string{"/keep"}, history.Files(c.db)...); !slices.Equal(got, want) {
			t.Errorf("%s: hidden %v, want %v", c.name, got, want)
		}
		if (p.History() != nil) != (c.name != "none") {
			t.Errorf("%s: history %v", c.name, p.History())
		}
		p.Close()
	}
	if len(cfg.Contain.Hidden) != 1 {
		t.Errorf("Preflight changed its caller's policy: %v", cfg.Contain.Hidden)
	}
}

// TestPreflightRefusesTheDatabaseInside: a database inside the workspace
// is refused before it is created, and its error reaches the caller as
// is: a second hard link is reported as such, not as "inside".
func TestPreflightRefusesTheDatabaseInside(t *testing.T) {
	ws, scripts, _ := setup(t)
	sc := script(t, scripts, "true\n")
	inside := filepath.Join(ws, ".diffgate", "h.db")
	_, err := Preflight(Options{Config: gate.Config{Workspace: ws, Script: sc}, HistoryPath: inside})
	var se *gate.SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "lies inside the workspace") {
		t.Fatalf("database inside: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(inside)); err == nil {
		t.Error("Preflight created the database it refused")
	}
	outside := filepath.Join(t.TempDir(), "h.db")
	db, err := history.Open(outside, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := os.Link(outside, filepath.Join(t.TempDir(), "second")); err != nil {
		t.Fatal(err)
	}
	_, err = Preflight(Options{Config: gate.Config{Workspace: ws, Script: sc}, History: db})
	if err == nil || !strings.Contains(err.Error(), "2 hard links") || strings.Contains(err.Error(), "inside the workspace "+ws+";") {
		t.Errorf("second hard link: %v", err)
	}
}

// TestPriorCacheWithoutHistory: without history the pipeline keeps the
// last after-manifest for the next run's hash reuse; with a record it
// forgets it (the history holds the hash cache).
func TestPriorCacheWithoutHistory(t *testing.T) {
	ws, scripts, db := setup(t)
	var priors []bool
	runner := func(ctx context.Context, cfg gate.Config) (*gate.Result, error) {
		priors = append(priors, cfg.Prior != nil)
		return gate.Run(ctx, cfg)
	}
	cache := &PriorCache{}
	cfg := gate.Config{Workspace: ws, Script: script(t, scripts, "true\n")}
	for range 2 {
		if _, err := preflightRun(context.Background(), Options{Config: cfg, Runner: runner, Cache: cache}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := preflightRun(context.Background(), Options{Config: cfg, Runner: runner, Cache: cache, History: db}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(priors, []bool{false, true, true}) {
		t.Errorf("priors given: %v", priors)
	}
	key, _ := filepath.EvalSymlinks(ws)
	if cache.get(key) != nil {
		t.Error("a recorded run's manifest is still cached")
	}
}
