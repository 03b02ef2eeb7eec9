//go:build unix && !linux

package stage

import (
	"os"

	"golang.org/x/sys/unix"
)

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY

// openBeneath: no openat2 here; the caller walks one component at a time.
func openBeneath(dirfd int, rel string, flags int) (int, error) { return -1, unix.ENOSYS }

func chmodFd(fd int, mode uint32) error { return unix.Fchmod(fd, mode) }

func createTemp(pfd int) (*os.File, string, error) { return createRandom(pfd) }

func linkTemp(pfd int, f *os.File) (string, error) { return "", unix.ENOTSUP }

func copyRange(dst, src *os.File, off, n int64) (int64, bool) { return 0, false }

func chownFd(fd, uid, gid int) error { return unix.Fchown(fd, uid, gid) }

func mknodAtFd(pfd int, name string, mode uint32, rdev uint64) error { return unix.ENOTSUP }
