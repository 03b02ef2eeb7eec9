//go:build !unix

package stage

import (
	"errors"
	"os"

	"github.com/diffgate/diffgate/core/snapshot"
)

// wsRoot: apply writes through directory descriptors (openat), which only
// Unix systems have.
type wsRoot struct{ path string }

var errNoApply = errors.New("apply needs a Unix system (openat)")

func openRoot(dir string) (*wsRoot, error)              { return nil, errNoApply }
func (r *wsRoot) close()                                {}
func (r *wsRoot) isDir(rel string) (bool, error)        { return false, errNoApply }
func (r *wsRoot) openFile(rel string) (*os.File, error) { return nil, errNoApply }
func (r *wsRoot) mkdir(rel string) error                { return errNoApply }
func (r *wsRoot) remove(rel string) error               { return errNoApply }
func (r *wsRoot) chmodDir(rel string, mode uint32, owner *[2]int64) error {
	return errNoApply
}
func (r *wsRoot) symlink(rel, target string, owner *[2]int64) error { return errNoApply }
func (r *wsRoot) node(rel string, typ snapshot.Type, perm uint32, rdev uint64, mtime int64, owner *[2]int64) error {
	return errNoApply
}
func (r *wsRoot) link(rel, target string) error                    { return errNoApply }
func (r *wsRoot) writableParent(rel string, fn func() error) error { return fn() }
func ownerUID(path string) int                                     { return -1 }
func (r *wsRoot) writeFile(rel string, mtime int64, fill func(*os.File) error) error {
	return errNoApply
}

func copyRange(dst, src *os.File, off, n int64) (int64, bool) { return 0, false }
