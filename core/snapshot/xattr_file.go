package snapshot

import "os"

// FileXattr returns the Entry.Xattr summary of the open file f, as a walk
// records it (skipOverlay: without overlayfs's own attributes, as
// PathsOptions.SkipOverlayXattrs); "" when it cannot be read.
func FileXattr(f *os.File, skipOverlay bool) string {
	var e Entry
	readXattrs(int(f.Fd()), &e, &scratch{noOverlay: skipOverlay})
	return e.Xattr
}
