package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/internal/oneline"
)

// supervisorCleanup is the bound a run sends its supervisor for the final
// sweep (superSpec.Cleanup) when it is not zero: a test sets it below zero
// to see what the gate finds on its own.
var supervisorCleanup atomic.Int64 // a time.Duration

const (
	// cleanupTimeout bounds the supervisor's final sweep (a process stuck in
	// an uninterruptible sleep can take arbitrarily long to die).
	cleanupTimeout = 10 * time.Second
	// freezeSettle bounds how long freeze waits for the processes it stopped
	// to be reported as stopped.
	freezeSettle = time.Second
	// pollInterval is how often the supervisor re-checks the tree while it
	// waits during the grace period.
	pollInterval = 20 * time.Millisecond
	// execWait bounds, over a whole cleanup, how long freeze waits for
	// processes caught between fork and exec to exec, so that a leftover is
	// reported as the command it runs ("sleep 300") rather than as the copy
	// of the shell that forked it (see awaitExec: the wait ends earlier as
	// soon as the copy sleeps or uses CPU of its own).
	execWait = 2 * time.Second
	// execCPU is the CPU time (in clock ticks) after which a copy caught
	// before its exec counts as doing work of its own (a subshell loop).
	execCPU = 3
)

// Supervise must be called first thing in main() (and in TestMain of any
// package that runs scripts): if this process was started by Run as the
// supervisor it runs the supervisor and exits; otherwise it returns
// immediately.
//
// A process is the supervisor only when Run started it: its command line is
// exactly supervisorName, and its fd 3 is a pipe whose other end its parent
// holds (Run's report pipe). Nothing in the environment counts, so no
// variable a user sets changes what a program does.
func Supervise() {
	if !isSupervisorProcess() {
		return
	}
	os.Exit(supervise())
}

// isSupervisorProcess reports whether this process was started by Run as
// the supervisor (see Supervise).
func isSupervisorProcess() bool {
	if len(os.Args) != 1 || os.Args[0] != supervisorName {
		return false
	}
	var st unix.Stat_t
	if err := unix.Fstat(3, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return false
	}
	want := "pipe:[" + strconv.FormatUint(st.Ino, 10) + "]"
	dir := "/proc/" + strconv.Itoa(os.Getppid()) + "/fd"
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrPermission) {
		// A parent that is not dumpable (setuid, file capabilities) hides
		// its fds: settle for a spec pipe on fd 0 as well.
		var in unix.Stat_t
		return unix.Fstat(0, &in) == nil && in.Mode&unix.S_IFMT == unix.S_IFIFO
	}
	if err != nil {
		return false
	}
	denied := false
	for _, e := range ents {
		l, err := os.Readlink(dir + "/" + e.Name())
		if err == nil && l == want {
			return true
		}
		denied = denied || errors.Is(err, os.ErrPermission)
	}
	// Started over an overlay as a normal user (Spec.Overlay), the
	// supervisor is in a user namespace of its own, from which the parent's
	// fds cannot be read: the namespace Run makes (the caller's own uid
	// mapped to itself, nothing else) stands for the check.
	return denied && inOverlayUserNS()
}

// supervisor holds the state of the supervisor process.
type supervisor struct {
	self      int
	mainPID   int
	mainCmd   string // the script's command line, read once it was exec'd
	grace     time.Duration
	execWait  time.Duration // what is left of the execWait budget
	seen      map[int]bool
	leftovers []Leftover
	// unfinished: cleanup reached its deadline with the tree not yet gone.
	unfinished bool
}

// waitResult is the outcome of waiting for the script's main process.
type waitResult struct {
	ws  unix.WaitStatus
	err error
}

