//go:build !js

// Package history is diffgate's record of past runs: a SQLite database
// (pure Go, modernc.org/sqlite) holding every run with its changes, the
// before and after contents of small changed files (content-addressed,
// compressed, deduplicated), reviewers' decisions, approved allowlists
// (versioned per workspace) and a per-workspace hash cache that lets a
// repeated run's before-snapshot reuse file hashes.
//
// Runs form a hash chain: each run row carries the SHA-256 of a canonical
// encoding of its content (its changes included) and of the previous run's
// hash, so Verify finds a row edited behind diffgate's back.
//
// Several processes (the CLI and the desktop app) may write one database at
// the same time: connections use WAL, a busy timeout and BEGIN IMMEDIATE
// transactions, and writes are retried while the database is busy.
package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"modernc.org/sqlite"

	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/oneline"
)

// EnvDB names the environment variable that overrides the default database path.
const EnvDB = "DIFFGATE_DB"

// applicationID marks a SQLite file as a diffgate history ("DgHT").
const applicationID = 0x44674854

// busyTimeout is how long one statement waits for a lock (milliseconds);
// writeRetry bounds how long a write transaction is retried while busy.
const (
	busyTimeout = 10000
	writeRetry  = 2 * time.Minute
)

// ErrNotFound is wrapped by lookups of a run, content or allowlist that is
// not in the database.
var ErrNotFound = errors.New("not found")

// DB is an open history database. It is safe for concurrent use.
type DB struct {
	sql  *sqlDB
	path string // the file's absolute path, or the team store's URL without its password
	pg   bool   // a team store on PostgreSQL (see pg.go)

	// A team store's caches (hash cache, text store) are this machine's:
	// they live in the local history file (LocalPath), opened once needed.
	cacheOnce sync.Once
	cache     *DB
	log       zerolog.Logger
	readOnly  bool
	// memo is the hash cache last loaded (see cacheMemo).
	memo cacheMemo
}

// DefaultPath returns the database path: $DIFFGATE_DB if set, else
// history.db in the user's configuration directory (…/diffgate/history.db).
func DefaultPath() (string, error) {
	if p := os.Getenv(EnvDB); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("history database: no default location (%v); set %s or use --db", err, EnvDB)
	}
	return filepath.Join(dir, "diffgate", "history.db"), nil
}

// Open opens (creating it and its parent directories if needed) the history
// database at path and brings its schema up to date. A file that is not a
// diffgate history, is corrupt, or has a schema newer than this code knows
// is refused with a one-line error naming the file, and is never altered.
func Open(path string, log zerolog.Logger) (*DB, error) {
	return open(path, log, len(migrations))
}

// open is Open, migrating only up to schema version target (tests use it to
// build databases of earlier versions).
func open(path string, log zerolog.Logger, target int) (*DB, error) {
	if IsURL(path) {
		return openPG(path, log)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history database %s: %v", path, err)
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("history database %s: %s", abs, oneline.First(fmt.Sprintf(format, a...)))
	}
	if fi, err := os.Stat(abs); err == nil {
		if !fi.Mode().IsRegular() {
			if fi.IsDir() {
				return nil, fail("is a directory")
			}
			return nil, fail("not a regular file")
		}
		// SQLite would say only "unable to open database file".
		f, err := os.OpenFile(abs, os.O_RDWR, 0)
		if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS) {
			// Readable but not writable: list, show, export and verify
			// still work.
			r, rerr := os.Open(abs)
			if rerr != nil {
				return nil, fail("%v", dbError(rerr))
			}
			r.Close()
			return openReadOnly(abs, log, fail)
		}
		if err != nil {
			return nil, fail("%v", dbError(err))
		}
		f.Close()
	} else if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, fail("create directory: %v", dbError(err))
		}
		// The history holds scripts and file contents: owner only. SQLite
		// gives its -wal and -shm files the database file's permissions.
		f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			f.Close()
		} else if !errors.Is(err, os.ErrExist) {
			return nil, fail("%v", dbError(err))
		}
	} else {
		return nil, fail("%v", dbError(err))
	}
	// Look at the file read-only first, so a foreign, corrupt or newer
	// database is refused before anything (even the journal mode) is written.
	if err := probe(dsn(abs, true)); err != nil {
		if isReadOnly(err) { // a writable file in a read-only directory
			return openReadOnly(abs, log, fail)
		}
		return nil, fail("%v", dbErrorAt(err, abs))
	}
	sdb, err := sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		return nil, fail("%v", dbError(err))
	}
	db := &DB{sql: &sqlDB{DB: sdb}, path: abs, log: log}
	if err := db.migrate(context.Background(), target); err != nil {
		sdb.Close()
		if isReadOnly(err) {
			return openReadOnly(abs, log, fail)
		}
		return nil, fail("%v", err)
	}
	log.Debug().Str("path", abs).Int("schema", target).Msg("history database open")
	return db, nil
}

