// Package wslock keeps two gated runs off one workspace: each run holds a
// lock on its workspace for as long as it lasts, so one run never reports
// another's writes as its own.
//
// The locks are advisory file locks (flock) on files in the user's cache
// directory (…/diffgate/locks) and in a per-user directory of the temporary
// directory, named by a hash of the workspace's resolved path, never inside
// a workspace. A run holds its workspace's lock
// exclusively and the locks of the workspace's ancestors shared, so a run
// on /ws and a run on /ws/sub exclude each other too, while runs on
// /ws/a and /ws/b do not. The kernel drops the locks when the process ends,
// however it ends; the lock files are not inherited by the script.
//
// Locks only exclude runs of the same user (each user has their own cache
// directory), and only where flock exists (not on Windows or in a browser).
package wslock

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/quote"
)

// HeldError says that another run holds the workspace.
type HeldError struct {
	// Workspace is the workspace asked for.
	Workspace string
	// Other is the workspace (the same, an ancestor or a descendant) that
	// the other run gates.
	Other string
	// PID is the process that holds it (0: unknown).
	PID int
	// Waited is how long the run waited for it.
	Waited time.Duration
}

func (e *HeldError) Error() string {
	who := "another diffgate run"
	if e.PID > 0 {
		who = fmt.Sprintf("another diffgate run (pid %d)", e.PID)
	}
	where := ""
	if e.Other != "" && e.Other != e.Workspace {
		where = " on " + quote.Path(e.Other)
	}
	waited := ""
	if e.Waited > 0 {
		waited = fmt.Sprintf(" (waited %s)", e.Waited.Round(time.Millisecond))
	}
	return fmt.Sprintf("workspace %s is being gated by %s%s%s; run again when it has finished", quote.Path(e.Workspace), who, where, waited)
}

// Lock is a held workspace lock.
type Lock struct {
	files []*os.File
	own   []*os.File // the exclusive ones, which hold this run's record
}

// Release drops the lock. It may be called more than once.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	for _, f := range l.own {
		f.Truncate(0) // no stale pid for the next run to name
	}
	for i := len(l.files) - 1; i >= 0; i-- {
		l.files[i].Close() // closing the file drops its flock
	}
	l.files, l.own = nil, nil
}

// pollEvery is how often a waiting run tries the lock again.
const pollEvery = 50 * time.Millisecond

// Acquire locks workspace (an absolute path with symlinks resolved) for one
// run. When another run holds it, Acquire waits up to wait (0: not at all)
// and then returns a *HeldError naming the holder. It logs a warning once
// when it starts waiting. ctx cancels the wait.
func Acquire(ctx context.Context, workspace string, wait time.Duration, log zerolog.Logger) (*Lock, error) {
	ws := filepath.Clean(workspace)
	if !filepath.IsAbs(ws) {
		return nil, fmt.Errorf("workspace lock: %s is not an absolute path", quote.Path(workspace))
	}
	// In each lock directory, ancestors first (shared), the workspace last
	// (exclusive): one order for every run.
	var chain []string
	for p := ws; ; p = filepath.Dir(p) {
		chain = append([]string{p}, chain...)
		if filepath.Dir(p) == p {
			break
		}
	}
	a := &acquirer{ws: ws, wait: wait, log: log, start: time.Now(), l: &Lock{}}
	a.deadline = a.start.Add(wait)
	var skipped []error
	for _, dir := range lockDirs(ws) {
		// Made only now, so a run refused in an earlier directory has
		// created nothing in this one (which may lie in that run's workspace).
		if err := prepareDir(dir); err != nil {
			skipped = append(skipped, err)
			continue
		}
		for i, p := range chain {
			if err := a.lock(ctx, dir, p, i == len(chain)-1); err != nil {
				a.l.Release()
				return nil, err
			}
		}
	}
	if len(a.l.own) == 0 {
		return nil, fmt.Errorf("workspace lock for %s: no directory for the lock outside the workspace: %v", quote.Path(ws), errors.Join(skipped...))
	}
	// Name this run in its workspace's lock files, for the next one to say.
	rec := strconv.Itoa(os.Getpid()) + "\n" + ws + "\n"
	for _, f := range a.l.own {
		if err := f.Truncate(0); err == nil {
			f.WriteAt([]byte(rec), 0)
		}
	}
	return a.l, nil
}