// supervise is the supervisor process: it reads the spec, makes the
// mounts, starts the script contained, reports the start, waits for the
// script's main process (or a signal to stop), tears the tree down and
// sends the final report. It returns the process's exit code.
func supervise() int {
	// The script's parent-death signal fires when the thread that forked it
	// exits: keep the forking thread alive for the whole run.
	runtime.LockOSThread()
	nameThread(supervisorComm)
	syscall.CloseOnExec(3)
	rep := os.NewFile(3, "report")
	enc := json.NewEncoder(rep)

	var sp superSpec
	if err := json.NewDecoder(os.Stdin).Decode(&sp); err != nil {
		_ = enc.Encode(superMsg{StartError: "proc: supervisor: read spec: " + oneline.Flat(err.Error())})
		return 2
	}
	closeOnExecFrom(3)
	setOuterRoot(os.Getppid())
	// Orphaned descendants are re-parented to us instead of init.
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	if err := prepareMounts(&sp); err != nil {
		_ = enc.Encode(superMsg{StartError: err.Error()})
		return 0
	}
	rec := newRecorder()
	var saved []savedPath
	if sp.Containment.Enabled {
		saved = saveReadOnly(sp.Containment.ReadOnly)
	}
	pid, enforced, err := startContained(&sp, rec)
	if err != nil {
		_ = enc.Encode(superMsg{StartError: err.Error()})
		return 0
	}
	// The watcher's goroutines stream blocked actions as they happen:
	// the encoder is shared from here on.
	encode := sharedEncoder(enc)
	encode(superMsg{PID: pid, Contained: enforced, LimitsWhy: sp.limitsWhy})
	rec.stream(func(b Blocked) { encode(superMsg{Blocked: []Blocked{b}}) })

	// ForkExec returns once the exec succeeded: this is the script's own
	// command line, which its forked, not yet exec'd children share.
	s := &supervisor{self: os.Getpid(), mainPID: pid, mainCmd: cmdline(pid), grace: sp.Grace,
		execWait: execWait, seen: map[int]bool{}}
	wr, interrupted := s.waitMain(reapUntil(pid), sigs)
	s.cleanup(sp.Cleanup)
	restoreReadOnly(saved, pid, rec)
	encode(s.doneMsg(wr, interrupted, rec))
	return 0
}

// prepareMounts mounts the overlay (a failure ends the start) and, for a
// contained script in a mount namespace of its own, the read-only mounts
// (sp.mounts says whether they hold, and why not).
func prepareMounts(sp *superSpec) error {
	if sp.Overlay != nil {
		if err := mountOverlay(sp.Overlay); err != nil {
			return err
		}
	}
	if sp.Containment.Enabled {
		sp.mounts = mountResult{why: sp.MountWhy}
		if sp.MountNS {
			if err := readOnlyMounts(&sp.Containment); err != nil {
				sp.mounts.why = oneline.Flat(err.Error())
			} else {
				sp.mounts.ok = true
			}
		}
	}
	return nil
}

// sharedEncoder writes report messages with enc from any goroutine.
func sharedEncoder(enc *json.Encoder) func(superMsg) {
	var mu sync.Mutex
	return func(m superMsg) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(m)
	}
}

// reapUntil reaps every child (orphans included) until the main process
// pid is found, and sends how it ended.
func reapUntil(pid int) <-chan waitResult {
	mainDone := make(chan waitResult, 1)
	go func() {
		for {
			var ws unix.WaitStatus
			wpid, err := unix.Wait4(-1, &ws, 0, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				mainDone <- waitResult{err: err}
				return
			}
			if wpid == pid {
				mainDone <- waitResult{ws: ws}
				return
			}
		}
	}()
	return mainDone
}

// waitMain waits for the script's main process to end, or for a signal
// to stop, which kills the tree (interrupted).
func (s *supervisor) waitMain(mainDone <-chan waitResult, sigs <-chan os.Signal) (wr waitResult, interrupted bool) {
	select {
	case wr = <-mainDone:
	case <-sigs:
		interrupted = true
		wr = s.killTree(mainDone)
	}
	return wr, interrupted
}

// doneMsg is the final report: how the main process ended, what was left
// and what was blocked.
func (s *supervisor) doneMsg(wr waitResult, interrupted bool, rec *recorder) superMsg {
	msg := superMsg{Done: true, Interrupted: interrupted, Leftovers: s.leftovers, Unfinished: s.unfinished}
	msg.ExitCode, msg.Signal = exitStatus(wr)
	msg.Blocked, msg.BlockedDroppedKinds = rec.result()
	msg.BlockedDropped = droppedTotal(msg.BlockedDroppedKinds)
	return msg
}

