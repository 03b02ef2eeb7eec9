package stage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/core/snapshot"
)

// classify tells a whiteout, an opaque directory and a plain entry of the
// upper layer apart.
func classify(abs string, t fs.FileMode, prefix string) (upperKind, error) {
	switch {
	case t&fs.ModeCharDevice != 0:
		var st unix.Stat_t
		if err := unix.Lstat(abs, &st); err != nil {
			return plain, err
		}
		if st.Rdev == 0 {
			return whiteout, nil
		}
	case t.IsDir():
		if overlayXattr(abs, prefix+"redirect") != "" {
			return plain, errors.New("a redirected directory (the overlay was mounted with redirect_dir on)")
		}
		if v := overlayXattr(abs, prefix+"opaque"); v == "y" {
			return opaqueDir, nil
		}
	case t.IsRegular():
		if overlayXattr(abs, prefix+"metacopy") != "" {
			return plain, fmt.Errorf("a metacopy file (the overlay was mounted with metacopy on)")
		}
	}
	return plain, nil
}

// overlayXattr reads the attribute name ("" when not set).
func overlayXattr(abs, name string) string {
	buf := make([]byte, 64)
	if n, err := unix.Lgetxattr(abs, name, buf); err == nil {
		if n == 0 {
			return "set"
		}
		return string(buf[:n])
	} else if err == unix.ERANGE {
		return "set"
	}
	return ""
}

// matchRoot gives the upper layer's root dir the workspace root's mode and,
// when allowed (root), its owner.
func matchRoot(upper, ws string) error {
	var st unix.Stat_t
	if err := unix.Stat(ws, &st); err != nil {
		return err
	}
	if uint32(unix.Geteuid()) != st.Uid || uint32(unix.Getegid()) != st.Gid {
		_ = unix.Lchown(upper, int(st.Uid), int(st.Gid))
	}
	return unix.Chmod(upper, st.Mode&0o7777)
}

// reflink clones in's content into out (FICLONE); false when the
// filesystem cannot.
func reflink(out, in *os.File) bool {
	return unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) == nil
}

// mknodLike makes at to a FIFO, socket or device node like fi (a socket as
// an unbound socket file: a snapshot reads it as the socket it copies). A
// device needs CAP_MKNOD: a normal user gets an error naming it.
func mknodLike(to string, fi fs.FileInfo) (bool, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, errors.New("no stat")
	}
	mode := st.Mode & (unix.S_IFMT | 0o7777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFSOCK:
	case unix.S_IFCHR, unix.S_IFBLK:
		if st.Rdev != 0 && unix.Geteuid() != 0 {
			return false, errors.New("a device node cannot be copied by a normal user (stage by overlay, or run as root)")
		}
	default:
		return false, fmt.Errorf("a file of type %v cannot be copied", fi.Mode().Type())
	}
	if err := unix.Mknod(to, mode, int(st.Rdev)); err != nil {
		return false, err
	}
	return true, nil
}

// mknodAt makes a node of type typ (a FIFO, socket or device) at path.
func mknodAt(path string, typ snapshot.Type, perm uint32, rdev uint64) error {
	mode, err := nodeMode(typ)
	if err != nil {
		return err
	}
	return unix.Mknod(path, mode|perm&0o777, int(rdev))
}

// copyMeta gives dst (just made from src) src's owner where allowed (root;
// a normal user's chown of another's entry is left as it fails), then its
// mode again (a chown clears setuid and setgid), then its extended
// attributes, all of them: in a copy, overlayfs's are plain attributes.
func copyMeta(src, dst string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if st.Uid != uint32(unix.Geteuid()) || st.Gid != uint32(unix.Getegid()) {
		if err := unix.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil && unix.Geteuid() == 0 {
			return err
		}
	}
	if fi.Mode()&fs.ModeSymlink == 0 && !fi.IsDir() {
		if err := unix.Chmod(dst, st.Mode&0o7777); err != nil {
			return err
		}
	}
	return setXattrs(src, dst, nil)
}

// linkKey identifies fi's inode when it has more than one name.
func linkKey(fi fs.FileInfo) ([2]uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return [2]uint64{}, false
	}
	return [2]uint64{st.Dev, st.Ino}, true
}

// listXattrs lists src's extended attribute names (nil when none or the
// filesystem has none).
func listXattrs(src string) ([]string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(src, buf)
	if err == unix.ERANGE {
		if n, err = unix.Llistxattr(src, nil); err == nil {
			buf = make([]byte, n)
			n, err = unix.Llistxattr(src, buf)
		}
	}
	if err == unix.ENOTSUP || n == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if name != "" {
			out = append(out, name)
		}
	}
	return out, nil
}

// setXattrs gives dst (a path, not followed) src's extended attributes,
// except those skip names.
func setXattrs(src, dst string, skip func(string) bool) error {
	names, err := listXattrs(src)
	if err != nil {
		return err
	}
	for _, name := range names {
		if skip != nil && skip(name) {
			continue
		}
		val, err := getXattr(src, name)
		if err != nil {
			return err
		}
		if err := unix.Lsetxattr(dst, name, val, 0); err != nil {
			return fmt.Errorf("set %s: %v", name, err)
		}
	}
	return nil
}

func getXattr(src, name string) ([]byte, error) {
	sz, err := unix.Lgetxattr(src, name, nil)
	if err != nil {
		return nil, err
	}
	val := make([]byte, sz)
	if sz, err = unix.Lgetxattr(src, name, val); err != nil {
		return nil, err
	}
	return val[:sz], nil
}

// copyXattrs gives dst (an open file) the extended attributes of src,
// except those skip names (nil: overlayfs's own, both name spaces). An
// attribute that cannot be set (security.capability without CAP_SETFCAP)
// is an error: the apply must not silently differ from what was reviewed.
func copyXattrs(src string, dst *os.File, skip func(string) bool) error {
	if skip == nil {
		skip = snapshot.IsOverlayXattr
	}
	names, err := listXattrs(src)
	if err != nil {
		return err
	}
	for _, name := range names {
		if skip(name) {
			continue
		}
		val, err := getXattr(src, name)
		if err != nil {
			return err
		}
		if err := unix.Fsetxattr(int(dst.Fd()), name, val, 0); err != nil {
			return fmt.Errorf("set %s: %v", name, err)
		}
	}
	return nil
}
