//go:build unix && !(linux && amd64)

package snapshot

import "golang.org/x/sys/unix"

// Elsewhere the names go through x/sys as strings (see zname_linux_amd64.go).

func fstatatZ(dirfd int, name zname, st *unix.Stat_t, flags int) error {
	return unix.Fstatat(dirfd, name.s, st, flags)
}

func openatZ(dirfd int, name zname, flags int) (int, error) {
	return unix.Openat(dirfd, name.s, flags, 0)
}

func readlinkatZ(dirfd int, name zname, buf []byte) (int, error) {
	return unix.Readlinkat(dirfd, name.s, buf)
}
