//go:build unix

package snapshot

import (
	"encoding/hex"
	"io/fs"

	"golang.org/x/sys/unix"
)

// dirHandle is an open directory; entries are reached relative to its
// descriptor, so a directory renamed mid-walk cannot redirect the walk. It is
// a bare descriptor, not an *os.File: that would cost a few system calls more
// per directory (poller registration, flags) for nothing.
type dirHandle struct {
	fd int
}

func openDir(abs string) (dirHandle, error) {
	for {
		fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return dirHandle{}, &fs.PathError{Op: "open", Path: abs, Err: err}
		}
		return dirHandle{fd: fd}, nil
	}
}

func (d dirHandle) close() { unix.Close(d.fd) }

func (d dirHandle) lstat(name string, e *Entry) error {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
		break
	}
	fill(e, &st)
	return nil
}

func (d dirHandle) readlink(name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(d.fd, name, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// hashFile opens name without following symlinks or blocking (a FIFO swapped
// in cannot hang the walk), fstats it into e and, if it is a regular file of
// at most maxSize bytes (any size when maxSize < 0), hashes its content.
func (d dirHandle) hashFile(name string, e *Entry, sc *scratch, maxSize, keepMax int64, keep func(*Entry, []byte)) (int64, error) {
	fd, err := openat(d.fd, name)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENXIO || err == unix.EWOULDBLOCK {
			return 0, errNotRegular
		}
		return 0, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || (e.Ino != 0 && uint64(st.Ino) != e.Ino) {
		return 0, errNotRegular
	}
	fill(e, &st)
	if maxSize >= 0 && e.Size > maxSize {
		return 0, errTooBig
	}
	return readHash(fd, name, e, sc, keepMax, keep)
}

// readHash reads exactly the size fstat reported (a file that grows while it
// is read is recorded as that prefix; the next snapshot sees the rest).
func readHash(fd int, name string, e *Entry, sc *scratch, keepMax int64, keep func(*Entry, []byte)) (int64, error) {
	sc.h.Reset()
	var total int64
	reads := 0
	for total < e.Size {
		n, err := unix.Read(fd, sc.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			e.Size = total
			e.Err = "shrank during the walk"
			break
		}
		reads++
		sc.h.Write(sc.buf[:n])
		total += int64(n)
	}
	e.SHA256 = hex.EncodeToString(sc.h.Sum(sc.sum[:0]))
	if keep != nil && reads <= 1 && total <= keepMax {
		keep(e, sc.buf[:total])
	}
	return total, nil
}

func openat(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func fill(e *Entry, st *unix.Stat_t) {
	m := uint32(st.Mode)
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		e.Type = File
		e.Size = st.Size
	case unix.S_IFDIR:
		e.Type = Dir
	case unix.S_IFLNK:
		e.Type = Symlink
		e.Size = st.Size
	case unix.S_IFIFO:
		e.Type = FIFO
	case unix.S_IFSOCK:
		e.Type = Socket
	case unix.S_IFBLK:
		e.Type = Block
		e.Rdev = uint64(st.Rdev)
	case unix.S_IFCHR:
		e.Type = Char
		e.Rdev = uint64(st.Rdev)
	default:
		e.Type = Unknown
	}
	e.Perm = m & 0o7777
	e.UID, e.GID = int64(st.Uid), int64(st.Gid)
	e.MTime = timespecNanos(statMtime(st))
	e.CTime = timespecNanos(statCtime(st))
	e.Dev, e.Ino = uint64(st.Dev), uint64(st.Ino)
}

func timespecNanos(ts unix.Timespec) int64 { return int64(ts.Sec)*1e9 + int64(ts.Nsec) }

// readFile reads a regular file of at most max bytes.
func (d dirHandle) readFile(name string, max int64) ([]byte, error) {
	fd, err := openat(d.fd, name)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errNotRegular
	}
	if st.Size > max {
		return nil, errLarge
	}
	buf := make([]byte, st.Size)
	for off := 0; off < len(buf); {
		n, err := unix.Read(fd, buf[off:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf[:off], nil
		}
		off += n
	}
	return buf, nil
}