// startScript starts the script in its own process group with standard input
// from the null device, falling back to its "#!" interpreter or /bin/sh when
// it cannot be executed directly.
func startScript(sp *superSpec) (int, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, fmt.Errorf("proc: open %s: %v", os.DevNull, oneline.Flat(err.Error()))
	}
	defer devnull.Close()
	attr := &syscall.ProcAttr{
		Dir: sp.Dir,
		Env: sp.Env,
		// The script's stdout and stderr pipes came as fds 4 and 5; the
		// supervisor's own 1 and 2 are its diagnostics pipe.
		Files: []uintptr{devnull.Fd(), 4, 5},
		Sys: &syscall.SysProcAttr{
			Setpgid:   true,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	argv := append([]string{sp.Path}, sp.Args...)
	pid, err := syscall.ForkExec(argv[0], argv, attr)
	if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOEXEC) {
		argv = fallbackArgv(sp.Path, sp.Args)
		pid, err = syscall.ForkExec(argv[0], argv, attr)
		if err != nil {
			return 0, fmt.Errorf("proc: cannot run %s: %s: %v", sp.Path, argv[0], err)
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			if interp, _ := readShebang(sp.Path); interp != "" {
				return 0, fmt.Errorf("proc: cannot run %s: interpreter %s: %v", sp.Path, interp, err)
			}
		}
		return 0, fmt.Errorf("proc: cannot run %s: %v", sp.Path, err)
	}
	return pid, nil
}

// killTree stops a running script: SIGTERM (and SIGCONT) to the whole tree,
// then, when the grace period ends, SIGKILL to the main process. It returns
// once the main process has been reaped and either no descendant is left or
// the grace period is over; cleanup deals with the rest.
func (s *supervisor) killTree(mainDone <-chan waitResult) waitResult {
	s.signalTree(syscall.SIGTERM)
	s.signalTree(syscall.SIGCONT)
	grace := time.NewTimer(s.grace)
	defer grace.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var wr waitResult
	got := false
	for {
		select {
		case wr = <-mainDone:
			got = true
			if len(livingDescendants(s.self)) == 0 {
				return wr
			}
		case <-tick.C:
			if got && len(livingDescendants(s.self)) == 0 {
				return wr
			}
		case <-grace.C:
			if !got {
				_ = unix.Kill(s.mainPID, unix.SIGKILL)
				wr = <-mainDone
			}
			return wr
		}
	}
}

// signalTree sends sig to the script's process group and to every descendant.
func (s *supervisor) signalTree(sig syscall.Signal) {
	_ = unix.Kill(-s.mainPID, sig)
	for _, p := range livingDescendants(s.self) {
		_ = unix.Kill(p, sig)
	}
}

// cleanup freezes, records and kills every remaining descendant and reaps
// them all. It returns when the supervisor has no child left (as a subreaper,
// that means no descendant is left) or after limit (0: cleanupTimeout). A
// negative limit (a test's) skips it: what is left is then the gate's to find.
func (s *supervisor) cleanup(limit time.Duration) {
	if limit < 0 {
		s.unfinished = true
		return
	}
	if limit == 0 {
		limit = cleanupTimeout
	}
	deadline := time.Now().Add(limit)
	for {
		if s.reap() {
			return
		}
		fresh := s.freeze(deadline)
		// Read the command lines now, frozen, just before the kill.
		for _, p := range fresh {
			s.leftovers = append(s.leftovers, Leftover{PID: p, Cmd: cmdline(p)})
		}
		// Every process killed here is a leftover, frozen first or not: one
		// born after freeze's last scan (a process that keeps forking and
		// letting its parent exit) was killed unreported, and the run passed.
		t := subtree(s.self)
		living := t.descendants(s.self)
		for _, p := range living {
			if !s.seen[p] {
				s.seen[p] = true
				s.leftovers = append(s.leftovers, Leftover{PID: p, Cmd: cmdline(p)})
			}
			_ = unix.Kill(p, unix.SIGKILL)
		}
		killGroups(t, living, unix.Getpgrp())
		if time.Now().After(deadline) {
			// Something may be left: the gate looks for it among its own
			// children once this process is gone.
			s.unfinished = true
			return
		}
		if len(fresh) == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// reap reaps every exited child without blocking and reports whether the
// supervisor has no child left.
func (s *supervisor) reap() bool {
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err == unix.ECHILD
		case wpid <= 0:
			return false
		}
	}
}

