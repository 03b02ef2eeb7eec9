//go:build unix

package snapshot

import (
	"io/fs"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// dirHandle is an open directory; entries are reached relative to its
// descriptor, so a directory renamed mid-walk cannot redirect the walk. It is
// a bare descriptor, not an *os.File: that would cost a few system calls more
// per directory (poller registration, flags) for nothing.
type dirHandle struct {
	fd int
}

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// openRoot opens the directory at abs without following a symlink in its
// last component and records its own metadata in self: from fstat when it
// opens, from lstat when it does not (a symlink, a file, a locked directory).
func openRoot(abs string, self *Entry) (dirHandle, error) {
	fd, err := openNoAtime(unix.AT_FDCWD, toZname(abs), dirFlags)
	if err != nil {
		var st unix.Stat_t
		if lerr := unix.Lstat(abs, &st); lerr == nil {
			fill(self, &st)
			if self.Type == Symlink {
				buf := make([]byte, 4096)
				if n, rerr := unix.Readlink(abs, buf); rerr == nil {
					self.Target = string(buf[:n])
				}
			}
		}
		return dirHandle{}, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	d := dirHandle{fd: fd}
	if err := d.stat(self); err != nil {
		d.close()
		return dirHandle{}, err
	}
	return d, nil
}

// openSub opens the subdirectory name relative to d, never following a
// symlink: a directory swapped for a link mid-walk fails to open (ELOOP or
// ENOTDIR) instead of redirecting the walk, and no absolute path is ever
// built, so depth is not limited by PATH_MAX.
func (d dirHandle) openSub(name zname) (dirHandle, error) {
	fd, err := openNoAtime(d.fd, name, dirFlags)
	if err != nil {
		return dirHandle{}, &fs.PathError{Op: "open", Path: name.s, Err: err}
	}
	return dirHandle{fd: fd}, nil
}

// noAtimeRefused is set once an open with O_NOATIME was refused (EPERM:
// the caller neither owns the entry nor has CAP_FOWNER); from then on every
// open goes without it, so the refusal costs one extra open per process.
var noAtimeRefused atomic.Bool

// openNoAtime opens name relative to dirfd with flags and, where permitted,
// O_NOATIME: reading a file or listing a directory then writes no access
// time (nothing the walk records, but inode work on every open).
func openNoAtime(dirfd int, name zname, flags int) (int, error) {
	if oNoAtime != 0 && !noAtimeRefused.Load() {
		fd, err := retry(func() (int, error) { return openatZ(dirfd, name, flags|oNoAtime) })
		if err != unix.EPERM {
			return fd, err
		}
		noAtimeRefused.Store(true)
	}
	return retry(func() (int, error) { return openatZ(dirfd, name, flags) })
}

func retry(f func() (int, error)) (int, error) {
	for {
		fd, err := f()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func (d dirHandle) close() { unix.Close(d.fd) }

// stat records the open directory's own metadata in e.
func (d dirHandle) stat(e *Entry) error {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return &fs.PathError{Op: "fstat", Path: e.Path, Err: err}
	}
	fill(e, &st)
	return nil
}

// xattrs records the open directory's extended attributes in e.
func (d dirHandle) xattrs(e *Entry, sc *scratch) { readXattrs(d.fd, e, sc) }

func (d dirHandle) lstat(name zname, e *Entry) error {
	var st unix.Stat_t
	for {
		err := fstatatZ(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "lstat", Path: name.s, Err: err}
		}
		break
	}
	fill(e, &st)
	return nil
}

func (d dirHandle) readlink(name zname) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := readlinkatZ(d.fd, name, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: name.s, Err: err}
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// hashFile opens name without following symlinks or blocking (a FIFO swapped
// in cannot hang the walk), fstats it into e and, if it is a regular file of
// at most maxSize bytes (any size when maxSize < 0), hashes its content. A
// file that cannot be opened (no read permission) still gets its metadata,
// from lstat, so only its content is unknown.
func (d dirHandle) hashFile(name zname, e *Entry, sc *scratch, maxSize, keepMax int64, keep func(*Entry, []byte)) (int64, error) {
	fd, err := openat(d.fd, name)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENXIO || err == unix.EWOULDBLOCK {
			return 0, errNotRegular
		}
		if e.Ino == 0 {
			if lerr := d.lstat(name, e); lerr == nil && e.Type != File {
				return 0, errNotRegular
			}
		}
		return 0, &fs.PathError{Op: "open", Path: name.s, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, &fs.PathError{Op: "fstat", Path: name.s, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || (e.Ino != 0 && uint64(st.Ino) != e.Ino) {
		return 0, errNotRegular
	}
	fill(e, &st)
	if maxSize >= 0 && e.Size > maxSize {
		return 0, errTooBig
	}
	if sc.xattr {
		readXattrs(fd, e, sc)
	}
	// A file with fewer blocks than its size has holes (or is compressed,
	// or inline): hash its data and zero runs separately.
	if st.Size > int64(len(sc.buf)) && st.Blocks*512 < st.Size {
		return hashSparse(fd, name.s, e, sc)
	}
	return readHash(fd, name.s, e, sc, keepMax, keep)
}

// readHash reads exactly the size fstat reported (a file that grows while it
// is read is recorded as that prefix; the next snapshot sees the rest).
func readHash(fd int, name string, e *Entry, sc *scratch, keepMax int64, keep func(*Entry, []byte)) (int64, error) {
	sc.h.Reset()
	total, reads, err := sc.readInto(fd, name, e, e.Size)
	if err != nil {
		return total, err
	}
	if total < e.Size {
		e.Size = total
		e.Err = "shrank during the walk"
	}
	e.SHA256 = sc.digest()
	if keep != nil && reads <= 1 && total <= keepMax {
		keep(e, sc.buf[:total])
	}
	return total, nil
}

// readInto hashes up to n bytes read from fd's current offset; it stops
// early at end of file, and with errStopped when the walk is cancelled.
func (sc *scratch) readInto(fd int, name string, e *Entry, n int64) (total int64, reads int, err error) {
	for total < n {
		if sc.stop != nil && sc.stop.Load() {
			return total, reads, errStopped
		}
		b := sc.buf
		if rest := n - total; rest < int64(len(b)) {
			b = b[:rest]
		}
		k, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, reads, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if k == 0 {
			break
		}
		reads++
		sc.h.Write(b[:k])
		total += int64(k)
		sc.progress(int64(k))
	}
	return total, reads, nil
}

// sparseHashes counts the files hashed as sparse (tests check that a file
// without holes is never probed with SEEK_DATA/SEEK_HOLE).
var sparseHashes atomic.Int64

// hashSparse hashes a file with holes: data regions (SEEK_DATA/SEEK_HOLE)
// are read, holes are fed to the hash from a shared zero buffer without
// reading them. The digest is the SHA-256 of the full content, as readHash
// would compute it.
func hashSparse(fd int, name string, e *Entry, sc *scratch) (int64, error) {
	sparseHashes.Add(1)
	sc.h.Reset()
	var pos, read int64
	for pos < e.Size {
		data, err := unix.Seek(fd, pos, unix.SEEK_DATA)
		if err == unix.ENXIO { // no data after pos: the rest is a hole
			data = e.Size
		} else if err != nil {
			return read, &fs.PathError{Op: "lseek", Path: name, Err: err}
		}
		data = min(data, e.Size)
		if err := sc.zeros(data - pos); err != nil {
			return read, err
		}
		pos = data
		if pos >= e.Size {
			break
		}
		hole, err := unix.Seek(fd, pos, unix.SEEK_HOLE)
		if err != nil {
			return read, &fs.PathError{Op: "lseek", Path: name, Err: err}
		}
		hole = min(hole, e.Size)
		if _, err := unix.Seek(fd, pos, unix.SEEK_SET); err != nil {
			return read, &fs.PathError{Op: "lseek", Path: name, Err: err}
		}
		n, _, err := sc.readInto(fd, name, e, hole-pos)
		read += n
		if err != nil {
			return read, err
		}
		if n < hole-pos {
			e.Size = pos + n
			e.Err = "shrank during the walk"
			break
		}
		pos = hole
	}
	e.SHA256 = sc.digest()
	return read, nil
}

func openat(dirfd int, name zname) (int, error) {
	return openNoAtime(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY)
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
	e.Nlink = 0
	if e.Type == File && st.Nlink > 1 {
		e.Nlink = uint32(min(uint64(st.Nlink), 1<<32-1))
	}
	e.UID, e.GID = int64(st.Uid), int64(st.Gid)
	e.MTime = timespecNanos(statMtime(st))
	e.CTime = timespecNanos(statCtime(st))
	e.Dev, e.Ino = uint64(st.Dev), uint64(st.Ino)
}

func timespecNanos(ts unix.Timespec) int64 { return int64(ts.Sec)*1e9 + int64(ts.Nsec) }

// readFile reads a regular file of at most max bytes.
func (d dirHandle) readFile(name string, max int64) ([]byte, error) {
	fd, err := openat(d.fd, toZname(name))
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

// Lstat records the entry at the absolute path abs as a walk records one,
// reading no content: type, mode, owner, size, times, inode, link count and
// device number, from lstat(2) (a symlink in the last component is not
// followed; its target is read). Its Path is abs.
func Lstat(abs string) (Entry, error) {
	e := Entry{Path: abs, UID: -1, GID: -1}
	var st unix.Stat_t
	for {
		err := unix.Lstat(abs, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return e, &fs.PathError{Op: "lstat", Path: abs, Err: err}
		}
		break
	}
	fill(&e, &st)
	if e.Type == Symlink {
		t, err := os.Readlink(abs)
		if err != nil {
			e.Err = describe(err)
		}
		e.Target = t
	}
	return e, nil
}
