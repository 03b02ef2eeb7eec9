package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/internal/fspath"
)

// Landlock access rights (golang.org/x/sys/unix names them; the raw
// system calls are used rather than go-landlock, whose package pulls in
// libcap/psx, which would be linked, with its C part, into the cgo
// desktop app that imports this package).
const (
	readFileRights  = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_EXECUTE
	readDirRights   = readFileRights | unix.LANDLOCK_ACCESS_FS_READ_DIR
	writeFileRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS returns the filesystem rights Landlock ABI abi can restrict.
func handledFS(abi int) uint64 {
	h := uint64(1<<13 - 1) // ABI 1: EXECUTE .. MAKE_SYM
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// pathRule is one Landlock path-beneath rule.
type pathRule struct {
	path   string
	rights uint64
}

// startContained starts the script (startScript) from a thread of its own,
// to which the containment is applied first: Landlock restricts a thread
// and what it starts, so the supervisor's other threads stay free (it reads
// /proc and signals the tree), and with the signal scope the script cannot
// signal the supervisor, whose main thread is outside the script's domain.
// The thread stays alive (parked) for the whole run: the script's
// parent-death signal fires when the thread that forked it exits.
func startContained(sp *superSpec, rec *recorder) (int, *Enforced, error) {
	c := &sp.Containment
	if !c.Enabled {
		pid, err := startScript(sp)
		return pid, nil, err
	}
	type started struct {
		pid int
		enf *Enforced
		err error
	}
	done := make(chan started, 1)
	var launch func()
	launch = func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the process
		if unix.Gettid() == os.Getpid() {
			// The main thread: the script must not share its domain.
			go launch()
			select {}
		}
		// no_new_privs first: Landlock and seccomp both need it (setuid
		// programs then gain nothing).
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- started{err: fmt.Errorf("proc: containment: no_new_privs: %v", err)}
			select {}
		}
		enf, err := restrictThread(c)
		if err == nil {
			enf.Mounts, enf.MountsWhy, enf.IPC = sp.mounts.ok, sp.mounts.why, sp.MountNS
			if !enf.Mounts {
				err = required(c, "mounts: "+enf.MountsWhy)
			}
		}
		if err != nil {
			done <- started{err: err}
			select {}
		}
		// The limits read /proc: before the watcher sees this thread's opens.
		restore := capLimits(c, enf)
		if err := sandboxThread(c, enf, rec); err != nil {
			restore()
			done <- started{err: err}
			select {}
		}
		pid, err := startScript(sp)
		restore()
		done <- started{pid: pid, enf: enf, err: err}
		select {}
	}
	go launch()
	r := <-done
	return r.pid, r.enf, r.err
}

// restrictThread applies Landlock to the calling (locked) thread.
func restrictThread(c *Containment) (*Enforced, error) {
	enf := &Enforced{}
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 || c.NoLandlock {
		abi = 0
	}
	enf.LandlockABI = int(abi)
	if abi < 1 {
		enf.Why = "landlock: not supported by this kernel"
		if c.NoLandlock {
			enf.Why = "landlock: turned off for a test"
		}
		return enf, required(c, enf.Why)
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS(int(abi))}
	size := unsafe.Sizeof(attr.Handled_access_fs)
	var why []string
	if c.NoNet {
		if abi >= 4 {
			attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
			size = unsafe.Offsetof(attr.Handled_access_net) + unsafe.Sizeof(attr.Handled_access_net)
			enf.Net = true
		} else {
			why = append(why, fmt.Sprintf("net: Landlock ABI %d has no TCP rules (needs 4)", abi))
		}
	}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Offsetof(attr.Scoped) + unsafe.Sizeof(attr.Scoped)
		enf.Signals = true
	} else {
		why = append(why, fmt.Sprintf("signals: Landlock ABI %d has no signal scope (needs 6)", abi))
	}
	if len(why) > 0 && c.Required {
		return nil, errors.New("proc: containment: " + why[0])
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		enf.Why = "landlock: create ruleset: " + errno.Error()
		return enf, required(c, enf.Why)
	}
	defer unix.Close(int(fd))
	rules, open := pathRules(c)
	if len(open) > 0 {
		why = append(why, fmt.Sprintf("secrets: %s stays readable (a directory above it cannot be listed)", open[0]))
		if c.Required {
			return nil, errors.New("proc: containment: " + why[len(why)-1])
		}
	} else {
		enf.Secrets = true
	}
	for _, r := range rules {
		if err := addPathRule(int(fd), r, attr.Handled_access_fs); err != nil {
			return nil, fmt.Errorf("proc: containment: landlock rule for %s: %v", r.path, err)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return nil, fmt.Errorf("proc: containment: landlock: %v", errno)
	}
	enf.Filesystem = true
	enf.Why = strings.Join(why, "; ")
	return enf, nil
}

