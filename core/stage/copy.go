package stage

import (
	"context"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/diffgate/diffgate/internal/oneline"
)

// CopyStats says what Populate did.
type CopyStats struct {
	Files, Reflinked int
	Bytes            int64
}

// Populate fills a copy stage with a copy of the workspace that a snapshot
// reads as the workspace itself: directories, files (reflinked where the
// filesystem can, copied otherwise; hard links within the workspace stay
// links), symlinks, FIFOs and sockets (a socket as an unbound socket
// file), device nodes (as root; a normal user cannot make one, and a
// workspace holding one cannot be copied: an error), with their modes,
// modification times, extended attributes (overlayfs's own included: in a
// copy they are plain attributes) and, where allowed (root), owners.
func (s *Stage) Populate(ctx context.Context) (CopyStats, error) {
	if s.Mechanism != Copy {
		return CopyStats{}, fmt.Errorf("stage: %s is not a copy stage", s.ID)
	}
	c := &copier{ctx: ctx, ws: s.Workspace, dst: s.Copy(), links: map[[2]uint64]string{}}
	err := filepath.WalkDir(s.Workspace, c.entry)
	if err == nil {
		err = c.dirModes()
	}
	if err != nil {
		return c.st, fmt.Errorf("stage: copy workspace: %v", oneline.First(err.Error()))
	}
	return c.st, nil
}

// copier is the state of one Populate: the workspace ws copied to dst, the
// first copy of each file with several names (links), what was copied.
type copier struct {
	ctx     context.Context
	ws, dst string
	links   map[[2]uint64]string
	st      CopyStats
}

// entry copies one entry of the workspace walk (a filepath.WalkDirFunc).
func (c *copier) entry(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	if err := c.ctx.Err(); err != nil {
		return err
	}
	rel, _ := filepath.Rel(c.ws, p)
	to := filepath.Join(c.dst, rel)
	fi, err := d.Info()
	if err != nil {
		return err
	}
	switch {
	case d.IsDir():
		// Writable for the copy; the mode is set once it is filled.
		if err := os.Mkdir(to, 0o700); err != nil {
			return err
		}
		return copyMeta(p, to, fi)
	case fi.Mode().IsRegular():
		return c.file(p, to, fi)
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(p)
		if err != nil {
			return err
		}
		if err := os.Symlink(t, to); err != nil {
			return err
		}
		return copyMeta(p, to, fi)
	}
	if made, err := mknodLike(to, fi); err != nil {
		return fmt.Errorf("%s: %v", p, err)
	} else if !made {
		return nil // not on this platform
	}
	return copyMetaTimes(p, to, fi)
}

// file copies the regular file p to to, or links to to the copy of a name
// of it already copied.
func (c *copier) file(p, to string, fi fs.FileInfo) error {
	if key, ok := linkKey(fi); ok {
		if first, seen := c.links[key]; seen {
			return os.Link(first, to)
		}
		c.links[key] = to
	}
	reflinked, err := copyFile(p, to, fi)
	if err != nil {
		return err
	}
	c.st.Files++
	c.st.Bytes += fi.Size()
	if reflinked {
		c.st.Reflinked++
	}
	return copyMetaTimes(p, to, fi)
}

// copyMetaTimes copies p's metadata (copyMeta) to to, then its
// modification time.
func copyMetaTimes(p, to string, fi fs.FileInfo) error {
	if err := copyMeta(p, to, fi); err != nil {
		return err
	}
	return os.Chtimes(to, fi.ModTime(), fi.ModTime())
}

// dirModes sets the copied directories' modes and times last, deepest
// first, so read-only ones were filled.
func (c *copier) dirModes() error {
	var dirs []string
	err := filepath.WalkDir(c.ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	})
	for i := len(dirs) - 1; i >= 0 && err == nil; i-- {
		var fi fs.FileInfo
		if fi, err = os.Stat(dirs[i]); err == nil {
			rel, _ := filepath.Rel(c.ws, dirs[i])
			to := filepath.Join(c.dst, rel)
			if err = os.Chmod(to, fi.Mode()&(fs.ModePerm|fs.ModeSetgid|fs.ModeSticky)); err == nil {
				err = os.Chtimes(to, fi.ModTime(), fi.ModTime())
			}
		}
	}
	return err
}

// copyFile copies src to a new file dst, by reflink where possible, keeping
// its holes otherwise (copyData).
func copyFile(src, dst string, fi fs.FileInfo) (reflinked bool, err error) {
	in, err := os.Open(src)
	if err != nil {
		return false, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()|0o200)
	if err != nil {
		return false, err
	}
	if reflinked, err = copyData(out, in, nil); err != nil {
		out.Close()
		return false, err
	}
	if err = out.Chmod(fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
		out.Close()
		return false, err
	}
	// Without them every file that has some would read as changed.
	if err = copyXattrs(src, out, func(string) bool { return false }); err != nil {
		out.Close()
		return false, fmt.Errorf("%s: %v", src, err)
	}
	return reflinked, out.Close()
}

// zeros is what a hole reads as, fed to a hash.
var zeros [64 << 10]byte

// copyData copies src's content into dst (both open, dst empty) the way
// apply and the copy stage both copy a file: by reflink (FICLONE) where the
// filesystem has it, else only its data runs (SEEK_DATA, SEEK_HOLE), so a
// sparse file stays sparse, dst being extended to src's size. With sum set,
// the content (holes as zeros) is hashed into it on the way.
func copyData(dst, src *os.File, sum hash.Hash) (reflinked bool, err error) {
	fi, err := src.Stat()
	if err != nil {
		return false, err
	}
	size := fi.Size()
	if reflink(dst, src) {
		if sum != nil {
			err = hashData(src, size, sum)
		}
		return true, err
	}
	buf := make([]byte, min(size, 1<<20))
	err = extents(src, size, func(off, n int64, data bool) error {
		if !data {
			return hashZeros(sum, n)
		}
		if sum == nil { // nothing to hash: the kernel copies
			k, ok := copyRange(dst, src, off, n)
			if ok {
				return nil
			}
			off, n = off+k, n-k
		}
		for n > 0 {
			k, err := src.ReadAt(buf[:min(n, int64(len(buf)))], off)
			if k > 0 {
				if _, werr := dst.WriteAt(buf[:k], off); werr != nil {
					return werr
				}
				if sum != nil {
					sum.Write(buf[:k])
				}
				off, n = off+int64(k), n-int64(k)
			}
			if err == io.EOF && n > 0 {
				return io.ErrUnexpectedEOF // the file shrank under the copy
			}
			if err != nil && err != io.EOF {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = dst.Truncate(size) // a trailing hole
	}
	return false, err
}

// hashData hashes f's first size bytes into sum, holes as zeros (without
// reading them).
func hashData(f *os.File, size int64, sum hash.Hash) error {
	return extents(f, size, func(off, n int64, data bool) error {
		if !data {
			return hashZeros(sum, n)
		}
		k, err := io.Copy(sum, io.NewSectionReader(f, off, n))
		if err == nil && k < n {
			err = io.ErrUnexpectedEOF
		}
		return err
	})
}

func hashZeros(sum hash.Hash, n int64) error {
	for sum != nil && n > 0 {
		k := min(n, int64(len(zeros)))
		sum.Write(zeros[:k])
		n -= k
	}
	return nil
}
