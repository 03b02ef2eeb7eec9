//go:build !js

package pipeline

import (
	"errors"
	"fmt"
	"sync"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/internal/fspath"
)

// Plan is a run that Preflight checked: its workspace resolved once, its
// history database checked to lie outside the workspace and to be
// writable, and that database kept from the contained script. Run runs
// it; Close closes a database Preflight opened.
type Plan struct {
	o  Options
	db *history.DB
	// ownDB: Preflight opened db (from Options.HistoryPath).
	ownDB bool
	// offline is the team store (its URL) that could not be reached: db
	// is the local history file, where the run waits for a push.
	offline string
}

// Workspace is the run's workspace as Preflight resolved it.
func (p Plan) Workspace() string { return p.o.Config.Root.Path() }

// History is the database the run is recorded in (nil: none).
func (p Plan) History() *history.DB { return p.db }

// Close closes the history database when Preflight opened it.
func (p Plan) Close() {
	if p.ownDB && p.db != nil {
		p.db.Close()
	}
}

// Preflight checks a run's inputs before anything runs, in one place for
// every front end:
//   - the workspace is resolved once (absolute, symlinks resolved, a
//     directory) and handed down as it is to the snapshots;
//   - the history database (Options.History, else the one at HistoryPath,
//     which Preflight opens once it knows where it lies) must lie outside
//     the workspace, have a single link, and be writable;
//   - the database's files are hidden from the contained script (a secret
//     store), with or without history;
//   - the options agree (the approved allowlist and a stage need the
//     history, a stage needs containment, a known mechanism).
//
// The error is a *gate.SetupError whose message says what is wrong, as it
// is: the front ends show it unchanged.
func Preflight(o Options) (Plan, error) {
	o.Config.Allow = append([]string(nil), o.Config.Allow...)
	root, err := gate.ResolveWorkspace(o.Config.Workspace)
	if err != nil {
		return Plan{}, err
	}
	o.Config.Root = root
	dbPath := o.HistoryPath
	if o.History != nil {
		dbPath = o.History.Path()
	}
	if dbPath == "" {
		dbPath, _ = history.DefaultPath() // not recorded in: only hidden
	}
	recorded := o.History != nil || o.HistoryPath != ""
	switch {
	case o.FromHistory && !recorded:
		return Plan{}, setupf("the approved allowlist needs the history")
	case o.Stage && !recorded:
		return Plan{}, setupf("--stage needs the history (apply and discard read the run's record)")
	case o.Stage && !o.Config.Contain.Enabled():
		// Uncontained, the script reaches the real workspace past the
		// stage: through /proc/PID/root or /proc/PID/cwd of the gate or of
		// any process of the user, or by unmounting the overlay.
		return Plan{}, setupf("--stage needs containment (--contain=off would let the script write the workspace past the stage)")
	}
	switch o.StageMechanism {
	case "", StageAuto, stage.Overlay, stage.Copy:
	default:
		return Plan{}, setupf("stage mechanism %q: want auto, overlay or copy", o.StageMechanism)
	}
	// The history database is a secret store too, recorded in or not.
	if dbPath != "" {
		hidden := append([]string(nil), o.Config.Contain.Hidden...)
		o.Config.Contain.Hidden = append(hidden, history.Files(dbPath)...)
	}
	if !recorded {
		return Plan{o: o}, nil
	}
	// A gated script must not record runs (or approve its own allowlist):
	// refuse before the script runs, not after.
	if proc.InGatedRun() {
		return Plan{}, setupf("recording the run %v; use --no-history", history.ErrInGatedRun)
	}
	// Checked before opening: opening would create the file.
	if err := history.CheckOutside(dbPath, root); err != nil {
		return Plan{}, setupf("%v", err)
	}
	plan := Plan{o: o, db: o.History}
	if plan.db == nil {
		db, offline, err := openHistory(dbPath, root, o)
		if err != nil {
			return Plan{}, err
		}
		plan.db, plan.ownDB, plan.offline = db, true, offline
	}
	if plan.db.ReadOnly() { // say so before the script runs, not after
		plan.Close()
		return Plan{}, setupf("history database %s is read-only (no write access), so the run could not be recorded; use a writable --db or --no-history", plan.db.Path())
	}
	return plan, nil
}

// openHistory opens the history database at dbPath. A team store (a URL)
// that cannot be reached is stood in for by the local history file, where
// the run waits for diffgate history push (offline: the store's URL),
// except for a run that needs the store's approved allowlist: it never
// passes on one it could not fetch.
func openHistory(dbPath string, root fspath.Dir, o Options) (db *history.DB, offline string, err error) {
	db, err = history.Open(dbPath, o.Config.Log)
	if err == nil || !history.IsURL(dbPath) || !errors.Is(err, history.ErrUnreachable) {
		if err != nil {
			return nil, "", setupf("%v", err)
		}
		return db, "", nil
	}
	if o.FromHistory {
		return nil, "", setupf("--allowlist-from-history: %v", err)
	}
	local, lerr := history.LocalPath()
	if lerr != nil {
		return nil, "", setupf("%v", lerr)
	}
	if err := history.CheckOutside(local, root); err != nil {
		return nil, "", setupf("%v", err)
	}
	if db, err = history.Open(local, o.Config.Log); err != nil {
		return nil, "", setupf("%v", err)
	}
	return db, dbPath, nil
}

func setupf(format string, a ...any) error { return &gate.SetupError{Msg: fmt.Sprintf(format, a...)} }

// PriorCache keeps each workspace's last after-manifest for the next run's
// hash reuse where the history holds no hash cache (a run without
// history, or one whose record failed). A front end keeps one for its
// session; the zero value is ready to use.
type PriorCache struct {
	mu sync.Mutex
	m  map[string]*snapshot.Manifest
}

func (c *PriorCache) get(ws string) *snapshot.Manifest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[ws]
}

// put keeps m for ws, or forgets ws (m nil): a manifest of a large tree is
// tens of MB, kept only while the history does not hold it.
func (c *PriorCache) put(ws string, m *snapshot.Manifest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m == nil {
		delete(c.m, ws)
		return
	}
	if c.m == nil {
		c.m = map[string]*snapshot.Manifest{}
	}
	c.m[ws] = m
}