// addPathRule adds one path-beneath rule; a path that vanished is skipped.
func addPathRule(fd int, r pathRule, handled uint64) error {
	pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(pfd)
	attr := unix.LandlockPathBeneathAttr{Allowed_access: r.rights & handled, Parent_fd: int32(pfd)}
	if attr.Allowed_access == 0 {
		return nil
	}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// required returns the error of a missing layer under Containment.Required.
func required(c *Containment, why string) error {
	if c.Required {
		return errors.New("proc: containment: " + why)
	}
	return nil
}

// pathRules returns the Landlock filesystem rules: read (and execute)
// everywhere but the denied paths, write below the writable ones. Landlock
// can only allow, and a rule covers a directory's whole tree: each
// directory on the way to a denied path gets no rule of its own, its
// other entries get one each ("allow every sibling along the path").
func pathRules(c *Containment) (rules []pathRule, open []string) {
	var deny []string
	for _, d := range c.DenyRead {
		if c.hidden {
			break // covered by the read-only mounts (hideSecrets)
		}
		if r, err := filepath.EvalSymlinks(d); err == nil {
			deny = append(deny, r)
		}
	}
	add := func(p string, dirRights, fileRights uint64) {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			rules = append(rules, pathRule{p, dirRights})
		default:
			rules = append(rules, pathRule{p, fileRights})
		}
	}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			// Its entries cannot be named (a directory the user may
			// traverse but not list): the whole directory stays
			// readable, and so do the denied paths below it (reported).
			add(dir, readDirRights, readFileRights)
			for _, d := range deny {
				if under(d, []string{dir}) == 1 {
					open = append(open, d)
				}
			}
			return
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if under(p, deny) == 0 {
				// Neither denied nor on the way to a denied path. The
				// entry's type comes from the listing: no stat for each
				// of a large directory's entries (a /tmp of hundreds).
				switch {
				case e.Type()&os.ModeSymlink != 0:
				case e.IsDir():
					rules = append(rules, pathRule{p, readDirRights})
				default:
					rules = append(rules, pathRule{p, readFileRights})
				}
				continue
			}
			if under(p, deny) == 2 && e.IsDir() {
				walk(p)
			}
			// under == 1: denied, no rule.
		}
	}
	if under("/", deny) == 0 {
		add("/", readDirRights, readFileRights)
	} else {
		walk("/")
	}
	writeDir := handledFS(99) &^ readDirRights
	ws := append([]string{}, c.Writable...)
	sort.Strings(ws)
	for _, w := range ws {
		// A writable directory is readable too (also inside a denied
		// one: --deny-read of the workspace's parent leaves the
		// workspace usable), unless a denied path lies below it: then its
		// reads come from the walk above.
		if under(w, deny) != 2 {
			add(w, writeDir|readDirRights, writeFileRights|readFileRights)
		} else {
			add(w, writeDir, writeFileRights)
		}
	}
	return rules, open
}

// under says where p stands relative to the denied paths: 1 when p is one
// of them or below one, 2 when one of them is below p, 0 otherwise.
func under(p string, deny []string) int {
	res := 0
	for _, d := range deny {
		switch {
		case fspath.Within(p, d):
			return 1
		case fspath.Within(d, p):
			res = 2
		}
	}
	return res
}

// capLimits lowers the soft RLIMIT_NPROC and RLIMIT_FSIZE of the
// supervisor for the fork of the script, which inherits them, and returns
// the function that restores the supervisor's own. Limits are per process,
// not per thread, so they are set around the fork only; the hard limits
// stay, so a script may raise its soft limits again (ulimit -u): the caps
// stop a runaway fork loop or file, not a determined script. RLIMIT_NPROC
// counts every task of the real uid and does not apply to root.
func capLimits(c *Containment, enf *Enforced) (restore func()) {
	nproc := uint64(c.NProc)
	if nproc == 0 {
		nproc = DefaultNProc
	}
	nproc += uint64(userTasks())
	fsize := uint64(c.FSize)
	if fsize == 0 {
		fsize = DefaultFSize
	}
	var undo []func()
	for _, l := range []struct {
		res int
		max uint64
		ok  *bool
	}{{unix.RLIMIT_NPROC, nproc, &enf.NProc}, {unix.RLIMIT_FSIZE, fsize, &enf.FSize}} {
		var old unix.Rlimit
		if unix.Getrlimit(l.res, &old) != nil {
			continue
		}
		lim := old
		lim.Cur = min(l.max, old.Max)
		if unix.Setrlimit(l.res, &lim) != nil {
			continue
		}
		*l.ok = true
		res := l.res
		undo = append(undo, func() { _ = unix.Setrlimit(res, &old) })
	}
	if os.Getuid() == 0 {
		enf.NProc = false // root is not held by RLIMIT_NPROC
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}

// userTasks bounds the tasks (threads) of the user, which RLIMIT_NPROC
// counts, from above: the machine's task count (/proc/loadavg), one read
// where counting the user's own would read every /proc/PID/status. Root is
// not held by RLIMIT_NPROC: 0 for root.
func userTasks() int {
	if os.Getuid() == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return 0
	}
	_, total, ok := strings.Cut(f[3], "/")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(total)
	return n
}
