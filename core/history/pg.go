//go:build !js

package history

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/diffgate/diffgate/internal/oneline"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/rs/zerolog"
)

// A team store is a history on PostgreSQL, named by a postgres:// (or
// postgresql://) URL where a file path would be (--db, DIFFGATE_DB). It
// holds what the SQLite history holds, in the same hash chain, with the
// same API (DB): the history's SQL is rewritten for PostgreSQL
// (dialect.go), writers take turns under an advisory lock, workspaces are
// keyed by a stable id (Key) instead of a path, and the server refuses to
// update or delete a record (migrations_pg).

//go:embed migrations_pg/*.sql
var pgMigrationFS embed.FS

var pgMigrations = mustLoadPGMigrations()

func mustLoadPGMigrations() []migration {
	ms, err := loadMigrationsIn(pgMigrationFS, "migrations_pg")
	if err != nil {
		panic(err)
	}
	return ms
}

// pgLockKey is the advisory lock every write transaction on a team store
// takes (pg_advisory_xact_lock): "DgHT", as SQLite's application id.
const pgLockKey = applicationID

// pgConnectTimeout bounds how long opening a team store waits for the server.
const pgConnectTimeout = 10 * time.Second

// ErrUnreachable is wrapped by Open's error when a team store's server
// cannot be reached (as opposed to refusing the connection or the schema).
var ErrUnreachable = errors.New("team store unreachable")

// IsURL reports whether a --db value names a team store (postgres:// or
// postgresql://) rather than a file.
func IsURL(path string) bool {
	return strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://")
}

// Redact returns a team store's URL without its password (for messages); a
// file path is returned as it is.
func Redact(path string) string {
	if !IsURL(path) {
		return path
	}
	u, err := url.Parse(path)
	if err != nil {
		return "postgres://…"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// openPG opens the team store at the URL rawURL and brings its schema up to
// date (which needs the owner's rights; the CI and reviewer roles open a
// store whose schema is current).
func openPG(rawURL string, log zerolog.Logger) (*DB, error) {
	name := Redact(rawURL)
	fail := func(err error) error {
		return fmt.Errorf("team store %s: %w", name, err)
	}
	if _, err := pgconn.ParseConfig(rawURL); err != nil {
		return nil, fail(errors.New(oneline.First(pgErrText(err).Error())))
	}
	sdb, err := sql.Open("pgx", rawURL)
	if err != nil {
		return nil, fail(pgErrText(err))
	}
	sdb.SetMaxIdleConns(4)
	ctx, cancel := context.WithTimeout(context.Background(), pgConnectTimeout)
	defer cancel()
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		return nil, fail(pgErrText(err))
	}
	db := &DB{sql: &sqlDB{DB: sdb, pg: true}, path: name, log: log, pg: true}
	if err := db.migratePG(context.Background()); err != nil {
		sdb.Close()
		return nil, fail(err)
	}
	log.Debug().Str("store", name).Msg("team store open")
	return db, nil
}

// migratePG applies the migrations the team store lacks, each in its own
// transaction under the writers' lock.
func (db *DB) migratePG(ctx context.Context) error {
	cur, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if cur > len(pgMigrations) {
		return fmt.Errorf("schema version %d is newer than this diffgate supports (%d); use a newer diffgate", cur, len(pgMigrations))
	}
	for _, m := range pgMigrations[cur:] {
		err := db.write(ctx, "migrate to schema "+strconv.Itoa(m.version), func(tx *sqlTx) error {
			var v int
			var have bool
			if err := tx.QueryRowContext(ctx, "SELECT to_regclass('diffgate_schema') IS NOT NULL").Scan(&have); err != nil {
				return err
			}
			if have {
				if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM diffgate_schema").Scan(&v); err != nil {
					return err
				}
			}
			if v >= m.version {
				return nil
			}
			if _, err := tx.Tx.ExecContext(ctx, m.sql); err != nil { // as written: no rebinding
				return fmt.Errorf("%s: %w", m.name, err)
			}
			_, err = tx.ExecContext(ctx, "DELETE FROM diffgate_schema; INSERT INTO diffgate_schema (version) VALUES ("+strconv.Itoa(m.version)+")")
			return err
		})
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
				return fmt.Errorf("schema version %d needs an upgrade to version %d, which needs the store owner's rights (open it once as the owner): %w", cur, len(pgMigrations), err)
			}
			return err
		}
		db.log.Info().Str("store", db.path).Str("migration", m.name).Msg("team store schema migrated")
	}
	return nil
}

