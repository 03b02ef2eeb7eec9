//go:build unix

package history

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// freeBytes returns the space available to this user on the file system
// holding dir; ok is false when it cannot be told.
func freeBytes(dir string) (free uint64, ok bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}

// linkCount returns the number of hard links of a file (1 when unknown).
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
