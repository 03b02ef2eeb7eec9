package proc

// This file assembles the script thread's containment: the layers in order
// (startContained), the capability drop, the seccomp filters and the
// watcher (sandboxThread).

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// keptCaps are the capabilities a contained root script keeps: what it
// needs to own, read and change the files it may write (any owner, any
// mode), switch users and signal its own processes. Everything that
// administers the host (CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_SYS_MODULE,
// CAP_NET_RAW, CAP_MKNOD, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH (which
// would open files by handle, bypassing every path rule), CAP_SETFCAP,
// CAP_SYS_TIME, CAP_SYS_BOOT, CAP_SYS_RESOURCE, ...) is dropped.
var keptCaps = []struct {
	c    uintptr
	name string
}{
	{unix.CAP_CHOWN, "chown"}, {unix.CAP_DAC_OVERRIDE, "dac_override"}, {unix.CAP_FOWNER, "fowner"},
	{unix.CAP_FSETID, "fsetid"}, {unix.CAP_KILL, "kill"}, {unix.CAP_SETGID, "setgid"},
	{unix.CAP_SETUID, "setuid"}, {unix.CAP_NET_BIND_SERVICE, "net_bind_service"},
}

// dropPrivileges cuts the calling thread's capability sets so that the
// script starts with keptCaps when it runs as root and with none
// otherwise: the ambient set is cleared (a staged run's supervisor holds
// capabilities in its user namespace as ambient ones, which an exec would
// pass on), the inheritable set and, where the thread may change it
// (CAP_SETPCAP), the bounding set cut. Root's capabilities after the exec
// are its bounding set; a process that is not root gets none from an exec
// (no_new_privs keeps setuid programs and file capabilities from adding
// any).
func dropPrivileges(enf *Enforced) error {
	root := os.Geteuid() == 0
	keep := map[uintptr]bool{}
	var names []string
	if root {
		for _, k := range keptCaps {
			keep[k.c] = true
			names = append(names, k.name)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return errors.New("privileges: clear the ambient capabilities: " + err.Error())
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return errors.New("privileges: capget: " + err.Error())
	}
	if data[unix.CAP_SETPCAP/32].Effective&(1<<(unix.CAP_SETPCAP%32)) != 0 {
		for _, c := range allCaps() {
			if !keep[c] {
				if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil && err != unix.EINVAL {
					return errors.New("privileges: drop from the bounding set: " + err.Error())
				}
			}
		}
	}
	var mask [2]uint32
	for c := range keep {
		mask[c/32] |= 1 << (c % 32)
	}
	for i := range data {
		data[i].Inheritable &= mask[i]
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return errors.New("privileges: capset: " + err.Error())
	}
	// Check what the script will get.
	if r, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, unix.CAP_SYS_ADMIN, 0, 0); err == nil && r != 0 {
		return errors.New("privileges: CAP_SYS_ADMIN is still ambient")
	}
	if r, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, unix.CAP_SYS_ADMIN, 0, 0, 0); root && (err != nil || r != 0) {
		return errors.New("privileges: CAP_SYS_ADMIN is still in the bounding set")
	}
	enf.Privileges = true
	enf.KeptCaps = "none"
	if root {
		enf.KeptCaps = strings.Join(names, ",")
	}
	return nil
}

// sandboxThread adds, after Landlock, the rest of the script thread's
// containment: the capability drop, the seccomp filters and the watcher
// that serves their notifications (rec records what it blocks). It fills
// enf; a layer that cannot be had is an error only when c.Required.
func sandboxThread(c *Containment, enf *Enforced, rec *recorder) error {
	g := &gaps{required: c.Required}
	defer func() { enf.Why = joinWhy(enf.Why, g.why) }()
	if err := dropPrivileges(enf); err != nil {
		if e := g.miss(err.Error()); e != nil {
			return e
		}
	}
	a := seccompArch()
	if a == nil {
		enf.ObserveWhy = "seccomp: no system call table for this platform"
		if c.NoNet {
			return g.miss("seccomp: no system call table for this platform")
		}
		return nil
	}
	if c.NoNotify {
		enf.ObserveWhy = "seccomp user notification turned off for a test"
	} else {
		startWatcher(a, c, enf, rec)
	}
	if !enf.Observed {
		// The metadata and read-only-path refusals are the watcher's.
		if e := g.miss("metadata: " + enf.ObserveWhy); e != nil {
			return e
		}
	}
	// After the notification filter: this one refuses the script a
	// listener of its own. This and the socket filter leave a call of a
	// foreign ABI to the notification filter when it is loaded (an errno
	// of theirs would beat it and nothing would be recorded), and refuse
	// it themselves otherwise (foreignAction).
	if e := loadAdminFilter(a, enf, g); e != nil {
		return e
	}
	if e := loadSocketFilter(a, c, enf, g); e != nil {
		return e
	}
	if !enf.Sockets {
		return g.miss("sockets: " + enf.ObserveWhy)
	}
	return nil
}

// gaps collects the layers a run goes without (Enforced.Why); a missing
// one is an error when they are required.
type gaps struct {
	required bool
	why      []string
}

// miss notes a missing layer: an error when layers are required.
func (g *gaps) miss(why string) error {
	g.why = append(g.why, why)
	if g.required {
		return errors.New("proc: containment: " + why)
	}
	return nil
}

// joinWhy adds the reasons why (a list) to the reasons prev (a text).
func joinWhy(prev string, why []string) string {
	return strings.TrimPrefix(strings.Join(append([]string{prev}, why...), "; "), "; ")
}

