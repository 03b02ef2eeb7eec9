//go:build !unix

package stage

import (
	"os"

	"github.com/diffgate/diffgate/core/snapshot"
)

// extents: one data run (no SEEK_DATA here).
func extents(f *os.File, size int64, fn func(off, n int64, data bool) error) error {
	if size == 0 {
		return nil
	}
	return fn(0, size, true)
}

// sameFile: no change time here; the file is hashed.
func sameFile(f *os.File, e *snapshot.Entry) bool { return false }
