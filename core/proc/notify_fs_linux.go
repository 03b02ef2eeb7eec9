package proc

import (
	"path/filepath"

	"github.com/diffgate/diffgate/internal/fspath"

	"golang.org/x/sys/unix"
)

// The file system handlers. Landlock decides reads and writes by path:
// for those the handlers only record what it will refuse and let the
// kernel decide (cont). What Landlock cannot express they refuse
// themselves: writes inside the writable directories to a read-only path
// or through a hard link to a file outside, and metadata changes (mode,
// owner, times, extended attributes: Landlock does not restrict them)
// outside the writable directories.

// Block kinds (report.Blocked.Kind).
const (
	kindRead     = "read"
	kindWrite    = "write"
	kindCreate   = "create"
	kindDelete   = "delete"
	kindRename   = "rename"
	kindMetadata = "metadata"
	kindNet      = "net"
	kindDNS      = "dns" // a name lookup sent to port 53 (notify_net_linux.go)
	kindLink     = "link"
	kindABI      = "syscall-abi" // a system call of a foreign ABI (seccomp_linux.go)
)

const oTmpfile = 0o20000000 // __O_TMPFILE, without O_DIRECTORY

func arg32(a uint64) int32 { return int32(uint32(a)) }

// denied reports whether p may not be read: it lies in a denied path,
// and in no writable directory deeper than that path (the workspace
// inside a denied parent stays readable; a denied path inside the
// workspace does not).
func (w *watcher) denied(p string) bool {
	return deepest(p, w.pol.deny) > deepest(p, w.pol.dirs)
}

// deepest is the length of the longest of roots that holds p (-1: none).
func deepest(p string, roots []string) int {
	n := -1
	for _, r := range roots {
		if len(r) > n && fspath.Within(p, r) {
			n = len(r)
		}
	}
	return n
}

// inDirs reports whether p is inside a writable directory (or is one).
func (w *watcher) inDirs(p string) bool { return within(p, w.pol.dirs) }

// readOnly reports whether p lies in a read-only path of the workspace.
func (w *watcher) readOnly(t target) bool {
	return within(t.path, w.pol.readOnly) || (t.exists && w.pol.inodes[t.id])
}

// onOpen handles open, openat, openat2 and creat.
func (w *watcher) onOpen(n *seccompNotif, op string) {
	a := &n.Data.Args
	tid := int(n.PID)
	dirfd, pathArg := int32(unix.AT_FDCWD), a[0]
	var flags uint64
	switch op {
	case "open":
		flags = a[1]
	case "creat":
		flags = unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC
	case "openat":
		dirfd, pathArg, flags = arg32(a[0]), a[1], a[2]
	case "openat2":
		dirfd, pathArg = arg32(a[0]), a[1]
		b, e := readMem(tid, a[2], 8)
		if e != 0 {
			w.refuse(n, e, kindWrite, op)
			return
		}
		flags = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
	}
	flags = uint64(uint32(flags))
	if flags&unix.O_PATH != 0 {
		w.cont(n.ID) // no access: Landlock does not check it either
		return
	}
	write := flags&unix.O_ACCMODE != unix.O_RDONLY || flags&(unix.O_TRUNC|unix.O_CREAT|oTmpfile) != 0
	path, e := readString(tid, pathArg)
	follow := flags&unix.O_NOFOLLOW == 0 && flags&(unix.O_CREAT|unix.O_EXCL) != unix.O_CREAT|unix.O_EXCL
	switch {
	case e != 0 && write:
		// It may be a read-only path of the workspace: unseen, refused.
		w.refuse(n, e, kindWrite, op)
		return
	case e != 0:
		w.cont(n.ID) // a read: Landlock decides
		return
	case !write:
		w.onRead(n, op, dirfd, path, follow)
		return
	case !w.valid(n.ID):
		w.cont(n.ID)
		return
	}
	t := resolve(tid, dirfd, path, follow, false)
	switch {
	case !t.ok:
		if !w.refusedWay(n, kindWrite, t, op) {
			w.fail(n.ID, t.err) // it cannot be resolved: neither could the kernel
		}
		return
	case !t.exists || flags&oTmpfile != 0:
		if !w.inDirs(t.path) {
			if w.outside(n, kindCreate, t, op) {
				return
			}
		} else if w.readOnly(t) {
			w.deny(n, kindCreate, t.path, op, unix.EACCES)
			return
		}
	default:
		if w.refuseWrite(n, t, op) {
			return
		}
	}
	w.cont(n.ID)
}

