package proc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/diffgate/diffgate/internal/oneline"
	"golang.org/x/sys/unix"
)

// supervisorRun is one Run on Linux, seen from the gate: it starts the
// supervisor (start), follows it until it exits (loop), and makes sure that
// nothing of the script's tree is left before it builds the Result
// (collect). Everything it opens is on one list, closed by closeAll.
type supervisorRun struct {
	spec *Spec
	sp   superSpec

	// The pipes: the spec to the supervisor, its report, the script's
	// streams and the supervisor's own output.
	specR, specW, repR, repW, wout, werr, diagW *os.File
	rs                                          [2]*streamReader
	diag                                        *streamReader

	cg  *cgroup  // nil: no cgroup of its own (subreaper)
	lim *limiter // nil: the limits are not held
	// tasks are the limits' v1 cgroups' tasks files, for the supervisor
	// (fds limitFD and on; joinLimits).
	tasks      []*os.File
	cmd        *exec.Cmd
	started    time.Time
	superPID   int
	superStart uint64 // the supervisor's start time (clock ticks)
	closers    []func()

	// What the report pipe brings (filled by readReports).
	startC   chan superMsg
	repDone  chan struct{}
	final    *superMsg
	streamed *blockedSet // what the supervisor reported before its end
	links    procLinks   // the gate's reading of /proc magic links in targets

	// What loop saw.
	startMsg                                *superMsg
	timedOut, cancelled, stopping, noAnswer bool
	hardKilled                              bool
	lost                                    string
	extra                                   []Leftover
	hardKillC                               <-chan time.Time
	waitErr                                 error
	killed                                  []int
}

// onClose adds f to what closeAll runs (in reverse order).
func (r *supervisorRun) onClose(f func()) { r.closers = append(r.closers, f) }

// closeAll closes everything the run opened, the last opened first.
func (r *supervisorRun) closeAll() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// pipe makes a pipe whose ends closeAll closes (closing one early, once
// the child has its copy, is fine: a second Close is a no-op error).
func (r *supervisorRun) pipe() (rd, wr *os.File, err error) {
	rd, wr, err = os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("proc: pipe: %v", oneline.Flat(err.Error()))
	}
	r.onClose(func() { rd.Close(); wr.Close() })
	return rd, wr, nil
}

// start opens the pipes, makes the cgroup and the limits, starts the
// supervisor (falling back to no cgroup, then to no mount namespace) and
// sends it the spec.
func (r *supervisorRun) start() error {
	var err error
	if r.sp, err = newSuperSpec(r.spec); err != nil {
		return err
	}
	if err := r.openPipes(); err != nil {
		return err
	}
	r.cg = newCgroup()
	r.lim = newLimiter(r.cg, &r.spec.Containment)
	r.onClose(r.lim.close)
	if r.tasks, err = r.lim.tasksFiles(); err != nil {
		r.lim = nil // not held: say so (Enforced) rather than pretend
	}
	r.sp.Limits = len(r.tasks)
	r.started = time.Now()
	err = r.startSupervisor()
	// The child has its copies.
	closeFiles(append([]*os.File{r.specR, r.wout, r.werr, r.repW, r.diagW}, r.tasks...))
	if err != nil {
		return r.startFailed(err)
	}
	r.track()
	r.sendSpec()
	r.readReports()
	return nil
}

// newSuperSpec is the spec the supervisor is sent. A contained script
// gets read-only mounts (readOnlyMounts) in the supervisor's namespaces,
// which are also those an overlay needs.
func newSuperSpec(spec *Spec) (superSpec, error) {
	sp := superSpec{
		Dir: spec.Dir, Path: spec.Path, Args: spec.Args, Env: spec.Env,
		Grace: spec.Grace, Containment: spec.Containment, Overlay: spec.Overlay,
		Cleanup: time.Duration(supervisorCleanup.Load()),
	}
	if _, err := json.Marshal(sp); err != nil {
		return sp, fmt.Errorf("proc: encode spec: %v", oneline.Flat(err.Error()))
	}
	sp.MountNS = spec.Containment.Enabled && !spec.Containment.NoMounts
	if spec.Containment.Enabled && spec.Containment.NoMounts {
		sp.MountWhy = "turned off for a test"
	}
	return sp, nil
}

