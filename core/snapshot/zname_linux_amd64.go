package snapshot

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The *at calls of a walk's hot path, taking a zname as it is (see zname):
// unix.Fstatat and friends would copy each name to add its NUL. The system
// call numbers and Stat_t are those x/sys uses on linux/amd64. They go
// through syscall.Syscall6, which the compiler keeps each pointer argument
// alive for (go:uintptrkeepalive) until the call returns.

func fstatatZ(dirfd int, name zname, st *unix.Stat_t, flags int) error {
	_, _, e := syscall.Syscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(name.ptr())), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	return errnoErr(e)
}

func openatZ(dirfd int, name zname, flags int) (int, error) {
	fd, _, e := syscall.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(name.ptr())), uintptr(flags), 0, 0, 0)
	return int(fd), errnoErr(e)
}

func readlinkatZ(dirfd int, name zname, buf []byte) (int, error) {
	n, _, e := syscall.Syscall6(unix.SYS_READLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(name.ptr())), uintptr(unsafe.Pointer(unsafe.SliceData(buf))), uintptr(len(buf)), 0, 0)
	return int(n), errnoErr(e)
}

// errnoErr turns a raw errno into an error: nil for 0, else the Errno,
// which compares equal to unix.EINTR and friends and matches fs.ErrNotExist
// and fs.ErrPermission with errors.Is, as the errors of unix's calls do.
func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}
