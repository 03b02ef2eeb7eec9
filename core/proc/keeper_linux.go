package proc

import (
	"maps"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// This file is the gate's side of supervision: what the process inside Run
// does so that the script's tree is found and killed even when the script
// kills or stops its supervisor.
//
// Mechanism, decided at run time:
//   - "cgroup": when a cgroup v2 directory can be created below the gate's own
//     cgroup, the supervisor is started inside a fresh cgroup (clone3 with
//     CLONE_INTO_CGROUP, so there is no moment it is outside). Every
//     descendant is in it whatever it does short of writing cgroup.procs of
//     an ancestor (root); the gate freezes it, lists it and kills it
//     (cgroup.kill).
//   - "subreaper": otherwise. The supervisor runs in a session of its own, so
//     no process of the script's tree can share the gate's session, and
//     while a run is in progress the gate process is a child subreaper: the
//     orphans of a killed supervisor (or of one whose sweep ran out of time)
//     are re-parented to the gate, which finds them as its children outside
//     its own session (other than the supervisors of its other runs) and
//     kills them with their descendants and their process groups.
// The gate process is a child subreaper during runs in both cases, which is
// also what keeps InGatedRun true for orphans.

// Mechanisms reported in Result.Mechanism.
const (
	MechanismCgroup    = "cgroup"
	MechanismSubreaper = "subreaper"
)

// gateState is what the process inside Run shares between its runs.
var gateState struct {
	mu          sync.Mutex
	runs        int          // runs in progress (the subreaper flag is on while > 0)
	wasReaper   bool         // the flag as it was before the first run
	supervisors map[int]bool // supervisors started by runs in progress
	stopReaper  func()       // ends startAdoptedReaper's goroutine
}

var cgroupSeq atomic.Int64

// enterRun makes this process a child subreaper for the time of a run.
func enterRun() (leave func()) {
	gateState.mu.Lock()
	defer gateState.mu.Unlock()
	if gateState.runs == 0 {
		v, err := unix.PrctlRetInt(unix.PR_GET_CHILD_SUBREAPER, 0, 0, 0, 0)
		gateState.wasReaper = err == nil && v != 0
		if !gateState.wasReaper {
			_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		}
		gateState.stopReaper = startAdoptedReaper()
	}
	gateState.runs++
	var once sync.Once
	return func() {
		once.Do(func() {
			gateState.mu.Lock()
			gateState.runs--
			var stopReaper func()
			if gateState.runs == 0 {
				if !gateState.wasReaper {
					_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
				}
				stopReaper, gateState.stopReaper = gateState.stopReaper, nil
			}
			gateState.mu.Unlock()
			if stopReaper != nil {
				stopReaper() // unlocked: the reaper takes the lock (isSupervisor)
			}
		})
	}
}

// registerSupervisor records pid as a supervisor of a run of this process
// until the returned function is called.
func registerSupervisor(pid int) (unregister func()) {
	gateState.mu.Lock()
	defer gateState.mu.Unlock()
	if gateState.supervisors == nil {
		gateState.supervisors = map[int]bool{}
	}
	gateState.supervisors[pid] = true
	return func() {
		gateState.mu.Lock()
		defer gateState.mu.Unlock()
		delete(gateState.supervisors, pid)
	}
}

func isSupervisor(pid int) bool {
	gateState.mu.Lock()
	defer gateState.mu.Unlock()
	return gateState.supervisors[pid]
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// reapKilled reaps those of pids that are children of this process (the
// script's processes re-parented to the gate, all killed): it waits for each
// to exit, up to deadline. Call it only once the supervisor is gone, so that
// its children have been re-parented.
func reapKilled(pids []int, deadline time.Time) {
	self := os.Getpid()
	for _, p := range pids {
		if isSupervisor(p) {
			continue // cmd.Wait reaps it
		}
		if e, ok := readStat(p); !ok || e.ppid != self {
			continue
		}
		for {
			var ws unix.WaitStatus
			wpid, err := unix.Wait4(p, &ws, unix.WNOHANG, nil)
			if err == unix.EINTR {
				continue
			}
			if wpid == p || err != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// adoptedSweep finds the script's processes without a cgroup: the living
// descendants of the supervisor (when it is still there, stopped) and the
// children of this process that it adopted (adoptedChildren) and that
// started no earlier than the supervisor, with their descendants. It freezes
// them until the set is stable, records them (except skip) and kills them,
// and the supervisor with them. It returns when none is left alive and the
// supervisor is dead, or at deadline, with the leftovers and every pid it
// killed (for reapKilled).
func adoptedSweep(super int, superStart uint64, skip map[int]bool, deadline time.Time) ([]Leftover, []int) {
	ownPgid := unix.Getpgrp()
	find := func() (procTable, []int) {
		startMu.Lock()
		defer startMu.Unlock()
		var roots []int
		if super > 0 {
			roots = append(roots, super)
		}
		adopted := adoptedChildren(superStart)
		for pid := range adopted {
			roots = append(roots, pid)
		}
		t := subtree(roots...)
		maps.Copy(t, adopted)
		if super > 0 {
			if e, ok := readStat(super); ok {
				t[super] = e
			}
		}
		var out []int
		for _, r := range roots {
			if r != super && t[r].alive() {
				out = append(out, r)
			}
			out = append(out, t.descendants(r)...)
		}
		return t, out
	}
	seen := map[int]bool{}
	var left []Leftover
	var all []int
	for {
		t, pids := find()
		fresh := false
		for _, p := range pids {
			if !seen[p] {
				seen[p] = true
				fresh = true
				_ = unix.Kill(p, unix.SIGSTOP)
				all = append(all, p)
				if !skip[p] {
					left = append(left, Leftover{PID: p, Cmd: cmdline(p)})
				}
			}
		}
		for _, p := range pids {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		killGroups(t, pids, ownPgid)
		superAlive := false
		if super > 0 {
			_ = unix.Kill(super, unix.SIGKILL)
			e, ok := t[super]
			superAlive = ok && e.alive()
		}
		if len(pids) == 0 && !superAlive || time.Now().After(deadline) {
			return left, all
		}
		if !fresh {
			time.Sleep(time.Millisecond)
		}
	}
}

// watchStop waits (without reaping) until the supervisor stops or exits and
// reports a stop on stopped. pidfd is the supervisor's.
func watchStop(pidfd int, stopped chan<- struct{}) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, pidfd, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		if err == nil && info.Code == cldStopped {
			stopped <- struct{}{}
		}
		return
	}
}

// cldStopped is CLD_STOPPED, the si_code of a child stopped by a signal.
const cldStopped = 5

// adoptedChildren lists the children of this process that it adopted as a
// subreaper and that started no earlier than since (clock ticks after
// boot), with their entries: those in a session other than ours, except the
// supervisors of our runs. The script's tree is never in our session (its
// supervisor made a session of its own before it started the script, and a
// process can only leave a session for a new one), while a program this
// process starts itself stays in it, in a process group of its own or not.
// Call it with startMu held, so that a supervisor being started is
// registered before it is looked at.
func adoptedChildren(since uint64) procTable {
	self := os.Getpid()
	ownSid, _ := unix.Getsid(0)
	kids, ok := childrenOf(self)
	if !ok {
		for pid, e := range scanProcs() {
			if e.ppid == self {
				kids = append(kids, pid)
			}
		}
	}
	out := procTable{}
	for _, pid := range kids {
		if isSupervisor(pid) {
			continue
		}
		if e, ok := readStat(pid); ok && e.ppid == self && e.sid != ownSid && e.start >= since {
			out[pid] = e
		}
	}
	return out
}

// reapAdopted reaps the adopted children (adoptedChildren) that have
// exited. Nobody else waits for them: without this, a process that escaped
// a sweep and keeps forking and exiting would fill the process table with
// zombies of ours while runs are in progress.
func reapAdopted() {
	startMu.Lock()
	defer startMu.Unlock()
	for pid, e := range adoptedChildren(0) {
		if !e.alive() {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// startAdoptedReaper runs reapAdopted whenever a child changes state
// (SIGCHLD), until stop is called.
func startAdoptedReaper() (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGCHLD)
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-sigs:
				reapAdopted()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
		<-finished
		reapAdopted()
	}
}

// killGroups kills the process groups of pids (their entries in t) with
// SIGKILL, except the group keep (the caller's own). A group kill reaches
// every member at once, a child being forked included (the kernel restarts
// a fork that a group signal interrupts), where killing one pid at a time
// races a process that keeps forking and letting its parent exit. Only the
// script's processes are in these groups: a process can join a group of
// its own session only, and the script runs in a session of its own.
func killGroups(t procTable, pids []int, keep int) {
	done := map[int]bool{keep: true, 0: true}
	for _, p := range pids {
		if g := t[p].pgid; !done[g] {
			done[g] = true
			_ = unix.Kill(-g, unix.SIGKILL)
		}
	}
}
