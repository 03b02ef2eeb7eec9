// Package wslock keeps two gated runs off one workspace: each run holds a
// lock on its workspace for as long as it lasts, so one run never reports
// another's writes as its own.
//
// The locks are advisory file locks (flock) on files in the user's cache
// directory (…/diffgate/locks), named by a hash of the workspace's resolved
// path, never inside a workspace. A run holds its workspace's lock
// exclusively and the locks of the workspace's ancestors shared, so a run
// on /ws and a run on /ws/sub exclude each other too, while runs on
// /ws/a and /ws/b do not. The kernel drops the locks when the process ends,
// however it ends; the lock files are not inherited by the script.
//
// Locks only exclude runs of the same user (each user has their own cache
// directory), and only where flock exists (not on Windows or in a browser).
package wslock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
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
		where = " on " + quote(e.Other)
	}
	waited := ""
	if e.Waited > 0 {
		waited = fmt.Sprintf(" (waited %s)", e.Waited.Round(time.Millisecond))
	}
	return fmt.Sprintf("workspace %s is being gated by %s%s%s; run again when it has finished", quote(e.Workspace), who, where, waited)
}

// Lock is a held workspace lock.
type Lock struct {
	files []*os.File
	named bool // the last file holds this run's record
}

// Release drops the lock. It may be called more than once.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	for i := len(l.files) - 1; i >= 0; i-- {
		if i == len(l.files)-1 && l.named {
			l.files[i].Truncate(0) // no stale pid for the next run to name
		}
		l.files[i].Close() // closing the file drops its flock
	}
	l.files = nil
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
		return nil, fmt.Errorf("workspace lock: %s is not an absolute path", quote(workspace))
	}
	dir, err := lockDir(ws)
	if err != nil {
		return nil, err
	}
	// Ancestors first (shared), the workspace last (exclusive): one order
	// for every run, and only the last lock is exclusive.
	var chain []string
	for p := ws; ; p = filepath.Dir(p) {
		chain = append([]string{p}, chain...)
		if filepath.Dir(p) == p {
			break
		}
	}
	l := &Lock{}
	start := time.Now()
	deadline := start.Add(wait)
	warned := false
	for i, p := range chain {
		exclusive := i == len(chain)-1
		f, err := os.OpenFile(filepath.Join(dir, keyOf(p)+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			l.Release()
			return nil, fmt.Errorf("workspace lock for %s: %v", quote(ws), err)
		}
		l.files = append(l.files, f)
		for {
			ok, err := tryLock(f, exclusive)
			if err != nil {
				l.Release()
				return nil, fmt.Errorf("workspace lock for %s: %v", quote(ws), err)
			}
			if ok {
				break
			}
			// The holder gates p itself or (when we want p exclusively) a
			// directory inside it. The kernel knows who holds the lock; the
			// record the holder wrote is the fallback.
			held := &HeldError{Workspace: ws, Other: p}
			if other, pid := otherRun(dir, f); pid > 0 {
				held.Other, held.PID = other, pid
			} else {
				held.PID = holder(f)
			}
			if !time.Now().Before(deadline) {
				held.Waited = time.Since(start).Round(time.Millisecond)
				if wait == 0 {
					held.Waited = 0
				}
				l.Release()
				return nil, held
			}
			if !warned {
				log.Warn().Str("workspace", ws).Int("holder_pid", held.PID).Dur("max_wait", wait).
					Msg("waiting for another diffgate run on this workspace to finish")
				warned = true
			}
			t := time.NewTimer(min(pollEvery, time.Until(deadline)))
			select {
			case <-ctx.Done():
				t.Stop()
				l.Release()
				return nil, fmt.Errorf("workspace lock for %s: %w", quote(ws), ctx.Err())
			case <-t.C:
			}
		}
	}
	// Name this run in its workspace's lock file, for the next one to say.
	f := l.files[len(l.files)-1]
	rec := strconv.Itoa(os.Getpid()) + "\n" + ws + "\n"
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(rec), 0)
		l.named = err == nil
	}
	return l, nil
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

// lockDir returns (creating it) the directory of the lock files: the user's
// cache directory, or a per-user directory in the temporary directory when
// there is none or it lies inside the workspace.
func lockDir(ws string) (string, error) {
	var candidates []string
	if c, err := os.UserCacheDir(); err == nil {
		candidates = append(candidates, filepath.Join(c, "diffgate", "locks"))
	}
	candidates = append(candidates, filepath.Join(os.TempDir(), "diffgate-"+strconv.Itoa(os.Getuid()), "locks"))
	var errs []error
	for _, dir := range candidates {
		if r, err := resolve(dir); err == nil && within(r, ws) {
			errs = append(errs, fmt.Errorf("%s lies inside the workspace", dir))
			continue
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := ownDir(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		return dir, nil
	}
	return "", fmt.Errorf("workspace lock for %s: no directory for the lock outside the workspace: %v", quote(ws), errors.Join(errs...))
}

// resolve makes p absolute and resolves symlinks in its longest existing prefix.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

func quote(p string) string {
	if strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) || !isUTF8(p) {
		return strconv.Quote(p)
	}
	return p
}

func isUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