// freeze stops (SIGSTOP) every living descendant not seen before, re-scanning
// until no new one appears and all of them are stopped, so that a forking
// process cannot escape. It returns the newly frozen processes.
func (s *supervisor) freeze(deadline time.Time) []int {
	if d := time.Now().Add(freezeSettle); d.Before(deadline) {
		deadline = d
	}
	var fresh []int
	for {
		t := subtree(s.self)
		added := false
		for _, p := range t.descendants(s.self) {
			if !s.seen[p] {
				s.seen[p] = true
				s.awaitExec(p, t[p].ppid)
				_ = unix.Kill(p, unix.SIGSTOP)
				fresh = append(fresh, p)
				added = true
			}
		}
		if added && time.Now().Before(deadline) {
			continue
		}
		stopped := true
		for _, p := range fresh {
			if e, ok := t[p]; ok && !e.stoppedOrDead() {
				stopped = false
				break
			}
		}
		if stopped || time.Now().After(deadline) {
			return fresh
		}
		time.Sleep(time.Millisecond)
	}
}

// awaitExec gives a process that still looks like a pre-exec copy of its
// parent or of the script (same command line: "sleep 300 &" forks the shell,
// then the child execs sleep) a moment to exec before it is frozen. A
// SIGSTOP in between would freeze it as the shell for good. The wait comes
// out of the supervisor's execWait budget, so a subshell that never execs
// (a "( ... ) &" loop) costs at most that once.
func (s *supervisor) awaitExec(pid, ppid int) {
	if s.execWait <= 0 {
		return
	}
	parentCmd := ""
	if ppid > 0 && ppid != s.self {
		parentCmd = cmdline(ppid)
	}
	preExec := func(c string) bool {
		return c != "?" && (c == s.mainCmd || (parentCmd != "" && parentCmd != "?" && c == parentCmd))
	}
	// A copy that is about to exec needs a little CPU and does not sleep:
	// wait while it has used less than execCPU and has not been seen
	// asleep, so a loaded machine (the copy not yet scheduled) does not
	// turn "sleep 300" into the shell that forked it. A subshell that runs
	// a loop or waits for its own children stops the wait early; the
	// budget bounds the rest.
	start := time.Now()
	defer func() { s.execWait -= time.Since(start) }()
	first, ok := readStat(pid)
	asleep := 0
	for ok && preExec(cmdline(pid)) && time.Since(start) < s.execWait {
		e, ok2 := readStat(pid)
		if !ok2 || e.cpu-first.cpu >= execCPU {
			return
		}
		if e.state == 'S' {
			if asleep++; asleep >= 3 {
				return
			}
		} else {
			asleep = 0
		}
		time.Sleep(time.Millisecond)
	}
}

// limitFD is the first fd of the tasks files of the limits' v1 cgroups
// (superSpec.Limits), after the report pipe and the script's streams.
const limitFD = 6

// joinLimits moves the calling thread, the one that forks the script, into
// each v1 cgroup of the limits: it writes 0 (itself alone) to each tasks
// file (n fds from first: limitFD in the supervisor) and closes it. What
// it forks is then born in them. It returns why it did not ("" when it
// did).
func joinLimits(first, n int) string {
	var why []string
	for fd := first; fd < first+n; fd++ {
		if _, err := unix.Write(fd, []byte("0")); err != nil {
			why = append(why, "cgroup v1: join the limits: "+err.Error())
		}
		_ = unix.Close(fd)
	}
	return strings.Join(why, "; ")
}

// closeOnExecFrom marks every open file descriptor >= from close-on-exec, so
// that the script inherits only its standard streams.
func closeOnExecFrom(from int) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd >= from {
			syscall.CloseOnExec(fd)
		}
	}
}

// exitStatus turns the main process's wait status into an exit code and a
// signal name.
func exitStatus(wr waitResult) (int, string) {
	switch {
	case wr.err != nil:
		return -1, "unknown"
	case wr.ws.Exited():
		return wr.ws.ExitStatus(), ""
	case wr.ws.Signaled():
		return -1, wr.ws.Signal().String()
	}
	return -1, "unknown"
}