// onRead handles an open that only reads (most of what the watcher
// sees): Landlock, or the mounts, decide; the watcher records a read of a
// secret store. So it asks the kernel only what that needs: the target's
// path, not its identity (resolveName), and whether the caller is still
// the one that asked (valid) only before it records, after everything was
// read (a caller that died meanwhile, its pid reused, is answered
// nothing: the answer to a notification no longer pending fails).
func (w *watcher) onRead(n *seccompNotif, op string, dirfd int32, path string, follow bool) {
	t := resolveName(int(n.PID), dirfd, path, follow)
	if t.ok && w.denied(t.path) && w.valid(n.ID) && w.outside(n, kindRead, t, op) {
		return
	}
	w.cont(n.ID)
}

// refusedWay records, and refuses with the kernel's error, a call whose
// target outside the writable directories the supervisor could not even
// reach (target.denied: through /proc/PID/root or /proc/PID/cwd of a
// process out of the script's reach, whose magic links Landlock and the
// user namespace refuse to follow); it reports whether it answered. A way
// refused inside the writable directories (a directory the user may not
// search) is the file system's own refusal, not containment's.
func (w *watcher) refusedWay(n *seccompNotif, kind string, t target, op string) bool {
	if !t.denied || w.inDirs(t.path) {
		return false
	}
	w.deny(n, kind, t.path, op, t.err)
	return true
}

// deny records a blocked action of the caller and refuses the call with e.
func (w *watcher) deny(n *seccompNotif, kind, path, op string, e unix.Errno) {
	w.rec.add(int(n.PID), kind, path, op)
	w.fail(n.ID, e)
}

// outside records an action the layers refuse outside the writable
// directories (or a read of a secret store), and reports whether the
// watcher answered the call itself. The kernel refuses the action where
// Landlock's rules hold (reads: with the secret stores hidden), or, for a
// change to a regular file, a directory or a symlink outside, where the
// read-only mounts do: the call goes on to be refused there. Without
// either the watcher refuses it (best effort: it reads the path before the
// kernel does, see the top of notify_linux.go).
func (w *watcher) outside(n *seccompNotif, kind string, t target, op string) bool {
	mounted := kind != kindRead && w.pol.mounts && (!t.exists || t.mode == unix.S_IFREG || t.mode == unix.S_IFDIR || t.mode == unix.S_IFLNK)
	if kind == kindRead && w.pol.landlockReads || kind != kindRead && w.pol.landlockWrites || mounted {
		w.rec.add(int(n.PID), kind, t.path, op)
		return false
	}
	w.deny(n, kind, t.path, op, unix.EACCES)
	return true
}

// refuseWrite records a write to an existing file outside the writable
// directories (see outside) and refuses, itself, one to a read-only path
// or hard link of the workspace (true: answered).
func (w *watcher) refuseWrite(n *seccompNotif, t target, op string) bool {
	switch {
	case !w.inDirs(t.path) && !within(t.path, w.pol.files):
		return w.outside(n, kindWrite, t, op)
	case w.readOnly(t):
		w.deny(n, kindWrite, t.path, op, unix.EACCES)
		return true
	}
	return false
}

// onCreate handles mkdir, mknod, symlink and link (and their *at forms):
// the new name must be inside a writable directory.
func (w *watcher) onCreate(n *seccompNotif, op string) {
	a := &n.Data.Args
	dirfd, pathArg := int32(unix.AT_FDCWD), a[0]
	switch op {
	case "mkdirat", "mknodat":
		dirfd, pathArg = arg32(a[0]), a[1]
	case "symlink":
		pathArg = a[1]
	case "symlinkat":
		dirfd, pathArg = arg32(a[1]), a[2]
	case "link":
		w.checkLink(n, op, unix.AT_FDCWD, a[0], unix.AT_FDCWD, a[1], 0)
		return
	case "linkat":
		w.checkLink(n, op, arg32(a[0]), a[1], arg32(a[2]), a[3], int(a[4]))
		return
	}
	w.checkName(n, op, kindCreate, dirfd, pathArg)
}