// openReadOnly opens a database that this process may read but not write
// (a read-only file, directory or file system). SQLite needs to create the
// WAL index (-shm) next to the file even to read; where it cannot, the file
// is read as immutable (a concurrent writer, e.g. its owner, could then
// make a read fail). The schema must be current: an upgrade needs writing.
func openReadOnly(abs string, log zerolog.Logger, fail func(string, ...any) error) (*DB, error) {
	var err error
	for _, d := range []string{dsnReadOnly(abs, false), dsnReadOnly(abs, true)} {
		if err = probe(d); err != nil {
			if isReadOnly(err) {
				continue
			}
			return nil, fail("%v", dbError(err))
		}
		sdb, err := sql.Open("sqlite", d)
		if err != nil {
			return nil, fail("%v", dbError(err))
		}
		db := &DB{sql: &sqlDB{DB: sdb}, path: abs, log: log, readOnly: true}
		v, err := db.SchemaVersion(context.Background())
		if err != nil {
			sdb.Close()
			return nil, fail("%v", dbError(err))
		}
		if v != len(migrations) {
			sdb.Close()
			return nil, fail("read-only, and its schema (version %d) needs an upgrade to version %d, which needs write access", v, len(migrations))
		}
		log.Debug().Str("path", abs).Msg("history database open read-only")
		return db, nil
	}
	return nil, fail("%v", dbError(err))
}

// ReadOnly reports whether the database was opened read-only (the file,
// its directory or its file system is not writable): reads work, every
// write fails with "the database is read-only".
func (db *DB) ReadOnly() bool { return db.readOnly }

// isReadOnly reports whether err is SQLite's SQLITE_READONLY or
// SQLITE_CANTOPEN (e.g. the -wal or -shm file cannot be created).
func isReadOnly(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == 8 || c == 14
	}
	return false
}

// Close closes the database.
func (db *DB) Close() error {
	if db.cache != nil {
		db.cache.Close()
	}
	return db.sql.Close()
}

// Path returns the database file's absolute path.
func (db *DB) Path() string { return db.path }

// Files lists the database file at path and SQLite's companions beside it
// (-wal, -shm): what a contained script must not read.
func Files(path string) []string {
	if IsURL(path) {
		// A team store keeps its caches (and the runs it could not
		// send) in the local history file.
		local, err := LocalPath()
		if err != nil {
			return nil
		}
		path = local
	}
	return []string{path, path + "-wal", path + "-shm"}
}

// dsn returns the modernc.org/sqlite data source name for path. Every
// connection gets the busy timeout; a read-only probe gets query_only and
// nothing that writes, the others WAL, foreign keys and BEGIN IMMEDIATE.
func dsn(path string, readOnly bool) string {
	u := (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath()
	if !strings.HasPrefix(u, "/") {
		u = "/" + u // Windows: file:/C:/...
	}
	q := fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout)
	if readOnly {
		q += "&_pragma=query_only(1)"
	} else {
		q += "&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	}
	return "file:" + u + "?" + q
}

// dsnReadOnly returns the data source name of a read-only connection
// (mode=ro), or, with immutable, of one that takes no locks and needs no
// -shm file.
func dsnReadOnly(path string, immutable bool) string {
	d := dsn(path, true)
	if immutable {
		return d + "&immutable=1"
	}
	return d + "&mode=ro"
}

// probe checks, without writing, that the database at the data source name
// d is empty, a diffgate history or an empty SQLite database, and that its
// schema is not newer than this code knows. SQLite errors are returned as
// they are (see dbError).
func probe(d string) error {
	sdb, err := sql.Open("sqlite", d)
	if err != nil {
		return err
	}
	defer sdb.Close()
	sdb.SetMaxOpenConns(1)
	ctx := context.Background()
	var version, appID, tables int
	// One statement, so one snapshot: another process may be creating the
	// schema right now, and a version read before its commit with tables
	// counted after it would look like a foreign database.
	if err := sdb.QueryRowContext(ctx, `SELECT (SELECT user_version FROM pragma_user_version),
		(SELECT application_id FROM pragma_application_id), (SELECT count(*) FROM sqlite_schema)`).
		Scan(&version, &appID, &tables); err != nil {
		return err
	}
	switch {
	case appID != 0 && appID != applicationID:
		return fmt.Errorf("not a diffgate history database (SQLite application id %#x)", appID)
	case version == 0 && tables > 0:
		return errors.New("not a diffgate history database (an SQLite database with other tables)")
	case version > len(migrations):
		return newerError(version)
	}
	return nil
}

func newerError(version int) error {
	return fmt.Errorf("schema version %d is newer than this diffgate supports (%d); use a newer diffgate (the file was left untouched)", version, len(migrations))
}

// dbError turns driver errors into short, readable reasons.
func dbError(err error) error {
	if err == nil {
		return nil
	}
	if e := pgErrText(err); e != err {
		return e
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 26: // SQLITE_NOTADB
			return errors.New("not an SQLite database (corrupt, or another kind of file)")
		case 11: // SQLITE_CORRUPT
			return errors.New("the database is corrupt")
		case 14: // SQLITE_CANTOPEN
			return fmt.Errorf("cannot open the database file (%s)", se.Error())
		case 8: // SQLITE_READONLY
			return errors.New("the database is read-only")
		case 13: // SQLITE_FULL
			return errors.New("no space left on device (the disk holding the database is full)")
		}
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED (any extended code).
func isBusy(err error) bool {
	if isPGRetry(err) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == 5 || c == 6
	}
	return false
}

// write runs fn in a BEGIN IMMEDIATE transaction and commits, retrying the
// whole transaction while the database is busy (another process writing).
// fn must have no effect outside the transaction.
func (db *DB) write(ctx context.Context, what string, fn func(tx *sqlTx) error) error {
	deadline := time.Now().Add(writeRetry)
	backoff := 5 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := db.tryWrite(ctx, fn)
		if err == nil || !isBusy(err) || time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return fmt.Errorf("%s: %w", what, db.writeError(err))
			}
			return nil
		}
		db.log.Debug().Str("op", what).Int("attempt", attempt).Err(err).Msg("history database busy, retrying")
		sleep := backoff + rand.N(backoff)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(sleep):
		}
		if backoff < 500*time.Millisecond {
			backoff *= 2
		}
	}
}

