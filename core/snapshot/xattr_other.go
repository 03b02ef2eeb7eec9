//go:build !linux

package snapshot

// xattrSupported says whether the walk records extended attributes.
const xattrSupported = false

func readXattrs(fd int, e *Entry, sc *scratch) {}