// openPipes opens the pipes to and from the supervisor and starts reading
// the script's streams. The supervisor's own standard output and error
// (runtime messages, warnings printed by package initialisers of the
// program it is a copy of) go to a pipe of their own, never into the
// script's streams.
func (r *supervisorRun) openPipes() error {
	var err error
	if r.specR, r.specW, err = r.pipe(); err != nil {
		return err
	}
	if r.repR, r.repW, err = r.pipe(); err != nil {
		return err
	}
	wout, werr, rs, err := startReaders(r.spec)
	if err != nil {
		return err
	}
	r.wout, r.werr, r.rs = wout, werr, rs
	r.onClose(func() { wout.Close(); werr.Close() })
	diagR, diagW, err := r.pipe()
	if err != nil {
		discardReaders(r.rs)
		return err
	}
	r.diagW = diagW
	r.diag = newStreamReader(Stderr, diagR, diagKeep, nil)
	return nil
}

// startSupervisor starts the supervisor's command and registers it; where
// it cannot start, it tries again without the cgroup, then (no overlay)
// without the mount namespace.
func (r *supervisorRun) startSupervisor() error {
	startMu.Lock()
	defer startMu.Unlock()
	r.cmd = r.newCmd()
	err := r.cmd.Start()
	if err != nil && r.cg != nil {
		// The cgroup was made but cannot take the process: do without.
		r.cg.close()
		r.cg = nil
		r.cmd = r.newCmd()
		err = r.cmd.Start()
	}
	if err != nil && r.sp.MountNS && r.spec.Overlay == nil {
		// No namespaces here (a chroot, restricted user namespaces): the
		// contained script goes without the read-only mounts, and the run
		// says so.
		r.sp.MountNS, r.sp.MountWhy = false, "cannot create a mount namespace: "+oneline.Flat(err.Error())
		r.cmd = r.newCmd()
		err = r.cmd.Start()
	}
	if err == nil {
		r.onClose(registerSupervisor(r.cmd.Process.Pid))
	}
	return err
}

// startFailed drops the readers of a supervisor that did not start and
// says why.
func (r *supervisorRun) startFailed(err error) error {
	discardReaders(r.rs)
	discardReaders([2]*streamReader{r.diag})
	if r.spec.Overlay != nil {
		// The namespaces an overlay needs could not be made (a chroot,
		// restricted user namespaces): say so, the caller falls back.
		return fmt.Errorf("proc: overlay: cannot create the namespaces for the stage: %v", oneline.Flat(err.Error()))
	}
	return fmt.Errorf("proc: start supervisor: %v", oneline.Flat(err.Error()))
}

// track takes hold of the started supervisor: its cgroup is closed with
// the run, and its pid and start time are kept.
func (r *supervisorRun) track() {
	if cg := r.cg; cg != nil {
		r.onClose(cg.close)
	}
	r.superPID = r.cmd.Process.Pid
	if e, ok := readStat(r.superPID); ok {
		r.superStart = e.start
	}
}

// sendSpec writes the spec to the supervisor and closes the pipe.
func (r *supervisorRun) sendSpec() {
	payload, _ := json.Marshal(r.sp)
	specW := r.specW
	go func() {
		_, _ = specW.Write(payload)
		specW.Close()
	}()
}

// newCmd is the supervisor's command: this program again, in a session of
// its own, in the run's cgroup and (for an overlay or the read-only mounts)
// in namespaces of its own.
func (r *supervisorRun) newCmd() *exec.Cmd {
	attr := &syscall.SysProcAttr{
		// A session of its own: out of the terminal's foreground group
		// (Ctrl-C reaches the gate, which cancels, instead of killing
		// the supervisor), and no process of the script's tree can
		// join the gate's process group.
		Setsid: true,
		// If the gate dies, the supervisor tears the tree down.
		Pdeathsig: syscall.SIGTERM,
	}
	if r.cg != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, r.cg.fd
	}
	if r.spec.Overlay != nil || r.sp.MountNS {
		namespaceAttr(attr, r.sp.MountNS)
	}
	return &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{supervisorName},
		Env:        supervisorEnv(),
		Stdin:      r.specR,
		Stdout:     r.diagW,
		Stderr:     r.diagW,
		ExtraFiles: append([]*os.File{r.repW, r.wout, r.werr}, r.tasks...), // fds 3, 4, 5, limitFD…

		SysProcAttr: attr,
	}
}

// readReports reads the supervisor's report pipe until it closes: the
// first message is the start's outcome (startC), then blocked actions as
// they happen, then the final result.
func (r *supervisorRun) readReports() {
	r.startC = make(chan superMsg, 1)
	r.repDone = make(chan struct{})
	r.streamed = newBlockedSet()
	r.links = procLinks{}
	go func() {
		defer close(r.repDone)
		dec := json.NewDecoder(r.repR)
		for first := true; ; first = false {
			var m superMsg
			if err := dec.Decode(&m); err != nil {
				return
			}
			switch {
			case first:
				r.startC <- m
			case m.Done:
				r.links.apply(m.Blocked)
				r.final = &m
			default:
				r.links.apply(m.Blocked)
				for _, b := range m.Blocked {
					r.streamed.add(b)
				}
			}
		}
	}()
}

