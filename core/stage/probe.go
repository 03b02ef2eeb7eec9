package stage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/internal/oneline"
)

// ProbeResult is what works on this machine.
type ProbeResult struct {
	// Mechanism is the one to use: Overlay when a trial overlay run worked,
	// Copy otherwise.
	Mechanism Mechanism
	// Why says why the overlay is not used ("" when it is).
	Why string
	// Reflink says whether the stage directory's filesystem clones files
	// (FICLONE): a copy stage then costs almost nothing per byte.
	Reflink bool
	// Took is how long the probe took.
	Took time.Duration
}

// Probe finds out, by trying, which mechanism works here, with stages below
// base (BaseDir() when ""): it runs a one-line script through the
// supervisor over an overlay of a scratch directory and checks that the
// write landed in the upper layer and not in the lower one. Anything
// failing (no user namespaces, AppArmor's restriction on them, no
// overlayfs, an upper filesystem overlayfs refuses, a binary that does not
// call proc.Supervise) means the copy fallback, with the reason in Why.
func Probe(ctx context.Context, base string) ProbeResult { return ProbeFor(ctx, base, "") }

// ProbeFor is Probe with the trial overlay mounted over workspace itself
// (when not ""), as the run will mount it: a workspace on a filesystem
// overlayfs cannot use as a lower layer (some network and FUSE
// filesystems) then means the copy too. The trial write goes to a scratch
// upper layer; the workspace is not touched.
func ProbeFor(ctx context.Context, base, workspace string) ProbeResult {
	start := time.Now()
	r := ProbeResult{Mechanism: Copy}
	if base == "" {
		var err error
		if base, err = BaseDir(); err != nil {
			r.Why, r.Took = err.Error(), time.Since(start)
			return r
		}
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		r.Why, r.Took = "stage: "+oneline.First(err.Error()), time.Since(start)
		return r
	}
	dir, err := os.MkdirTemp(base, ".probe-")
	if err != nil {
		r.Why, r.Took = "stage: "+oneline.First(err.Error()), time.Since(start)
		return r
	}
	defer removeAll(dir)
	r.Reflink = probeReflink(dir)
	if err := probeOverlay(ctx, dir, workspace); err != nil {
		r.Why = oneline.First(err.Error())
	} else {
		r.Mechanism = Overlay
	}
	r.Took = time.Since(start)
	return r
}

// probeOverlay runs the trial overlay run in dir, over workspace or a
// scratch lower layer.
func probeOverlay(ctx context.Context, dir, workspace string) error {
	if runtime.GOOS != "linux" {
		return errors.New("overlayfs is Linux only")
	}
	lower, upper, work := filepath.Join(dir, "lower"), filepath.Join(dir, "upper"), filepath.Join(dir, "work")
	for _, d := range []string{lower, upper, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	if workspace != "" {
		ws, err := filepath.Abs(workspace)
		if err == nil {
			ws, err = filepath.EvalSymlinks(ws)
		}
		if err != nil {
			return fmt.Errorf("workspace: %v", oneline.First(err.Error()))
		}
		lower = ws
	}
	// A name no workspace holds: the check below must see the write land.
	probe := filepath.Base(dir) + ".diffgate-probe"
	script := filepath.Join(dir, "probe.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho staged > \"$1\"\n"), 0o700); err != nil {
		return err
	}
	res, err := proc.Run(ctx, proc.Spec{Dir: lower, Path: script, Args: []string{probe},
		Overlay: &proc.Overlay{Lower: lower, Upper: upper, Work: work, UserXattr: os.Geteuid() != 0}, Timeout: 30 * time.Second, KeepBytes: 4096})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("trial overlay run exited %d: %s", res.ExitCode, oneline.First(errors.New(string(res.Stderr.Head)).Error()))
	}
	if _, err := os.Lstat(filepath.Join(lower, probe)); err == nil {
		os.Remove(filepath.Join(lower, probe))
		return errors.New("the trial overlay run wrote into the lower layer")
	}
	if b, err := os.ReadFile(filepath.Join(upper, probe)); err != nil || string(b) != "staged\n" {
		return errors.New("the trial overlay run's write is not in the upper layer")
	}
	return nil
}

// ProbeBind finds out, by trying, whether a copy stage's script can run at
// the workspace's own path: a trial run through the supervisor with a
// scratch directory bound over another in a private mount namespace (as
// root a mount namespace, as a normal user also a user namespace). nil
// means it can; the error says why not.
func (s *Stage) ProbeBind(ctx context.Context) error {
	if runtime.GOOS != "linux" {
		return errors.New("mount namespaces are Linux only")
	}
	dir, err := os.MkdirTemp(s.Dir, ".probe-")
	if err != nil {
		return err
	}
	defer removeAll(dir)
	lower, upper := filepath.Join(dir, "lower"), filepath.Join(dir, "upper")
	for _, d := range []string{lower, upper} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	script := filepath.Join(dir, "probe.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho staged > probe\n"), 0o700); err != nil {
		return err
	}
	res, err := proc.Run(ctx, proc.Spec{Dir: lower, Path: script,
		Overlay: &proc.Overlay{Lower: lower, Upper: upper, Copy: true}, Timeout: 30 * time.Second, KeepBytes: 4096})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("trial run exited %d: %s", res.ExitCode, oneline.First(errors.New(string(res.Stderr.Head)).Error()))
	}
	if b, err := os.ReadFile(filepath.Join(upper, "probe")); err != nil || string(b) != "staged\n" {
		return errors.New("the trial run's write is not in the bound directory")
	}
	return nil
}

// probeReflink tries FICLONE between two files in dir.
func probeReflink(dir string) bool {
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if os.WriteFile(a, []byte("reflink probe\n"), 0o600) != nil {
		return false
	}
	in, err := os.Open(a)
	if err != nil {
		return false
	}
	defer in.Close()
	out, err := os.Create(b)
	if err != nil {
		return false
	}
	defer out.Close()
	return reflink(out, in)
}