// pgSchemaVersion reads the team store's schema version (0: empty).
func (db *DB) pgSchemaVersion(ctx context.Context) (int, error) {
	var have bool
	if err := db.sql.QueryRowContext(ctx, "SELECT to_regclass('diffgate_schema') IS NOT NULL").Scan(&have); err != nil || !have {
		return 0, err
	}
	var v int
	err := db.sql.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM diffgate_schema").Scan(&v)
	return v, err
}

// caches returns the store that keeps db's caches: db itself, or for a team
// store the local history file (nil when it cannot be opened: the caches
// only save time).
func (db *DB) caches() *DB {
	if !db.pg {
		return db
	}
	db.cacheOnce.Do(func() {
		p, err := LocalPath()
		if err == nil {
			db.cache, err = Open(p, db.log)
		}
		if err != nil {
			db.log.Warn().Err(err).Msg("team store: no local cache (hash cache, text store)")
		}
	})
	return db.cache
}

// chainTables are the team store's tables whose rows are records: each has
// the triggers NAME_append_only and NAME_no_truncate (migrations_pg).
var chainTables = []string{"runs", "changes", "contents", "allowlists", "decisions", "stage_events", "chain"}

// pgGuards checks that the team store's append-only triggers are all there
// and enabled: with one disabled or dropped (which only the owner or a
// superuser can do), rows may be updated or deleted behind diffgate's back
// even where the chain still holds.
func pgGuards(ctx context.Context, tx *sqlTx) (*Broken, error) {
	rows, err := tx.QueryContext(ctx, `SELECT c.relname, t.tgname, t.tgenabled FROM pg_trigger t
		JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal`)
	if err != nil {
		return nil, fmt.Errorf("verify: triggers: %w", dbError(err))
	}
	defer rows.Close()
	enabled := map[string]bool{}
	for rows.Next() {
		var table, name, state string
		if err := rows.Scan(&table, &name, &state); err != nil {
			return nil, fmt.Errorf("verify: triggers: %w", dbError(err))
		}
		enabled[table+"."+name] = state != "D"
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("verify: triggers: %w", dbError(err))
	}
	want := []string{"chain.chain_kind"}
	for _, t := range chainTables {
		want = append(want, t+"."+t+"_append_only", t+"."+t+"_no_truncate")
	}
	for _, w := range want {
		on, ok := enabled[w]
		if ok && on {
			continue
		}
		table, name, _ := strings.Cut(w, ".")
		b := &Broken{What: "table " + table, Reason: "its trigger " + name + " is disabled: rows can be changed behind diffgate's back (ALTER TABLE " + table + " ENABLE TRIGGER " + name + ")"}
		if !ok {
			b.Reason = "its trigger " + name + " is missing: rows can be changed behind diffgate's back"
		}
		return b, nil
	}
	return nil, nil
}

// IsTeam reports whether db is a team store (PostgreSQL).
func (db *DB) IsTeam() bool { return db.pg }

// pgErrText words a PostgreSQL or connection error in one line; a server
// that cannot be reached wraps ErrUnreachable.
func pgErrText(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s", ErrUnreachable, oneline.First(err.Error()))
	}
	return err
}

