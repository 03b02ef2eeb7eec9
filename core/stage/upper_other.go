//go:build !linux

package stage

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/diffgate/diffgate/core/snapshot"
)

// classify: there is no overlay outside Linux.
func classify(abs string, t fs.FileMode, prefix string) (upperKind, error) { return plain, nil }

func matchRoot(upper, ws string) error { return nil }

func reflink(out, in *os.File) bool { return false }

func copyXattrs(src string, dst *os.File, skip func(string) bool) error { return nil }

// mknodLike: FIFOs, sockets and devices are left out of a copy here.
func mknodLike(to string, fi fs.FileInfo) (bool, error) { return false, nil }

func copyMeta(src, dst string, fi fs.FileInfo) error { return nil }

func linkKey(fi fs.FileInfo) ([2]uint64, bool) { return [2]uint64{}, false }

func mknodAt(path string, typ snapshot.Type, perm uint32, rdev uint64) error {
	return fmt.Errorf("a %s cannot be applied here", typ)
}
