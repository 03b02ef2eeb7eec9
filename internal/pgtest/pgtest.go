//go:build !js

// Package pgtest starts a real PostgreSQL server for tests: initdb and
// pg_ctl (Debian's postgresql package) in a temporary directory, listening
// on a unix socket only (listen_addresses = ”), as an unprivileged user
// (the server refuses to run as root: as root it runs as testenv.UID), and
// stopped when the test ends.
package pgtest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/diffgate/diffgate/internal/testenv"
)

// Super is the server's superuser (initdb -U).
const Super = "postgres"

// Server is a running PostgreSQL server.
type Server struct {
	// Dir holds the data directory (data) and the server's log (log); Sock
	// is the directory of its unix socket; Bin that of its programs.
	Dir  string
	Bin  string
	Sock string
	dbs  atomic.Int64
}

// BinDir returns the directory of Debian's PostgreSQL binaries (the newest
// version under /usr/lib/postgresql), or "" when none is installed.
func BinDir() string {
	if d := os.Getenv("DIFFGATE_TEST_PGBIN"); d != "" {
		return d
	}
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	sort.Slice(ms, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(ms[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(ms[j]))))
		return vi > vj
	})
	if len(ms) == 0 {
		if p, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p)
		}
		return ""
	}
	return filepath.Dir(ms[0])
}

// Start starts a server for t (skipping t when PostgreSQL is not installed)
// and stops it when t ends.
func Start(t *testing.T) *Server {
	t.Helper()
	bin := BinDir()
	if bin == "" {
		t.Skip("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl; apt-get install postgresql, see make test-deps)")
	}
	dir := testenv.UserTempDir(t)
	// The socket's path must fit sun_path (107 bytes): a short directory
	// of its own, not one below the test's (long) temporary directory.
	sock, err := os.MkdirTemp("", "pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	if err := os.Chmod(sock, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Chown(t, sock)
	s := &Server{Dir: dir, Bin: bin, Sock: sock}
	s.run(t, 2*time.Minute, "initdb", "-D", filepath.Join(dir, "data"), "-U", Super, "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	s.Restart(t)
	t.Cleanup(func() { s.stop(t) })
	return s
}

// Restart starts the server again after Stop (Start starts it first).
func (s *Server) Restart(t *testing.T) {
	t.Helper()
	// pg_ctl -w waits until the server accepts connections (or -t expires).
	s.run(t, 2*time.Minute, "pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-l", filepath.Join(s.Dir, "log"), "-w", "-t", "90",
		"-o", "-c listen_addresses='' -k "+s.Sock+" -c fsync=off -c synchronous_commit=off -c full_page_writes=off", "start")
}

// Stop stops the server (a fast shutdown, waited for): it is unreachable
// until Restart.
func (s *Server) Stop(t *testing.T) {
	t.Helper()
	s.run(t, time.Minute, "pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "fast", "-w", "-t", "50", "stop")
}

// stop stops the server at once (pg_ctl stop -m immediate); when that
// fails, it kills the postmaster named in postmaster.pid.
func (s *Server) stop(t *testing.T) {
	if _, err := os.Stat(filepath.Join(s.Dir, "data", "postmaster.pid")); err != nil {
		return // stopped already
	}
	cmd := s.cmd("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "immediate", "-w", "-t", "30", "stop")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("pgtest: pg_ctl stop: %v\n%s", err, out)
		if data, err := os.ReadFile(filepath.Join(s.Dir, "data", "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(data), "\n")
			if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && pid > 0 {
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}
		}
	}
}

func (s *Server) cmd(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.Bin, name), args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.Dir = s.Dir
	testenv.UserCmd(cmd)
	return cmd
}

func (s *Server) run(t *testing.T, timeout time.Duration, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := s.cmd(name, args...)
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Env, c.Dir, c.SysProcAttr = cmd.Env, cmd.Dir, cmd.SysProcAttr
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
		t.Fatalf("pgtest: %s: %v\n%s\nserver log:\n%s", name, err, out.String(), log)
	}
}

// URL returns the URL of database db as role user, over the unix socket.
func (s *Server) URL(user, db string) string {
	q := url.Values{"host": {s.Sock}}
	return (&url.URL{Scheme: "postgres", User: url.User(user), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// Exec runs statements as the superuser in database db ("" for postgres).
func (s *Server) Exec(t *testing.T, db string, stmts ...string) {
	t.Helper()
	if db == "" {
		db = "postgres"
	}
	sdb, err := sql.Open("pgx", s.URL(Super, db))
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	for _, st := range stmts {
		if _, err := sdb.Exec(st); err != nil {
			t.Fatalf("pgtest: %s: %v", st, err)
		}
	}
}

// NewDB creates a fresh database owned by the role owner (created, with
// LOGIN and CREATEROLE, if missing) and returns its name.
func (s *Server) NewDB(t *testing.T, owner string) string {
	t.Helper()
	name := fmt.Sprintf("db%d", s.dbs.Add(1))
	s.Exec(t, "", fmt.Sprintf(`DO $$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '%s') THEN CREATE ROLE %s LOGIN CREATEROLE; END IF;
	END $$`, owner, owner), fmt.Sprintf("CREATE DATABASE %s OWNER %s", name, owner))
	return name
}

// ExecAs runs statements as role in database db, in one session, and
// returns the first error.
func (s *Server) ExecAs(role, db string, stmts ...string) error {
	sdb, err := sql.Open("pgx", s.URL(role, db))
	if err != nil {
		return err
	}
	defer sdb.Close()
	conn, err := sdb.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, st := range stmts {
		if _, err := conn.ExecContext(context.Background(), st); err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
	}
	return nil
}
