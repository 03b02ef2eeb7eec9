package proc

import (
	"os"
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
//     no process of the script's tree can share the gate's process group,
//     and while a run is in progress the gate process is a child subreaper:
//     the orphans of a killed supervisor are re-parented to the gate, which
//     finds them as its children outside its own process group (other than
//     the supervisors of its other runs) and kills them with their
//     descendants.
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
	}
	gateState.runs++
	var once sync.Once
	return func() {
		once.Do(func() {
			gateState.mu.Lock()
			defer gateState.mu.Unlock()
			gateState.runs--
			if gateState.runs == 0 && !gateState.wasReaper {
				_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
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
// children of this process that belong to no process group of ours and
// started no earlier than the supervisor, with their descendants. It freezes
// them until the set is stable, records them (except skip) and kills them,
// and the supervisor with them. It returns when none is left alive and the
// supervisor is dead, or at deadline, with the leftovers and every pid it
// killed (for reapKilled).
func adoptedSweep(super int, superStart uint64, skip map[int]bool, deadline time.Time) ([]Leftover, []int) {
	self := os.Getpid()
	ownPgid := unix.Getpgrp()
	find := func() (procTable, []int) {
		startMu.Lock()
		defer startMu.Unlock()
		t := scanProcs()
		var roots []int
		if super > 0 {
			roots = append(roots, super)
		}
		for pid, e := range t {
			if e.ppid != self || pid == super || isSupervisor(pid) {
				continue
			}
			if se, ok := readStat(pid); ok && se.pgid != ownPgid && se.start >= superStart {
				roots = append(roots, pid)
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
