// This file reads /proc: one parser of /proc/PID/stat, the process table
// and command lines.

package proc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// procEntry is what diffgate reads from /proc/PID/stat.
type procEntry struct {
	ppid  int
	state byte
	pgid  int
	sid   int    // session
	cpu   uint64 // utime+stime, in clock ticks
	start uint64 // in clock ticks after boot
}

func (e procEntry) alive() bool { return e.state != 'Z' && e.state != 'X' && e.state != 'x' }

func (e procEntry) stoppedOrDead() bool {
	return !e.alive() || e.state == 'T' || e.state == 't'
}

// procTable maps pids to their /proc entries.
type procTable map[int]procEntry

// scanProcs reads the parent and state of every process in /proc.
func scanProcs() procTable {
	t := procTable{}
	d, err := os.Open("/proc")
	if err != nil {
		return t
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		if e, ok := readStat(pid); ok {
			t[pid] = e
		}
	}
	return t
}

// readStat parses /proc/PID/stat: "pid (comm) state ppid ...". A process
// whose main thread has exited (pthread_exit) shows as a zombie while its
// other threads run on: its state is then that of a living thread, so it
// counts as alive until the whole thread group is gone.
func readStat(pid int) (procEntry, bool) {
	e, ok := parseStatFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if ok && !e.alive() {
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/stat")
		for _, t := range tasks {
			if te, ok := parseStatFile(t); ok && te.alive() {
				e.state = te.state
				break
			}
		}
	}
	return e, ok
}

// parseStatFile parses one stat file of /proc (a process's or a thread's).
func parseStatFile(name string) (procEntry, bool) {
	b, err := os.ReadFile(name)
	if err != nil {
		return procEntry{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procEntry{}, false
	}
	// after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procEntry{}, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return procEntry{}, false
	}
	e := procEntry{ppid: ppid, state: f[0][0]}
	e.pgid, _ = strconv.Atoi(string(f[2]))
	e.sid, _ = strconv.Atoi(string(f[3]))
	utime, _ := strconv.ParseUint(string(f[11]), 10, 64)
	stime, _ := strconv.ParseUint(string(f[12]), 10, 64)
	e.cpu = utime + stime
	e.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	return e, true
}

// descendants returns the living descendants of root, parents before children.
func (t procTable) descendants(root int) []int {
	children := map[int][]int{}
	for pid, e := range t {
		children[e.ppid] = append(children[e.ppid], pid)
	}
	var out []int
	queue := []int{root}
	visited := map[int]bool{root: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if visited[c] {
				continue
			}
			visited[c] = true
			queue = append(queue, c)
			if t[c].alive() {
				out = append(out, c)
			}
		}
	}
	return out
}

// livingDescendants returns the living descendants of root.
func livingDescendants(root int) []int { return subtree(root).descendants(root) }

// subtree reads the entries of the descendants of roots by following the
// kernel's children lists (/proc/PID/task/TID/children), so that one look
// costs what the tree holds, not what the whole machine runs: a process that
// keeps forking and letting its parent exit is outrun by a few reads, where
// a scan of every process on a loaded machine can take longer than a hop.
// A kernel without those lists (CONFIG_PROC_CHILDREN) gets the full scan.
// Like the scan, a look is not atomic: callers look again until it is stable.
func subtree(roots ...int) procTable {
	t := procTable{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		kids, ok := childrenOf(p)
		if !ok {
			if _, exists := readStat(p); !exists {
				continue // p exited: its children went to a reaper, looked at again later
			}
			return scanProcs()
		}
		for _, c := range kids {
			if _, seen := t[c]; seen {
				continue
			}
			if e, ok := readStat(c); ok {
				t[c] = e
				queue = append(queue, c)
			}
		}
	}
	return t
}

// childrenOf lists the children of pid, from the children list of each of
// its threads (a child's parent is the thread that forked it, or the one an
// orphan was re-parented to). ok is false when the kernel has no such lists
// or pid is gone.
func childrenOf(pid int) ([]int, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	var out []int
	for _, tid := range tids {
		b, err := os.ReadFile(dir + "/" + tid.Name() + "/children")
		if errors.Is(err, os.ErrNotExist) {
			if _, statErr := os.Stat(dir + "/" + tid.Name()); statErr == nil {
				return nil, false // the thread is there, its list is not: no CONFIG_PROC_CHILDREN
			}
			continue // the thread exited
		}
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, true
}

// cmdline returns the command line of pid, NULs turned into spaces, bounded
// and made printable; "[comm]" when it has none.
func cmdline(pid int) string {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return "?"
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := f.Read(buf)
	b := bytes.TrimRight(buf[:n], "\x00")
	if len(b) == 0 {
		comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		if err != nil {
			return "?"
		}
		return sanitizeCmd("[" + string(bytes.TrimSpace(comm)) + "]")
	}
	return sanitizeCmd(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}
