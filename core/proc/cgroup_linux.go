// This file is the cgroup v2 layer: a cgroup of its own for each run, so
// that every process the script starts is found, frozen and killed.

package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// noCgroup makes newCgroup return nil: tests set it (setNoCgroup in a
// _test.go file) to exercise the subreaper mechanism as root. Nothing in
// a shipped binary sets it; no environment variable reaches it.
var noCgroup atomic.Bool

// cgroup is a cgroup v2 directory made for one run.
type cgroup struct {
	dir string
	fd  int // O_DIRECTORY fd, for CLONE_INTO_CGROUP
}

// newCgroup creates a cgroup for one run below the gate's own cgroup, or
// returns nil when that is not possible (no cgroup v2, not writable, no
// cgroup.kill), or when a test turned cgroups off.
func newCgroup() *cgroup {
	if noCgroup.Load() {
		return nil
	}
	mnt := cgroup2Mount()
	if mnt == "" {
		return nil
	}
	rel := ownCgroup()
	if rel == "" {
		return nil
	}
	removeStaleCgroups(filepath.Join(mnt, rel))
	dir := filepath.Join(mnt, rel, fmt.Sprintf("diffgate-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir)
		return nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil
	}
	return &cgroup{dir: dir, fd: fd}
}

// removeStaleCgroups removes the cgroups that gates which died mid-run left
// in parent (named after a process that no longer exists). rmdir fails on a
// cgroup that still holds processes, so nothing alive is touched.
func removeStaleCgroups(parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, "diffgate-*-*"))
	for _, d := range dirs {
		f := strings.Split(filepath.Base(d), "-")
		if pid, err := strconv.Atoi(f[1]); err == nil && len(f) == 3 && unix.Kill(pid, 0) == unix.ESRCH {
			_ = os.Remove(d)
		}
	}
}

// cgroup2Mount returns where the cgroup v2 hierarchy is mounted ("" if nowhere).
func cgroup2Mount() string {
	for _, m := range mountInfo() {
		if m.fsType == "cgroup2" && m.root == "/" {
			return m.point
		}
	}
	return ""
}

// ownCgroup returns this process's cgroup v2 path ("0::/path").
func ownCgroup() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok && strings.HasPrefix(p, "/") {
			return p
		}
	}
	return ""
}

// write writes s into one of the cgroup's control files.
func (c *cgroup) write(file, s string) error {
	return os.WriteFile(filepath.Join(c.dir, file), []byte(s), 0)
}

// event reports the value of key in cgroup.events ("populated", "frozen").
func (c *cgroup) event(key string) string {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+" "); ok {
			return v
		}
	}
	return ""
}

// waitEvent waits until cgroup.events says key is want or until deadline;
// the kernel signals every change of the file with POLLPRI.
func (c *cgroup) waitEvent(key, want string, deadline time.Time) bool {
	f, err := os.Open(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return false
	}
	defer f.Close()
	for {
		if c.event(key) == want {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLPRI}}
		_, err := unix.Poll(fds, int(min(left, 100*time.Millisecond)/time.Millisecond)+1)
		if err != nil && err != unix.EINTR {
			return false
		}
	}
}

// procs lists the processes in the cgroup.
func (c *cgroup) procs() []int {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// sweep freezes the cgroup, records every process in it except the ones in
// skip, kills them all and waits until the cgroup is empty (or deadline). It
// returns the leftovers and every pid it killed (to be reaped by reapKilled
// once the supervisor is gone).
func (c *cgroup) sweep(skip map[int]bool, deadline time.Time) ([]Leftover, []int) {
	if c.event("populated") == "0" {
		return nil, nil
	}
	if c.write("cgroup.freeze", "1") == nil {
		c.waitEvent("frozen", "1", minTime(deadline, time.Now().Add(freezeSettle)))
	}
	var out []Leftover
	pids := c.procs()
	for _, p := range pids {
		if !skip[p] {
			out = append(out, Leftover{PID: p, Cmd: cmdline(p)})
		}
	}
	_ = c.write("cgroup.kill", "1")
	// One that was forked after the list (the freeze did not settle) is
	// listed until it is gone: killed here, it is a leftover too.
	for _, p := range c.procs() {
		if !slices.Contains(pids, p) {
			pids = append(pids, p)
			if !skip[p] {
				out = append(out, Leftover{PID: p, Cmd: cmdline(p)})
			}
		}
	}
	c.waitEvent("populated", "0", deadline)
	return out, pids
}

// close removes the (empty) cgroup.
func (c *cgroup) close() {
	unix.Close(c.fd)
	for i := 0; i < 100; i++ {
		err := os.Remove(c.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) || !errors.Is(err, unix.EBUSY) {
			return
		}
		c.waitEvent("populated", "0", time.Now().Add(10*time.Millisecond))
	}
}
