//go:build unix

package wslock

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/testenv"
)

var ctx = context.Background()

func tempWS(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func acquire(t *testing.T, ws string) *Lock {
	t.Helper()
	l, err := Acquire(ctx, ws, 0, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Release)
	return l
}

func wantHeld(t *testing.T, ws, other string) {
	t.Helper()
	l, err := Acquire(ctx, ws, 0, zerolog.Nop())
	var held *HeldError
	if !errors.As(err, &held) {
		l.Release()
		t.Fatalf("Acquire(%s) = %v, want a HeldError", ws, err)
	}
	// In one process the kernel names this very process, so the record
	// written by the holder names it.
	if held.PID != os.Getpid() || held.Other != other || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "pid ") {
		t.Errorf("Acquire(%s): %+v (%v); want held by pid %d on %s", ws, held, err, os.Getpid(), other)
	}
	t.Log(err)
}

func TestLockExcludes(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ws := tempWS(t)
	sub := filepath.Join(ws, "sub")
	os.Mkdir(sub, 0o755)
	sib := filepath.Join(ws, "sib")
	os.Mkdir(sib, 0o755)

	l := acquire(t, ws)
	wantHeld(t, ws, ws)
	l.Release()
	l = acquire(t, ws) // released: free again
	l.Release()

	// Siblings do not exclude each other; a parent excludes them both.
	a := acquire(t, sub)
	b := acquire(t, sib)
	if _, err := Acquire(ctx, ws, 0, zerolog.Nop()); err == nil {
		t.Error("a run on the parent of two running workspaces got the lock")
	}
	a.Release()
	b.Release()
	p := acquire(t, ws)
	l, err := Acquire(ctx, sub, 0, zerolog.Nop())
	if err == nil {
		l.Release()
		t.Fatal("a run inside a running workspace got the lock")
	}
	t.Log(err)
	p.Release()
}

// TestLockWaits: a second run waits while the first holds the lock, and
// gets it when the first releases it; ctx ends a wait.
func TestLockWaits(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ws := tempWS(t)
	first := acquire(t, ws)
	pr, pw := io.Pipe()
	got := make(chan error, 1)
	go func() {
		l, err := Acquire(ctx, ws, time.Hour, zerolog.New(pw))
		pw.Close()
		if err == nil {
			l.Release()
		}
		got <- err
	}()
	// The waiter logs once that it waits: that is the event to release on.
	buf := make([]byte, 4096)
	n, _ := pr.Read(buf)
	if !strings.Contains(string(buf[:n]), "waiting for another diffgate run") {
		t.Fatalf("log %q", buf[:n])
	}
	go io.Copy(io.Discard, pr)
	first.Release()
	if err := <-got; err != nil {
		t.Fatalf("the waiting run: %v", err)
	}

	// A bounded wait ends with a HeldError that says how long it waited.
	first = acquire(t, ws)
	_, err := Acquire(ctx, ws, 100*time.Millisecond, zerolog.Nop())
	var held *HeldError
	if !errors.As(err, &held) || held.Waited < 100*time.Millisecond || !strings.Contains(err.Error(), "waited") {
		t.Errorf("bounded wait: %v", err)
	}
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Acquire(c, ws, time.Hour, zerolog.Nop()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
	first.Release()
}

// TestLockNeverInWorkspace: when the cache directory lies inside the
// workspace, the lock goes elsewhere, and nothing is written in the workspace.
func TestLockNeverInWorkspace(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	ws := tempWS(t)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(ws, ".cache"))
	l := acquire(t, ws)
	if _, err := os.Stat(filepath.Join(ws, ".cache")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock touched the workspace: %v", err)
	}
	if dirs := lockDirs(ws); len(dirs) != 1 || fspath.Within(dirs[0], ws) {
		t.Errorf("lock dirs %q", dirs)
	}
	wantHeld(t, ws, ws)
	// A run on a directory inside the workspace keeps its locks in the
	// cache directory too, yet meets this one.
	sub := filepath.Join(ws, "sub")
	os.Mkdir(sub, 0o755)
	if _, err := Acquire(ctx, sub, 0, zerolog.Nop()); err == nil {
		t.Error("a run inside a running workspace got the lock")
	}
	if _, err := os.Stat(filepath.Join(ws, ".cache")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused run inside the workspace wrote into it: %v", err)
	}
	l.Release()
	s := acquire(t, sub)
	if _, err := Acquire(ctx, ws, 0, zerolog.Nop()); err == nil {
		t.Error("a run on the workspace of a running run inside it got the lock")
	}
	s.Release()
}
