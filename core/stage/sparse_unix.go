//go:build unix

package stage

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/core/snapshot"
)

// extents calls fn for each run of f's first size bytes, in order: data
// (which must be copied) or a hole (which reads as zeros and takes no
// block), found with SEEK_DATA and SEEK_HOLE. A filesystem without them
// gives one data run.
func extents(f *os.File, size int64, fn func(off, n int64, data bool) error) error {
	fd := int(f.Fd())
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err == unix.ENXIO {
			data = size // only a hole is left
		} else if err != nil {
			return fn(off, size-off, true) // no SEEK_DATA: all data
		}
		data = min(data, size)
		if data > off {
			if err := fn(off, data-off, false); err != nil {
				return err
			}
		}
		if data >= size {
			return nil
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			hole = size
		}
		hole = min(hole, size)
		if err := fn(data, hole-data, true); err != nil {
			return err
		}
		off = hole
	}
	return nil
}

// sameFile says whether f is the file e recorded, unchanged: the same
// inode, size, modification and change times.
func sameFile(f *os.File, e *snapshot.Entry) bool {
	var st unix.Stat_t
	return unix.Fstat(int(f.Fd()), &st) == nil && uint64(st.Ino) == e.Ino && st.Size == e.Size &&
		unix.TimespecToNsec(st.Mtim) == e.MTime && unix.TimespecToNsec(st.Ctim) == e.CTime
}
