//go:build !linux

package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/diffgate/diffgate/internal/oneline"
)

// Supervise returns immediately: there is no supervisor process on this
// platform. It must still be called first thing in main() (and in TestMain of
// any package that runs scripts) so that the program is ready for Linux.
func Supervise() {}

// run starts the script directly (no supervisor) and kills it, and on Unix its
// process group, on timeout or cancellation.
func run(ctx context.Context, spec *Spec) (*Result, error) {
	if err := checkOverlay(spec); err != nil {
		return nil, err
	}
	wout, werr, rs, err := startReaders(spec)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	cmd, err := startDirect(spec, wout, werr)
	wout.Close()
	werr.Close()
	if err != nil {
		discardReaders(rs)
		return nil, fmt.Errorf("proc: cannot run %s: %v", spec.Path, oneline.Flat(err.Error()))
	}
	d := &directRun{spec: spec, cmd: cmd}
	d.wait(ctx)
	d.lingerGroup()
	res := &Result{Started: started, TimedOut: d.timedOut, Cancelled: d.cancelled}
	res.Leftovers = sweepGroup(cmd.Process.Pid)
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState, d.stopping)
	drained := time.Now().Add(drainLimit)
	res.Stdout = rs[0].finish(drained)
	res.Stderr = rs[1].finish(drained)
	res.Finished = time.Now()
	return res, nil
}

// startDirect starts the script with its streams going to wout and werr;
// a script the system cannot execute is run by the interpreter its first
// line names (fallbackArgv).
func startDirect(spec *Spec, wout, werr *os.File) (*exec.Cmd, error) {
	start := func(argv []string) (*exec.Cmd, error) {
		cmd := &exec.Cmd{
			Path:        argv[0],
			Args:        argv,
			Dir:         spec.Dir,
			Env:         spec.Env,
			Stdout:      wout,
			Stderr:      werr,
			SysProcAttr: sysProcAttr(),
		} // Stdin nil: the null device.
		return cmd, cmd.Start()
	}
	cmd, err := start(append([]string{spec.Path}, spec.Args...))
	if err != nil && isExecFormatErr(err) {
		argv := fallbackArgv(spec.Path, spec.Args)
		argv[0] = findInterpreter(argv[0])
		cmd, err = start(argv)
	}
	return cmd, err
}

// directRun follows a script started directly until it exits.
type directRun struct {
	spec                          *Spec
	cmd                           *exec.Cmd
	timedOut, cancelled, stopping bool
	graceC                        <-chan time.Time // the end of the grace period, once stopping
}

// stop asks the script to end, once, and starts the grace period.
func (d *directRun) stop() {
	if !d.stopping {
		d.stopping = true
		terminate(d.cmd.Process)
		d.graceC = time.After(d.spec.Grace)
	}
}

// wait follows the script until it exits: the timeout and the caller's
// cancel stop it, the end of the grace period kills it.
func (d *directRun) wait(ctx context.Context) {
	waitC := make(chan error, 1)
	go func() { waitC <- d.cmd.Wait() }()
	var timeoutC <-chan time.Time
	if d.spec.Timeout > 0 {
		t := time.NewTimer(d.spec.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	ctxDone := ctx.Done()
	for {
		select {
		case <-waitC:
			return
		case <-timeoutC:
			timeoutC = nil
			d.timedOut = true
			d.stop()
		case <-ctxDone:
			ctxDone = nil
			d.cancelled = true
			d.stop()
		case <-d.graceC:
			d.graceC = nil
			forceKill(d.cmd.Process)
		}
	}
}

// lingerGroup gives the rest of the group the remainder of the grace
// period.
func (d *directRun) lingerGroup() {
	for d.graceC != nil && groupAlive(d.cmd.Process.Pid) {
		select {
		case <-d.graceC:
			d.graceC = nil
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// findInterpreter returns the interpreter to use for a fallback command line.
func findInterpreter(path string) string {
	if _, err := os.Stat(path); err == nil {
		return path
	}
	return lookInterpreter(path)
}
