//go:build !linux

package snapshot

import "unsafe"

// prefault is a no-op where MADV_POPULATE_WRITE does not exist.
func prefault(unsafe.Pointer, uintptr) {}