// sweep finds, records and kills what is left of the script's tree by
// the gate's own means: what is in the cgroup and, when the supervisor
// is lost (orphaned), the script's processes among the gate's children
// (the supervisor, if it is still there, stopped, is killed with them).
// While the supervisor lives, every orphan of the tree goes to it, not
// to the gate, so the gate's children are not looked at then: another
// program's orphans that came to this process are none of this run's.
func (r *supervisorRun) sweep(super int, skip map[int]bool, orphaned bool) {
	deadline := time.Now().Add(cleanupTimeout)
	var left []Leftover
	var pids []int
	if r.cg != nil {
		skip = maps.Clone(skip)
		if skip == nil {
			skip = map[int]bool{}
		}
		skip[r.superPID] = true
		left, pids = r.cg.sweep(skip, deadline)
		r.extra = append(r.extra, left...)
		r.killed = append(r.killed, pids...)
		// A process that moved itself out of the cgroup (root, or a
		// user who owns a delegated parent) is still found among the
		// gate's children if its supervisor is gone.
		for _, p := range pids {
			skip[p] = true
		}
	}
	if !orphaned {
		return
	}
	left, pids = adoptedSweep(super, r.superStart, skip, deadline)
	r.extra = append(r.extra, left...)
	r.killed = append(r.killed, pids...)
}

// reap waits for what the sweeps killed; the supervisor is gone by then.
func (r *supervisorRun) reap() { reapKilled(r.killed, time.Now().Add(cleanupTimeout)) }

// stop asks the supervisor to tear the tree down. SIGTERM is sent only
// once the supervisor has answered: before that it may not be handling
// signals yet, and would die without reporting.
func (r *supervisorRun) stop() {
	if r.stopping {
		return
	}
	r.stopping = true
	if r.startMsg != nil {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
	}
	r.hardKillC = time.After(r.spec.Grace + hardKillMargin)
}