// lowSpace is the free space under which an I/O error of a write is taken
// for a full disk: SQLite reports some writes on a full disk only as
// "disk I/O error" (e.g. growing the -shm file: SQLITE_IOERR_SHMSIZE).
const lowSpace = 1 << 20

// dbErrorAt is dbError for an error of the database at path: an I/O error
// on a full disk says that the disk is full.
func dbErrorAt(err error, path string) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == 10 { // SQLITE_IOERR
		if free, ok := freeBytes(filepath.Dir(path)); ok && free < lowSpace {
			return errors.New("no space left on device (the disk holding the database is full)")
		}
	}
	return dbError(err)
}

// writeError words a failed write: a full disk or a read-only database says so.
func (db *DB) writeError(err error) error {
	if db.readOnly && isReadOnly(err) {
		return errors.New("the database is read-only (opened without write access)")
	}
	return dbErrorAt(err, db.path)
}

func (db *DB) tryWrite(ctx context.Context, fn func(tx *sqlTx) error) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if db.pg {
		// Writers take turns (BEGIN IMMEDIATE on SQLite): the chain's next
		// link and the next ids are read and written under this lock.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", pgLockKey); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// CheckOutside refuses a database that lies inside the gated workspace (the
// script could rewrite its own history). The workspace comes resolved once
// (fspath.ResolveDir, by the pipeline's Preflight); the database's path is
// resolved here, and need not exist yet. For a team store (a URL) it is the
// local history file that holds its caches.
func CheckOutside(dbPath string, root fspath.Dir) error {
	if root.IsZero() {
		return fmt.Errorf("history database %s: no workspace to check it against", dbPath)
	}
	if IsURL(dbPath) {
		local, err := LocalPath()
		if err != nil {
			return nil
		}
		dbPath = local
	}
	db, err := fspath.Resolve(dbPath)
	if err != nil {
		return fmt.Errorf("history database %s: %v", dbPath, err)
	}
	ws, workspace := root.Path(), root.Given()
	if fspath.Within(db, ws) {
		return fmt.Errorf("history database %s lies inside the workspace %s; put it elsewhere with --db or %s", dbPath, workspace, EnvDB)
	}
	// A hard link can put the database (or its journal) inside the
	// workspace under another name; no path tells, so any second link is
	// refused.
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && linkCount(fi) > 1 {
			return fmt.Errorf("history database file %s has %d hard links (one could lie inside the workspace %s); give it a single link or use another --db", p, linkCount(fi), workspace)
		}
	}
	return nil
}

// WorkspaceKey returns the form under which history stores a workspace: its
// absolute path with symlinks resolved (as the gate reports it). A directory
// that does not exist is only made absolute.
func WorkspaceKey(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r, nil
	}
	return abs, nil
}