// checkLink handles link and linkat: the new name is checked as any new
// name (checkName); a hard link from outside the writable directories into
// one is recorded ("link SRC -> DST"). Landlock refuses it (EXDEV: the
// file would gain the directory's rights), as do the read-only mounts (the
// writable directories are mounts of their own); without either the
// watcher refuses it with EXDEV itself.
func (w *watcher) checkLink(n *seccompNotif, op string, odir int32, oarg uint64, ndir int32, narg uint64, flags int) {
	tid := int(n.PID)
	from, to, ok := w.readTwoNames(n, oarg, narg, kindLink, op)
	if !ok {
		return
	}
	src := resolve(tid, odir, from, flags&unix.AT_SYMLINK_FOLLOW != 0, flags&unix.AT_EMPTY_PATH != 0)
	dst := resolve(tid, ndir, to, false, false)
	switch {
	case !dst.ok || dst.exists || !w.inDirs(filepath.Dir(dst.path)) || within(dst.path, w.pol.readOnly) || holds(dst.path, w.pol.readOnly):
		w.checkName(n, op, kindCreate, ndir, narg)
		return
	case !src.ok:
		if !w.refusedWay(n, kindLink, src, op) {
			w.fail(n.ID, src.err)
		}
		return
	case src.exists && !w.inDirs(src.path):
		w.rec.add(tid, kindLink, src.path+" -> "+dst.path, op)
		if !w.pol.landlockWrites && !w.pol.mounts {
			w.fail(n.ID, unix.EXDEV)
			return
		}
	}
	w.cont(n.ID)
}

// checkName records (and, inside the workspace, refuses) a call that
// makes or removes the name at pathArg.
func (w *watcher) checkName(n *seccompNotif, op, kind string, dirfd int32, pathArg uint64) {
	tid := int(n.PID)
	path, e := readString(tid, pathArg)
	if e != 0 {
		w.refuse(n, e, kind, op)
		return
	}
	if !w.valid(n.ID) {
		return
	}
	t := resolve(tid, dirfd, path, false, false)
	switch {
	case !t.ok:
		if !w.refusedWay(n, kind, t, op) {
			w.fail(n.ID, t.err)
		}
		return
	case kind == kindCreate && t.exists || kind == kindDelete && !t.exists:
		// It fails on its own (EEXIST, ENOENT).
	case !w.inDirs(filepath.Dir(t.path)):
		if w.outside(n, kind, t, op) {
			return
		}
	case within(t.path, w.pol.readOnly) || kind == kindCreate && holds(t.path, w.pol.readOnly):
		// (A directory that holds one is not empty, or is a mount point:
		// the kernel refuses its removal. git gc's rmdir of
		// .git/worktrees is no blocked action.)
		w.deny(n, kind, t.path, op, unix.EACCES)
		return
	}
	w.cont(n.ID)
}

// onRemove handles unlink, rmdir, rename and truncate (and their *at forms).
func (w *watcher) onRemove(n *seccompNotif, op string) {
	a := &n.Data.Args
	switch op {
	case "unlink", "rmdir":
		w.checkName(n, op, kindDelete, unix.AT_FDCWD, a[0])
	case "unlinkat":
		w.checkName(n, op, kindDelete, arg32(a[0]), a[1])
	case "truncate":
		w.checkFile(n, op, kindWrite, unix.AT_FDCWD, a[0], true, false, false)
	case "rename":
		w.checkRename(n, op, unix.AT_FDCWD, a[0], unix.AT_FDCWD, a[1])
	default: // renameat, renameat2
		w.checkRename(n, op, arg32(a[0]), a[1], arg32(a[2]), a[3])
	}
}

// readTwoNames reads the two path arguments of a link or rename (at
// oarg, narg); a name that cannot be read refuses the call (recorded as
// kind), and a notification no longer valid is left: false either way.
func (w *watcher) readTwoNames(n *seccompNotif, oarg, narg uint64, kind, op string) (from, to string, ok bool) {
	tid := int(n.PID)
	from, e := readString(tid, oarg)
	to, e2 := readString(tid, narg)
	if e == 0 {
		e = e2
	}
	if e != 0 {
		w.refuse(n, e, kind, op)
		return "", "", false
	}
	return from, to, w.valid(n.ID)
}

