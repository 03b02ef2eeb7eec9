package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// xattrSupported says whether the walk records extended attributes.
const xattrSupported = true

// readXattrs records the extended attributes of the open file fd in e
// (Entry.Xattr, with the value of security.capability). One flistxattr
// call into the worker's reused buffer when there are none, the common
// case, and when the list fits; only a list that does not fit (ERANGE) asks
// for its size and is read again into a larger buffer, kept for the next
// files. Nothing is recorded when the list cannot be read (Xattr stays "",
// unknown).
func readXattrs(fd int, e *Entry, sc *scratch) {
	if sc.xbuf == nil {
		sc.xbuf = make([]byte, 1024)
	}
	var n int
	var err error
	for {
		n, err = unix.Flistxattr(fd, sc.xbuf)
		if err == unix.ERANGE {
			var size int
			if size, err = unix.Flistxattr(fd, nil); err == nil || err == unix.EINTR {
				sc.xbuf = make([]byte, max(size, 2*len(sc.xbuf)))
				continue
			}
		}
		if err != unix.EINTR {
			break
		}
	}
	switch {
	case err == unix.ENOTSUP || err == nil && n == 0:
		e.Xattr = XattrNone
		return
	case err != nil:
		return
	}
	names := strings.Split(strings.TrimRight(string(sc.xbuf[:n]), "\x00"), "\x00")
	if sc.noOverlay {
		names = slices.DeleteFunc(names, func(n string) bool {
			if sc.overlayPrefix != "" {
				return strings.HasPrefix(n, sc.overlayPrefix)
			}
			return IsOverlayXattr(n)
		})
		if len(names) == 0 {
			e.Xattr = XattrNone
			return
		}
	}
	slices.Sort(names)
	h := sha256.New()
	if sc.xval == nil {
		sc.xval = make([]byte, 256)
	}
	val := sc.xval
	var caps string
	for _, name := range names {
		var v []byte
		for {
			k, err := unix.Fgetxattr(fd, name, val)
			if err == unix.ERANGE {
				val = make([]byte, 2*len(val))
				sc.xval = val
				continue
			}
			if err == unix.EINTR {
				continue
			}
			if err == nil {
				v = val[:k]
			}
			break
		}
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(v)
		h.Write([]byte{0})
		if name == capabilityXattr {
			caps = hex.EncodeToString(v)
		}
	}
	var b bytes.Buffer
	b.WriteString(strings.Join(names, ","))
	b.WriteByte('#')
	b.WriteString(hex.EncodeToString(h.Sum(nil)[:8]))
	if caps != "" {
		b.WriteString(capsTag + caps)
	}
	e.Xattr = b.String()
}
