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
	started := time.Now()
	cmd, err := start(append([]string{spec.Path}, spec.Args...))
	if err != nil && isExecFormatErr(err) {
		argv := fallbackArgv(spec.Path, spec.Args)
		argv[0] = findInterpreter(argv[0])
		cmd, err = start(argv)
	}
	wout.Close()
	werr.Close()
	if err != nil {
		discardReaders(rs)
		return nil, fmt.Errorf("proc: cannot run %s: %v", spec.Path, oneline.Flat(err.Error()))
	}

	waitC := make(chan error, 1)
	go func() { waitC <- cmd.Wait() }()
	var timeoutC <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	var (
		timedOut, cancelled, stopping bool
		graceC                        <-chan time.Time
	)
	ctxDone := ctx.Done()
	stop := func() {
		if !stopping {
			stopping = true
			terminate(cmd.Process)
			graceC = time.After(spec.Grace)
		}
	}
loop:
	for {
		select {
		case <-waitC:
			break loop
		case <-timeoutC:
			timeoutC = nil
			timedOut = true
			stop()
		case <-ctxDone:
			ctxDone = nil
			cancelled = true
			stop()
		case <-graceC:
			graceC = nil
			forceKill(cmd.Process)
		}
	}
	// Give the rest of the group the remainder of the grace period.
	for graceC != nil && groupAlive(cmd.Process.Pid) {
		select {
		case <-graceC:
			graceC = nil
		case <-time.After(20 * time.Millisecond):
		}
	}
	res := &Result{Started: started, TimedOut: timedOut, Cancelled: cancelled}
	res.Leftovers = sweepGroup(cmd.Process.Pid)
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState, stopping)
	drained := time.Now().Add(drainLimit)
	res.Stdout = rs[0].finish(drained)
	res.Stderr = rs[1].finish(drained)
	res.Finished = time.Now()
	return res, nil
}

// findInterpreter returns the interpreter to use for a fallback command line.
func findInterpreter(path string) string {
	if _, err := os.Stat(path); err == nil {
		return path
	}
	return lookInterpreter(path)
}
