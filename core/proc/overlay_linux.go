package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// namespaceAttr adds the namespaces an overlay (or the read-only mounts of
// a contained run, readOnlyMounts) needs to the supervisor's start
// attributes: a mount namespace, and for a normal user a user namespace in
// which their uid and gid map to themselves. ipc adds an IPC namespace (a
// contained script reaches no System V shared memory, semaphore or message
// queue of the host, nor its POSIX message queues).
func namespaceAttr(attr *syscall.SysProcAttr, ipc bool) {
	attr.Cloneflags |= syscall.CLONE_NEWNS
	if ipc {
		attr.Cloneflags |= syscall.CLONE_NEWIPC
	}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// Exec drops a non-root process's capabilities, even in its own
		// user namespace: the supervisor keeps them as ambient
		// capabilities (overlayfs acts with the mounter's credentials:
		// CAP_SYS_ADMIN alone is not enough) and mountOverlay (or, for a
		// contained script, dropPrivileges) drops them on the thread that
		// starts the script.
		attr.AmbientCaps = allCaps()
	}
}

// mountOverlay runs in the supervisor, in its own mount namespace: it
// makes the mount tree private (nothing propagates back to the host) and
// mounts the overlay at o.Lower (with userxattr when o.UserXattr), or for
// a copy stage (o.Copy) binds o.Upper there.
func mountOverlay(o *Overlay) error {
	for _, p := range []string{o.Lower, o.Upper, o.Work} {
		if !o.Copy && strings.ContainsAny(p, ",:\\") {
			return fmt.Errorf("proc: overlay: path %q holds a character overlayfs options cannot carry (, : or \\)", p)
		}
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("proc: overlay: make the mount tree private: %v", err)
	}
	if o.Copy {
		if err := unix.Mount(o.Upper, o.Lower, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("proc: overlay: bind the stage's copy at %s: %v", o.Lower, err)
		}
		return dropAmbient()
	}
	// volatile: no sync of the upper filesystem when the namespace dies
	// (measured: it was most of the overlay's cost per run on a busy
	// disk). The stage is read from the page cache right after; a crash
	// can lose it, and Apply checks every file's hash against the review.
	opts := "lowerdir=" + o.Lower + ",upperdir=" + o.Upper + ",workdir=" + o.Work + ",volatile"
	if o.UserXattr {
		opts += ",userxattr"
	}
	if err := unix.Mount("overlay", o.Lower, "overlay", 0, opts); err != nil {
		return fmt.Errorf("proc: overlay: mount at %s: %v", o.Lower, err)
	}
	return dropAmbient()
}

// dropAmbient clears the ambient capabilities namespaceAttr asked for: they
// must not reach the script, and this is the thread that forks it
// (supervise locks it).
func dropAmbient() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("proc: overlay: drop ambient capabilities: %v", err)
	}
	return nil
}

// inOverlayUserNS reports whether this process is in a user namespace like
// the one namespaceAttr makes: exactly the process's own uid and gid mapped to
// themselves.
func inOverlayUserNS() bool {
	one := func(file string, id int) bool {
		b, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		f := strings.Fields(string(b))
		want := strconv.Itoa(id)
		return len(f) == 3 && f[0] == want && f[1] == want && f[2] == "1"
	}
	return one("/proc/self/uid_map", os.Getuid()) && one("/proc/self/gid_map", os.Getgid())
}

// allCaps lists every capability this kernel knows.
func allCaps() []uintptr {
	last := uintptr(unix.CAP_LAST_CAP)
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 0 && n < 64 {
			last = uintptr(n)
		}
	}
	caps := make([]uintptr, 0, last+1)
	for c := uintptr(0); c <= last; c++ {
		caps = append(caps, c)
	}
	return caps
}
