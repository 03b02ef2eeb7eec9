package stage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/core/snapshot"
)

// classify tells a whiteout, an opaque directory and a plain entry of the
// upper layer apart.
func classify(abs string, t fs.FileMode) (upperKind, error) {
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
		if overlayXattr(abs, "redirect") != "" {
			return plain, errors.New("a redirected directory (the overlay was mounted with redirect_dir on)")
		}
		if v := overlayXattr(abs, "opaque"); v == "y" {
			return opaqueDir, nil
		}
	case t.IsRegular():
		if overlayXattr(abs, "metacopy") != "" {
			return plain, fmt.Errorf("a metacopy file (the overlay was mounted with metacopy on)")
		}
	}
	return plain, nil
}

// overlayXattr reads overlayfs's attribute name, user.overlay.* (userxattr
// mounts) or trusted.overlay.*; "" when neither is set.
func overlayXattr(abs, name string) string {
	buf := make([]byte, 64)
	for _, ns := range []string{"user.overlay.", "trusted.overlay."} {
		if n, err := unix.Lgetxattr(abs, ns+name, buf); err == nil {
			if n == 0 {
				return "set"
			}
			return string(buf[:n])
		} else if err == unix.ERANGE {
			return "set"
		}
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

// copyXattrs gives dst (an open file) the extended attributes of src, except
// overlayfs's own. An attribute that cannot be set (security.capability
// without CAP_SETFCAP) is an error: the apply must not silently differ from
// what was reviewed.
func copyXattrs(src string, dst *os.File) error {
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(src, buf)
	if err == unix.ERANGE {
		if n, err = unix.Llistxattr(src, nil); err == nil {
			buf = make([]byte, n)
			n, err = unix.Llistxattr(src, buf)
		}
	}
	if err == unix.ENOTSUP || n == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if name == "" || snapshot.IsOverlayXattr(name) {
			continue
		}
		sz, err := unix.Lgetxattr(src, name, nil)
		if err != nil {
			return err
		}
		val := make([]byte, sz)
		if sz, err = unix.Lgetxattr(src, name, val); err != nil {
			return err
		}
		if err := unix.Fsetxattr(int(dst.Fd()), name, val[:sz], 0); err != nil {
			return fmt.Errorf("set %s: %v", name, err)
		}
	}
	return nil
}
