package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// limiter caps the script's whole tree with cgroup controllers: pids.max
// (a fork bomb stops at it, whoever runs it: RLIMIT_NPROC does not hold
// root) and, with Containment.Memory, memory.max. It uses the run's cgroup
// v2 when that has the controllers, and otherwise a cgroup of its own in
// each cgroup v1 hierarchy of the controller (hybrid systems). The
// supervisor's thread that forks the script joins a v1 cgroup by moving
// itself alone into it (joinLimits), before it sets up containment: the
// script's whole tree is forked from it, the supervisor's other threads
// stay out. A tree that hits a limit leaves a blocked action of kind
// "fork" or "memory" (read from pids.events and memory.events, or
// memory.oom_control).
type limiter struct {
	pids, mem     string // cgroup directories holding pids.max and the memory limit ("" none)
	pidsV1, memV1 bool   // the directory is our own (v1: join it, remove it)
	pidsMax       int
	memMax        int64
}

// pidsSlack is added to pids.max for the supervisor's own threads, which
// a cgroup v2 holds with the tree (a Go process: a dozen, more under the
// race detector or while the watcher carries out many connects at once).
const pidsSlack = 256

// newLimiter prepares the limits for one run; cg is the run's cgroup v2
// (nil without one). What cannot be had is left out (see Enforced).
func newLimiter(cg *cgroup, c *Containment) *limiter {
	if !c.Enabled {
		return nil
	}
	l := &limiter{}
	nproc := c.NProc
	if nproc == 0 {
		nproc = DefaultNProc
	}
	if dir, v1 := limitDir(cg, "pids"); dir != "" {
		max := nproc + pidsSlack
		if v1 {
			max = nproc + 1 // the supervisor's thread that forks the script
		}
		if os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0) == nil {
			l.pids, l.pidsV1, l.pidsMax = dir, v1, max
		} else if v1 {
			_ = os.Remove(dir)
		}
	}
	if c.Memory > 0 {
		if dir, v1 := limitDir(cg, "memory"); dir != "" {
			file := "memory.max"
			if v1 {
				file = "memory.limit_in_bytes"
			}
			if os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(c.Memory, 10)), 0) == nil {
				l.mem, l.memV1, l.memMax = dir, v1, c.Memory
			} else if v1 {
				_ = os.Remove(dir)
			}
		}
	}
	return l
}

// limitDir returns a cgroup directory for the controller: the run's cgroup
// v2 when the controller is enabled there (the gate never enables one: that
// would change the host's cgroup set-up), else a new one in the
// controller's v1 hierarchy below this process's cgroup there; "" when
// there is neither.
func limitDir(cg *cgroup, controller string) (string, bool) {
	if cg != nil && hasController(cg.dir, controller) {
		return cg.dir, false
	}
	mnt, rel := cgroupV1(controller)
	if mnt == "" {
		return "", false
	}
	parent := filepath.Join(mnt, rel)
	removeStaleCgroups(parent)
	dir := filepath.Join(parent, fmt.Sprintf("diffgate-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if os.Mkdir(dir, 0o755) != nil {
		return "", false
	}
	return dir, true
}

func hasController(dir, controller string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	return err == nil && slices.Contains(strings.Fields(string(b)), controller)
}

// cgroupV1 returns the mount point of the v1 hierarchy that has
// controller, and this process's cgroup in it ("" when there is none).
func cgroupV1(controller string) (mnt, rel string) {
	for _, m := range mountInfo() {
		if m.fsType == "cgroup" && m.root == "/" && slices.Contains(strings.Split(m.superOptions, ","), controller) {
			mnt = m.point
		}
	}
	if mnt == "" {
		return "", ""
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), controller) {
			return mnt, parts[2]
		}
	}
	return "", ""
}

// v1dirs lists the limits' v1 cgroups (made by this run; the v2 one is
// the run's own, which the supervisor starts in).
func (l *limiter) v1dirs() []string {
	var out []string
	if l.pidsV1 {
		out = append(out, l.pids)
	}
	if l.memV1 {
		out = append(out, l.mem)
	}
	return out
}

// tasksFiles opens the tasks file of each v1 cgroup, for the supervisor
// (joinLimits). Moving a process (a pid written to cgroup.procs) takes a
// lock that waits for an RCU grace period: 5 to 15 ms of every contained
// run on the test machines. A thread that moves itself (0 written to
// tasks) does not take it.
func (l *limiter) tasksFiles() ([]*os.File, error) {
	if l == nil {
		return nil, nil
	}
	var out []*os.File
	for _, dir := range l.v1dirs() {
		f, err := os.OpenFile(filepath.Join(dir, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			closeFiles(out)
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// record fills in what the limits enforce.
func (l *limiter) record(e *Enforced) {
	if l == nil || e == nil {
		return
	}
	if l.pids != "" {
		e.CgroupPids = l.pidsMax
	}
	e.CgroupMemory = l.memMax
}

// blocked returns the limits the tree hit.
func (l *limiter) blocked() []Blocked {
	if l == nil {
		return nil
	}
	var out []Blocked
	if l.pids != "" {
		if n := eventCount(filepath.Join(l.pids, "pids.events"), "max"); n > 0 {
			out = append(out, Blocked{Kind: "fork", Target: fmt.Sprintf("pids.max %d", l.pidsMax), Op: "pids.max", Count: n})
		}
	}
	if l.mem != "" {
		file, key := "memory.events", "oom_kill"
		if l.memV1 {
			file = "memory.oom_control"
		}
		if n := eventCount(filepath.Join(l.mem, file), key); n > 0 {
			out = append(out, Blocked{Kind: "memory", Target: "memory.max " + strconv.FormatInt(l.memMax, 10), Op: "oom-kill", Count: n})
		}
	}
	return out
}

// eventCount reads "key N" from a flat-keyed cgroup file.
func eventCount(file, key string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// close removes the v1 cgroups (empty by now: the tree is dead).
func (l *limiter) close() {
	if l == nil {
		return
	}
	for _, dir := range l.v1dirs() {
		for i := 0; i < 100; i++ {
			if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
