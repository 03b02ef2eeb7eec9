package stage

import (
	"os"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// dirFlags open a directory to work in (O_PATH: no read permission needed).
const dirFlags = unix.O_PATH | unix.O_DIRECTORY

// noOpenat2 is set once openat2 was found missing (or refused by a
// container's seccomp profile): the walk one component at a time is used.
var noOpenat2 atomic.Bool

// openBeneath opens rel below dirfd with openat2: RESOLVE_BENEATH (no ".."
// or absolute path out), RESOLVE_NO_SYMLINKS (no symlink anywhere on the
// way). ENOSYS on kernels before 5.6 (and where a seccomp profile refuses
// it).
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	if noOpenat2.Load() {
		return -1, unix.ENOSYS
	}
	for {
		fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{Flags: uint64(flags),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		switch err {
		case unix.EAGAIN, unix.EINTR:
			continue // a rename raced the lookup
		case unix.ENOSYS, unix.EPERM:
			noOpenat2.Store(true)
			return -1, unix.ENOSYS
		}
		return fd, err
	}
}

// chmodFd sets the mode of the inode fd names; fd may be an O_PATH
// descriptor (chmod through /proc/self/fd, which names that inode).
func chmodFd(fd int, mode uint32) error {
	err := unix.Fchmod(fd, mode)
	if err == unix.EBADF {
		err = unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), mode, 0)
	}
	return err
}

// createTemp makes an unnamed file in pfd (O_TMPFILE; tmp is ""), or one
// with a random name where the filesystem cannot.
func createTemp(pfd int) (*os.File, string, error) {
	fd, err := unix.Openat(pfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), "tmpfile"), "", nil
	}
	return createRandom(pfd)
}

// linkTemp gives an O_TMPFILE file a random name in pfd.
func linkTemp(pfd int, f *os.File) (string, error) {
	proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	for range 100 {
		tmp := tempName()
		err := unix.Linkat(unix.AT_FDCWD, proc, pfd, tmp, unix.AT_SYMLINK_FOLLOW)
		if err == unix.EEXIST {
			continue
		}
		return tmp, err
	}
	return "", unix.EEXIST
}

// copyRange copies n bytes at off from src to dst in the kernel
// (copy_file_range); false when it cannot here (then nothing was copied,
// or the caller copies the rest itself from the offset it is at).
func copyRange(dst, src *os.File, off, n int64) (int64, bool) {
	done := int64(0)
	for done < n {
		in, out := off+done, off+done
		k, err := unix.CopyFileRange(int(src.Fd()), &in, int(dst.Fd()), &out, int(n-done), 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || k == 0 {
			return done, false
		}
		done += int64(k)
	}
	return done, true
}

// chownFd sets the owner of the inode fd names; fd may be an O_PATH
// descriptor (AT_EMPTY_PATH).
func chownFd(fd, uid, gid int) error {
	return unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
}

// mknodAtFd makes node name in pfd.
func mknodAtFd(pfd int, name string, mode uint32, rdev uint64) error {
	return unix.Mknodat(pfd, name, mode, int(rdev))
}
