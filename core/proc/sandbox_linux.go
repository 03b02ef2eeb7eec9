package proc

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

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
	var why []string
	miss := func(w string) error {
		why = append(why, w)
		if c.Required {
			return errors.New("proc: containment: " + w)
		}
		return nil
	}
	defer func() { enf.Why = strings.TrimPrefix(strings.Join(append([]string{enf.Why}, why...), "; "), "; ") }()
	if err := dropPrivileges(enf); err != nil {
		if e := miss(err.Error()); e != nil {
			return e
		}
	}
	a := seccompArch()
	if a == nil {
		enf.ObserveWhy = "seccomp: no system call table for this platform"
		if c.NoNet {
			return miss("seccomp: no system call table for this platform")
		}
		return nil
	}
	switch {
	case c.NoNotify:
		enf.ObserveWhy = "seccomp user notification turned off for a test"
	default:
		flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
		fd, err := loadPolicy(notifyPolicy(a, c.NoNet), a, foreignAction(true, true), flags)
		if err == unix.EINVAL {
			// Before Linux 5.19: no killable wait (a signal then restarts
			// the call, which is notified again).
			fd, err = loadPolicy(notifyPolicy(a, c.NoNet), a, foreignAction(true, true), unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
		}
		if err != nil {
			enf.ObserveWhy = "seccomp user notification: " + err.Error()
			break
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
	if !enf.Observed {
		// The metadata and read-only-path refusals are the watcher's.
		if e := miss("metadata: " + enf.ObserveWhy); e != nil {
			return e
		}
	}
	// After the notification filter: this one refuses the script a
	// listener of its own. This and the socket filter leave a call of a
	// foreign ABI to the notification filter when it is loaded (an errno
	// of theirs would beat it and nothing would be recorded), and refuse
	// it themselves otherwise (foreignAction).
	if _, err := loadPolicy(adminPolicy(a), a, foreignAction(false, enf.Observed), 0); err != nil {
		if e := miss("seccomp: admin filter: " + err.Error()); e != nil {
			return e
		}
	} else {
		enf.Admin = true
	}
	// With the network off, AF_INET/AF_INET6 may reach the kernel only
	// as far as the watcher (which answers them with stand-ins, or refuses
	// and records them).
	if _, err := loadPolicy(socketPolicy(a, !c.NoNet || enf.Observed, c.NoNet && !enf.Observed), a, foreignAction(false, enf.Observed), 0); err != nil {
		if e := miss("seccomp: " + err.Error()); e != nil {
			return e
		}
	} else {
		enf.Seccomp = true
		// AF_UNIX sockets outside the writable directories: the watcher
		// carries out every connect; without it, with the network off, no
		// connect at all.
		enf.Sockets = enf.Observed || c.NoNet
	}
	if !enf.Sockets {
		if e := miss("sockets: " + enf.ObserveWhy); e != nil {
			return e
		}
	}
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