// startWatcher loads the notification filter and starts the watcher that
// serves it; enf says whether it runs (Observed, StandIns) or why not
// (ObserveWhy).
func startWatcher(a *arch.Info, c *Containment, enf *Enforced, rec *recorder) {
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	fd, err := loadPolicy(notifyPolicy(a, c.NoNet), a, foreignAction(true, true), flags)
	if err == unix.EINVAL {
		// Before Linux 5.19: no killable wait (a signal then restarts
		// the call, which is notified again).
		fd, err = loadPolicy(notifyPolicy(a, c.NoNet), a, foreignAction(true, true), unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
	}
	if err != nil {
		enf.ObserveWhy = "seccomp user notification: " + err.Error()
		return
	}
	pol := watchPolicyOf(c)
	// Secrets the mounts cover read as empty: the watcher refuses
	// their opens itself, so the script sees EACCES as with Landlock.
	pol.landlockWrites, pol.landlockReads, pol.mounts = enf.Filesystem, enf.Filesystem && enf.Secrets && !c.hidden, enf.Mounts
	w := newWatcher(fd, a, pol, rec)
	w.start()
	enf.Observed = true
	enf.StandIns = c.NoNet && w.addfd
}

// loadAdminFilter loads the filter that refuses the script a listener
// of its own.
func loadAdminFilter(a *arch.Info, enf *Enforced, g *gaps) error {
	if _, err := loadPolicy(adminPolicy(a), a, foreignAction(false, enf.Observed), 0); err != nil {
		return g.miss("seccomp: admin filter: " + err.Error())
	}
	enf.Admin = true
	return nil
}

// socketLayer is what the socket filter does with the network off or on
// (noNet) and the watcher running or not (observed): inet lets
// AF_INET/AF_INET6 sockets reach the kernel (with the network off, only as
// far as the watcher, which answers them with stand-ins, or refuses and
// records them), noConnect refuses every connect, and sockets tells
// whether AF_UNIX sockets outside the writable directories are then out
// of reach (the watcher carries out every connect; without it, with the
// network off, there is no connect at all).
func socketLayer(noNet, observed bool) (inet, noConnect, sockets bool) {
	return !noNet || observed, noNet && !observed, observed || noNet
}

// loadSocketFilter loads the socket filter (socketLayer).
func loadSocketFilter(a *arch.Info, c *Containment, enf *Enforced, g *gaps) error {
	inet, noConnect, sockets := socketLayer(c.NoNet, enf.Observed)
	if _, err := loadPolicy(socketPolicy(a, inet, noConnect), a, foreignAction(false, enf.Observed), 0); err != nil {
		return g.miss("seccomp: " + err.Error())
	}
	enf.Seccomp = true
	enf.Sockets = sockets
	return nil
}

// resolveWritable resolves the writable paths that exist into the
// directories and the files (device nodes) among them.
func resolveWritable(paths []string) (dirs, files []string) {
	for _, w := range paths {
		r, err := filepath.EvalSymlinks(w)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(r); err == nil && fi.IsDir() {
			dirs = append(dirs, r)
		} else if err == nil {
			files = append(files, r)
		}
	}
	return dirs, files
}

// watchPolicyOf turns the containment's paths into the watcher's, resolved
// (the kernel reports, and Landlock checks, resolved paths).
func watchPolicyOf(c *Containment) watchPolicy {
	p := watchPolicy{noNet: c.NoNet, inodes: map[devIno]bool{}}
	if c.NoNet && c.ProxyUnix != "" {
		if a, err := netip.ParseAddrPort(c.Proxy); err == nil {
			p.proxy, p.proxyUnix = netip.AddrPortFrom(a.Addr().Unmap(), a.Port()), c.ProxyUnix
		}
	}
	real := func(path string) (string, os.FileInfo, bool) {
		r, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", nil, false
		}
		fi, err := os.Stat(r)
		return r, fi, err == nil
	}
	p.dirs, p.files = resolveWritable(c.Writable)
	for _, d := range c.DenyRead {
		if r, _, ok := real(d); ok {
			p.deny = append(p.deny, r)
		}
	}
	for _, ro := range c.ReadOnly {
		// It need not exist yet (a hooks directory to come): its parent
		// is resolved.
		if r, err := filepath.EvalSymlinks(filepath.Dir(ro)); err == nil {
			p.readOnly = append(p.readOnly, filepath.Join(r, filepath.Base(ro)))
		}
		if r, _, ok := real(ro); ok { // a hooks directory that is a symlink
			p.readOnly = append(p.readOnly, r)
		}
	}
	for _, h := range c.HardLinks {
		var st unix.Stat_t
		if unix.Lstat(h, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			p.inodes[devIno{uint64(st.Dev), st.Ino}] = true
		}
	}
	return p
}

// startContained starts the script (startScript) from a thread of its own,
// to which the containment is applied first, layer by layer in this order
// (the one place that lists them):
//
//  1. no_new_privs (Landlock and seccomp need it);
//  2. Landlock (restrictThread, landlock_linux.go), then the read-only
//     mounts' result made in the supervisor's mount namespace
//     (mounts_linux.go, readonly_linux.go);
//  3. resource limits (capLimits);
//  4. the capability drop, the seccomp filters and the watcher that serves
//     their notifications (sandboxThread, seccomp_linux.go, notify_*.go);
//  5. the script (startScript); the cgroup that holds its tree is the
//     gate's (cgroup_linux.go).
//
// Landlock restricts a thread Landlock restricts a thread
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
		// First, before Landlock and seccomp: into the limits' cgroups.
		sp.limitsWhy = joinLimits(limitFD, sp.Limits)
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

// required returns the error of a missing layer under Containment.Required.
func required(c *Containment, why string) error {
	if c.Required {
		return errors.New("proc: containment: " + why)
	}
	return nil
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