// acquirer is the state of one Acquire.
type acquirer struct {
	ws              string
	wait            time.Duration
	log             zerolog.Logger
	start, deadline time.Time
	warned          bool
	l               *Lock
}

// lock takes the lock of path p in dir, waiting while another run holds it.
func (a *acquirer) lock(ctx context.Context, dir, p string, exclusive bool) error {
	f, err := os.OpenFile(filepath.Join(dir, keyOf(p)+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("workspace lock for %s: %v", quote.Path(a.ws), err)
	}
	a.l.files = append(a.l.files, f)
	if exclusive {
		a.l.own = append(a.l.own, f)
	}
	for {
		ok, err := tryLock(f, exclusive)
		if err != nil {
			return fmt.Errorf("workspace lock for %s: %v", quote.Path(a.ws), err)
		}
		if ok {
			return nil
		}
		// The holder gates p itself or (when we want p exclusively) a
		// directory inside it. The kernel knows who holds the lock; the
		// record the holder wrote is the fallback.
		held := &HeldError{Workspace: a.ws, Other: p}
		if other, pid := otherRun(dir, f); pid > 0 {
			held.Other, held.PID = other, pid
		} else {
			held.PID = holder(f)
		}
		if !time.Now().Before(a.deadline) {
			if a.wait > 0 {
				held.Waited = time.Since(a.start).Round(time.Millisecond)
			}
			return held
		}
		if !a.warned {
			a.log.Warn().Str("workspace", a.ws).Int("holder_pid", held.PID).Dur("max_wait", a.wait).
				Msg("waiting for another diffgate run on this workspace to finish")
			a.warned = true
		}
		t := time.NewTimer(min(pollEvery, time.Until(a.deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("workspace lock for %s: %w", quote.Path(a.ws), ctx.Err())
		case <-t.C:
		}
	}
}

// holder reads the pid that the exclusive holder of a lock file wrote.
func holder(f *os.File) int {
	pid, _ := readRecord(f)
	return pid
}

func readRecord(f *os.File) (int, string) {
	buf := make([]byte, 8192)
	n, _ := f.ReadAt(buf, 0)
	pidText, rest, _ := strings.Cut(string(buf[:n]), "\n")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return 0, ""
	}
	ws, _, _ := strings.Cut(rest, "\n")
	return pid, ws
}

// keyOf names a path's lock file.
func keyOf(p string) string {
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:16])
}

// lockDirs returns the directories of the lock files: the user's cache
// directory and a per-user directory in the temporary directory, but for one
// that lies inside the workspace. A run takes its locks in each, so two runs
// whose workspaces overlap always meet in one: a directory inside the outer
// workspace is the only one either may skip.
//
// A run on an ancestor of ws skips the directories inside that ancestor.
// Taking first the directories that fewer such runs skip, this run meets any
// of them before it creates a lock file inside that run's workspace.
func lockDirs(ws string) []string {
	var candidates []string
	candidates = append(candidates, filepath.Join(os.TempDir(), "diffgate-"+strconv.Itoa(os.Getuid()), "locks"))
	if c, err := os.UserCacheDir(); err == nil {
		candidates = append(candidates, filepath.Join(c, "diffgate", "locks"))
	}
	var dirs []string
	for _, dir := range candidates {
		if r, err := fspath.Resolve(dir); err == nil && fspath.Within(r, ws) {
			continue
		}
		dirs = append(dirs, dir)
	}
	slices.SortStableFunc(dirs, func(a, b string) int { return cmp.Compare(enclosingDepth(a, ws), enclosingDepth(b, ws)) })
	return dirs
}

// prepareDir creates a lock directory, private to the user.
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return ownDir(dir)
}

// enclosingDepth is the depth of the deepest ancestor of ws (but the root)
// that dir lies in, -1 for none.
func enclosingDepth(dir, ws string) int {
	r, err := fspath.Resolve(dir)
	if err != nil {
		r = dir
	}
	depth := -1
	for p, d := filepath.Dir(ws), strings.Count(filepath.Dir(ws), string(filepath.Separator)); filepath.Dir(p) != p; p, d = filepath.Dir(p), d-1 {
		if fspath.Within(r, p) && d > depth {
			depth = d
		}
	}
	return depth
}