// checkRename records a rename out of, or into, a place outside the
// writable directories, and refuses one that moves a read-only path of
// the workspace (or a directory holding one) or replaces one.
func (w *watcher) checkRename(n *seccompNotif, op string, odir int32, oarg uint64, ndir int32, narg uint64) {
	tid := int(n.PID)
	from, to, ok := w.readTwoNames(n, oarg, narg, kindRename, op)
	if !ok {
		return
	}
	src := resolve(tid, odir, from, false, false)
	dst := resolve(tid, ndir, to, false, false)
	switch {
	case !src.ok:
		if !w.refusedWay(n, kindRename, src, op) {
			w.fail(n.ID, src.err)
		}
		return
	case !dst.ok:
		if !w.refusedWay(n, kindRename, dst, op) {
			w.fail(n.ID, dst.err)
		}
		return
	case !src.exists:
		w.fail(n.ID, unix.ENOENT)
		return
	}
	what := src.path + " -> " + dst.path
	switch {
	case !w.inDirs(filepath.Dir(src.path)) || !w.inDirs(filepath.Dir(dst.path)):
		if w.outside(n, kindRename, target{path: what, exists: true, mode: src.mode}, op) {
			return
		}
	case holds(src.path, w.pol.readOnly) || holds(dst.path, w.pol.readOnly) ||
		within(src.path, w.pol.readOnly) || within(dst.path, w.pol.readOnly):
		w.deny(n, kindRename, what, op, unix.EACCES)
		return
	}
	w.cont(n.ID)
}

// checkFile handles a call on an existing file named by a path (or, with
// emptyPath, by dirfd itself): a write (truncate) or a metadata change.
func (w *watcher) checkFile(n *seccompNotif, op, kind string, dirfd int32, pathArg uint64, follow, emptyPath, byFD bool) {
	tid := int(n.PID)
	var t target
	if byFD {
		if !w.valid(n.ID) {
			return
		}
		t = fdTarget(tid, int(dirfd))
	} else {
		path := ""
		if pathArg != 0 {
			var e unix.Errno
			if path, e = readString(tid, pathArg); e != 0 {
				w.refuse(n, e, kind, op)
				return
			}
		}
		if !w.valid(n.ID) {
			return
		}
		t = resolve(tid, dirfd, path, follow, emptyPath || pathArg == 0)
	}
	if !t.ok {
		if byFD && t.err == 0 {
			// A descriptor without a path (a pipe, a socket): nothing of
			// the file system's.
			w.cont(n.ID)
			return
		}
		if !w.refusedWay(n, kind, t, op) {
			w.fail(n.ID, t.err)
		}
		return
	}
	if kind == kindWrite {
		if !w.refuseWrite(n, t, op) {
			w.cont(n.ID)
		}
		return
	}
	// A metadata change: Landlock does not restrict it, the watcher does.
	if !w.inDirs(t.path) || w.readOnly(t) {
		w.deny(n, kind, t.path, op, unix.EPERM)
		return
	}
	w.cont(n.ID)
}

// onMeta handles chmod, chown, utime(s) and the xattr calls.
func (w *watcher) onMeta(n *seccompNotif, op string) {
	a := &n.Data.Args
	const atEmpty, atNoFollow = unix.AT_EMPTY_PATH, unix.AT_SYMLINK_NOFOLLOW
	switch op {
	case "chmod", "chown", "utime", "utimes", "setxattr", "removexattr":
		w.checkFile(n, op, kindMetadata, unix.AT_FDCWD, a[0], true, false, false)
	case "lchown", "lsetxattr", "lremovexattr":
		w.checkFile(n, op, kindMetadata, unix.AT_FDCWD, a[0], false, false, false)
	case "fchmod", "fchown", "fsetxattr", "fremovexattr":
		w.checkFile(n, op, kindMetadata, arg32(a[0]), 0, true, false, true)
	case "fchmodat", "futimesat":
		w.checkFile(n, op, kindMetadata, arg32(a[0]), a[1], true, false, false)
	case "fchmodat2":
		w.checkFile(n, op, kindMetadata, arg32(a[0]), a[1], a[3]&atNoFollow == 0, a[3]&atEmpty != 0, false)
	case "fchownat":
		w.checkFile(n, op, kindMetadata, arg32(a[0]), a[1], a[4]&atNoFollow == 0, a[4]&atEmpty != 0, false)
	case "utimensat":
		if a[1] == 0 { // futimens: the file behind dirfd
			w.checkFile(n, op, kindMetadata, arg32(a[0]), 0, true, false, true)
			return
		}
		w.checkFile(n, op, kindMetadata, arg32(a[0]), a[1], a[3]&atNoFollow == 0, a[3]&atEmpty != 0, false)
	case "setxattrat", "removexattrat":
		w.checkFile(n, op, kindMetadata, arg32(a[0]), a[1], a[2]&atNoFollow == 0, a[2]&atEmpty != 0, false)
	default:
		w.cont(n.ID)
	}
}
