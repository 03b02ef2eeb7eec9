package snapshot

import (
	"encoding/binary"
	"io/fs"

	"golang.org/x/sys/unix"
)

// direntBuf is the least free space offered to one getdents64 call.
const direntBuf = 32 << 10

// list reads the directory's names into sc with getdents64 directly: no
// allocation per name (os.File.ReadDir makes a DirEntry and a string each)
// and the type comes from d_type, as with ReadDir.
func (d dirHandle) list(sc *scratch) error {
	sc.names, sc.ents = sc.names[:0], sc.ents[:0]
	if cap(sc.buf) < direntBuf {
		sc.buf = make([]byte, bufSize)
	}
	buf := sc.buf[:cap(sc.buf)]
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "readdirent", Path: "", Err: err}
		}
		if n <= 0 {
			return nil
		}
		parseDirents(buf[:n], sc)
	}
}

// parseDirents appends the names of a getdents64 result to sc, skipping "."
// and ".." and deleted entries (inode 0), as the os package does.
func parseDirents(b []byte, sc *scratch) {
	// struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
	const nameOff = 19
	for len(b) >= nameOff {
		ino := binary.NativeEndian.Uint64(b[0:8])
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < nameOff || reclen > len(b) {
			return
		}
		typ := b[18]
		name := b[nameOff:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		b = b[reclen:]
		if ino == 0 || len(name) == 0 || (len(name) == 1 && name[0] == '.') || (len(name) == 2 && name[0] == '.' && name[1] == '.') {
			continue
		}
		kind := listedOther
		switch typ {
		case unix.DT_REG:
			kind = listedFile
		case unix.DT_DIR:
			kind = listedDir
		}
		sc.add(name, kind)
	}
}
