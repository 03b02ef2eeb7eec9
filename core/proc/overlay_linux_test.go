package proc_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/internal/testenv"
)

// TestOverlaySetupFailureIsReported: an overlay that cannot be mounted (no
// upper directory) fails Run with one line naming the step; the script
// never runs, so it writes nothing into the workspace.
func TestOverlaySetupFailureIsReported(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	ws := t.TempDir()
	script := filepath.Join(ws, "s.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho ran > ran\n"), 0o755)
	_, err := proc.Run(context.Background(), proc.Spec{Dir: ws, Path: script, Timeout: time.Minute,
		Overlay: &proc.Overlay{Lower: ws, Upper: filepath.Join(ws, "missing-upper"), Work: filepath.Join(ws, "missing-work")}})
	if err == nil || !strings.HasPrefix(err.Error(), "proc: overlay: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Run: %v, want one line starting with proc: overlay:", err)
	}
	if _, serr := os.Lstat(filepath.Join(ws, "ran")); serr == nil {
		t.Fatal("the script ran although the overlay failed")
	}
	t.Log(err)
}