// loop follows the supervisor until it exits: its first answer, a stop
// (only the script can send one), the timeout, the caller's cancel, and
// the hard kill when it does not answer or does not finish in time.
func (r *supervisorRun) loop(ctx context.Context) {
	waitC := make(chan error, 1)
	go func() { waitC <- r.cmd.Wait() }()
	// The supervisor is our child: a stop (kill -STOP from the script) is
	// reported to us like an exit.
	stoppedC := make(chan struct{}, 1)
	if pidfd, err := unix.PidfdOpen(r.superPID, 0); err == nil {
		go func() {
			watchStop(pidfd, stoppedC)
			unix.Close(pidfd)
		}()
	}
	var timeoutC <-chan time.Time
	if r.spec.Timeout > 0 {
		t := time.NewTimer(r.spec.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	handshake := time.NewTimer(handshakeTimeout)
	defer handshake.Stop()
	handshakeC := handshake.C
	ctxDone := ctx.Done()
	for {
		select {
		case m := <-r.startC:
			r.startMsg = &m
			handshakeC = nil
			if r.stopping {
				_ = r.cmd.Process.Signal(syscall.SIGTERM)
			}
		case r.waitErr = <-waitC:
			return
		case <-stoppedC:
			// Only the script can have stopped it (it is in a session of
			// its own, out of reach of the terminal's job control): kill it
			// and the whole tree now, even if it was continued since.
			r.lost = "stopped"
			r.hardKilled = true
			r.sweep(r.superPID, nil, true)
		case <-timeoutC:
			timeoutC = nil
			r.timedOut = true
			r.stop()
		case <-ctxDone:
			ctxDone = nil
			r.cancelled = true
			r.stop()
		case <-handshakeC:
			handshakeC = nil
			r.noAnswer = true
			r.hardKilled = true
			_ = r.cmd.Process.Kill()
		case <-r.hardKillC:
			r.hardKillC = nil
			r.hardKilled = true
			_ = r.cmd.Process.Kill()
		}
	}
}

// collect drains the report, makes sure that nothing of the tree is left
// (this finds what a lost supervisor left behind) and builds the Result.
func (r *supervisorRun) collect() (*Result, error) {
	r.drainReports()
	if r.startMsg != nil && r.startMsg.StartError != "" {
		return nil, r.startRefused()
	}
	r.noteLost()
	// A supervisor that is gone without its report, or whose own cleanup
	// ran out of time, left the rest of the tree to this process.
	r.sweep(0, r.reportedLeftovers(), r.final == nil || r.final.Unfinished)
	r.reap()
	return r.outcome(r.result())
}

// drainReports waits for the end of the report pipe (only the supervisor
// held its write end), and takes the start's outcome if loop did not.
func (r *supervisorRun) drainReports() {
	_ = r.repR.SetReadDeadline(time.Now().Add(drainLimit))
	<-r.repDone
	r.repR.Close()
	if r.startMsg == nil {
		select {
		case m := <-r.startC:
			r.startMsg = &m
		default:
		}
	}
}

// startRefused cleans up after a supervisor that could not start the
// script, and says why.
func (r *supervisorRun) startRefused() error {
	r.sweep(0, nil, false)
	r.reap()
	discardReaders(r.rs)
	discardReaders([2]*streamReader{r.diag})
	return errors.New(r.startMsg.StartError)
}

// noteLost says how the supervisor was lost when it died without its
// report, and not by our hand: killed (by the script, which can signal
// it), or failed after it had answered.
func (r *supervisorRun) noteLost() {
	if r.final != nil || r.hardKilled {
		return
	}
	switch {
	case killedBySignal(r.waitErr):
		r.lost = "killed"
	case r.startMsg != nil:
		r.lost = "failed"
	}
}

// reportedLeftovers are the processes the supervisor's final report
// lists: the sweep leaves them to it.
func (r *supervisorRun) reportedLeftovers() map[int]bool {
	skip := map[int]bool{}
	if r.final != nil {
		for _, l := range r.final.Leftovers {
			skip[l.PID] = true
		}
	}
	return skip
}

// result is what every Result of the run holds: the mechanism, what was
// blocked and the streams.
func (r *supervisorRun) result() *Result {
	mechanism := MechanismSubreaper
	if r.cg != nil {
		mechanism = MechanismCgroup
	}
	res := &Result{Started: r.started, ExitCode: -1, Mechanism: mechanism, SupervisorLost: r.lost}
	if r.startMsg != nil {
		res.Contained = r.startMsg.Contained
	}
	res.Blocked, res.BlockedDroppedKinds = r.streamed.list()
	if r.final != nil {
		res.Blocked, res.BlockedDroppedKinds = r.final.Blocked, r.final.BlockedDroppedKinds
	}
	res.BlockedDropped = droppedTotal(res.BlockedDroppedKinds)
	if r.startMsg != nil && r.startMsg.LimitsWhy != "" {
		// The script's tree was forked outside the v1 cgroups.
		r.lim = nil
	}
	r.lim.record(res.Contained)
	res.Blocked = append(res.Blocked, r.lim.blocked()...)
	drained := time.Now().Add(drainLimit)
	res.Stdout = r.rs[0].finish(drained)
	res.Stderr = r.rs[1].finish(drained)
	res.Diagnostics = string(r.diag.finish(drained).Head)
	res.Finished = time.Now()
	return res
}

// outcome completes res by how the run ended: lost, killed by the gate,
// never answered, or done with the supervisor's final report.
func (r *supervisorRun) outcome(res *Result) (*Result, error) {
	switch {
	case r.lost != "":
		return r.killedResult(res), nil
	case r.startMsg == nil && r.noAnswer:
		return nil, errors.New("proc: the supervisor did not answer; " + errNoSupervise)
	case r.startMsg == nil && !r.stopping:
		return nil, fmt.Errorf("proc: the supervisor exited without a report (%s); %s", describeWait(r.waitErr), errNoSupervise)
	case r.final == nil:
		// The supervisor was killed by the gate (or the run was stopped
		// before the script started): nothing more is known.
		return r.killedResult(res), nil
	}
	res.ExitCode = r.final.ExitCode
	res.Signal = r.final.Signal
	res.Leftovers = append(r.final.Leftovers, r.extra...)
	// The flags say the run was cut short: the kill procedure started while
	// the script's main process was still running.
	res.TimedOut = r.timedOut && r.final.Interrupted
	res.Cancelled = r.cancelled && r.final.Interrupted
	return res, nil
}

// killedResult is res for a supervisor that was killed or lost: nothing
// is known of the script's end but what the gate did.
func (r *supervisorRun) killedResult(res *Result) *Result {
	res.Signal = "killed"
	res.TimedOut, res.Cancelled = r.timedOut, r.cancelled
	res.Leftovers = r.extra
	return res
}