// isPGRetry reports whether a team store's transaction failed for another
// one and may be run again (serialization failure, deadlock).
func isPGRetry(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// approver names who approves on db: the database role of a team store
// (the server checks it), else this machine's user name.
func (db *DB) approver(ctx context.Context, tx *sqlTx) (string, error) {
	if db.pg {
		var u string
		err := tx.QueryRowContext(ctx, "SELECT current_user").Scan(&u)
		return u, err
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username, nil
	}
	for _, v := range []string{"USER", "LOGNAME", "USERNAME"} {
		if s := os.Getenv(v); s != "" {
			return s, nil
		}
	}
	return "uid " + strconv.Itoa(os.Getuid()), nil
}

// Key returns the form under which db stores the workspace at dir: on a
// team store its stable id (StableKey), else its absolute path with
// symlinks resolved (WorkspaceKey).
func (db *DB) Key(dir string) (string, error) {
	k, err := WorkspaceKey(dir)
	if err != nil || !db.pg {
		return k, err
	}
	return StableKey(k)
}

var stableKeys sync.Map // absolute path → StableKey

// ws maps a workspace given as an absolute path to its key on db (a team
// store's stable id); keys and paths on a local history pass unchanged.
func (db *DB) ws(w string) string {
	if !db.pg || !filepath.IsAbs(w) {
		return w
	}
	if k, ok := stableKeys.Load(w); ok {
		return k.(string)
	}
	k, err := StableKey(w)
	if err != nil {
		return w
	}
	stableKeys.Store(w, k)
	return k
}

// IDFile is the file at a workspace's root whose first line, when present,
// is the workspace's id on a team store.
const IDFile = ".diffgate"

// StableKey returns the id of the workspace at the absolute path dir that
// is the same on every machine: "id:ID" from the .diffgate file at its
// root, else "git:REMOTE" for the root of a git checkout whose origin (or
// only remote) is REMOTE (host/path, without user, password, scheme or
// .git), plus "#PATH" for a directory PATH inside it; else the path itself
// (a workspace that only one machine knows).
func StableKey(dir string) (string, error) {
	if data, err := os.ReadFile(filepath.Join(dir, IDFile)); err == nil {
		// The first line: "ID", or "id = ID" (or "id: ID").
		line, _, _ := strings.Cut(string(data), "\n")
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "id"); ok {
			if r := strings.TrimSpace(rest); strings.HasPrefix(r, "=") || strings.HasPrefix(r, ":") {
				line = strings.TrimSpace(r[1:])
			}
		}
		if line == "" {
			return "", fmt.Errorf("workspace %s: %s has no id on its first line", dir, IDFile)
		}
		return "id:" + line, nil
	} else if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return "", fmt.Errorf("workspace %s: %v", dir, dbError(err))
	}
	for d := dir; ; {
		if remote := gitRemote(filepath.Join(d, ".git")); remote != "" {
			rel, err := filepath.Rel(d, dir)
			if err != nil {
				return dir, nil
			}
			k := "git:" + remote
			if rel != "." {
				k += "#" + filepath.ToSlash(rel)
			}
			return k, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return dir, nil
		}
		d = up
	}
}

// gitRemote returns the normalised URL of the origin remote (else of the
// only remote) in the git directory gitDir's config, "" when none.
func gitRemote(gitDir string) string {
	fi, err := os.Stat(gitDir)
	if err != nil {
		return ""
	}
	if !fi.IsDir() { // a worktree or submodule: "gitdir: PATH"
		data, err := os.ReadFile(gitDir)
		if err != nil {
			return ""
		}
		p := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(data)), "gitdir:"))
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(gitDir), p)
		}
		gitDir = p
		if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			cd := strings.TrimSpace(string(c))
			if !filepath.IsAbs(cd) {
				cd = filepath.Join(gitDir, cd)
			}
			gitDir = cd
		}
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		return ""
	}
	remotes := map[string]string{}
	var section string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[]")
			continue
		}
		name, ok := strings.CutPrefix(section, "remote ")
		if !ok {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == "url" {
			remotes[strings.Trim(strings.TrimSpace(name), `"`)] = strings.TrimSpace(v)
		}
	}
	u := remotes["origin"]
	if u == "" && len(remotes) == 1 {
		for _, v := range remotes {
			u = v
		}
	}
	if u == "" {
		return ""
	}
	return normalizeRemote(u)
}

// normalizeRemote makes the forms of one remote equal:
// https://user:pw@host/o/r.git, ssh://git@host/o/r and git@host:o/r all
// give host/o/r.
func normalizeRemote(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if at := strings.LastIndex(strings.SplitN(u, "/", 2)[0], "@"); at >= 0 {
			u = u[at+1:]
		}
		host, rest, _ := strings.Cut(u, "/")
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		u = host + "/" + rest
	} else if host, rest, ok := strings.Cut(u, ":"); ok && !strings.Contains(host, "/") {
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		u = host + "/" + rest
	}
	u = strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git")
	return strings.ToLower(u[:strings.Index(u+"/", "/")]) + u[strings.Index(u+"/", "/"):]
}
