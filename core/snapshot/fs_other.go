//go:build !unix

package snapshot

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

var errNotDir = errors.New("not a directory")

// dirHandle is an open directory, reached by path on platforms without
// *at system calls (Windows): portable, slower, same results.
type dirHandle struct {
	f   *os.File
	abs string
}

func openDir(abs string) (dirHandle, error) {
	f, err := os.Open(abs)
	if err != nil {
		return dirHandle{}, err
	}
	return dirHandle{f: f, abs: abs}, nil
}

// openRoot opens the directory at abs, recording its own metadata in self
// (from Lstat: a root that is a symlink is not followed).
func openRoot(abs string, self *Entry) (dirHandle, error) {
	fi, err := os.Lstat(abs)
	if err != nil {
		return dirHandle{}, err
	}
	fillInfo(self, fi)
	if self.Type == Symlink {
		self.Target, _ = os.Readlink(abs)
	}
	if !fi.IsDir() {
		return dirHandle{}, &fs.PathError{Op: "open", Path: abs, Err: errNotDir}
	}
	return openDir(abs)
}

// openSub opens the subdirectory name of d, refusing a symlink.
func (d dirHandle) openSub(name zname) (dirHandle, error) {
	p := filepath.Join(d.abs, name.s)
	if fi, err := os.Lstat(p); err != nil {
		return dirHandle{}, err
	} else if !fi.IsDir() {
		return dirHandle{}, &fs.PathError{Op: "open", Path: p, Err: errNotDir}
	}
	return openDir(p)
}

// stat records the open directory's own metadata in e.
func (d dirHandle) stat(e *Entry) error {
	fi, err := d.f.Stat()
	if err != nil {
		return err
	}
	fillInfo(e, fi)
	return nil
}

func (d dirHandle) xattrs(e *Entry, sc *scratch) {}

func (d dirHandle) close() { d.f.Close() }

// list reads the directory's names into sc.
func (d dirHandle) list(sc *scratch) error {
	sc.names, sc.ents = sc.names[:0], sc.ents[:0]
	des, err := d.f.ReadDir(-1)
	for _, de := range des {
		sc.add([]byte(de.Name()), kindOf(de.Type()))
	}
	return err
}

func (d dirHandle) lstat(name zname, e *Entry) error {
	fi, err := os.Lstat(filepath.Join(d.abs, name.s))
	if err != nil {
		return err
	}
	fillInfo(e, fi)
	return nil
}

func (d dirHandle) readlink(name zname) (string, error) {
	t, err := os.Readlink(filepath.Join(d.abs, name.s))
	return filepath.ToSlash(t), err
}

func (d dirHandle) hashFile(name zname, e *Entry, sc *scratch, maxSize, keepMax int64, keep func(*Entry, []byte)) (int64, error) {
	p := filepath.Join(d.abs, name.s)
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, errNotRegular
	}
	fillInfo(e, fi)
	if maxSize >= 0 && e.Size > maxSize {
		return 0, errTooBig
	}
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc.h.Reset()
	var n int64
	for n < e.Size {
		if sc.stop != nil && sc.stop.Load() {
			return n, errStopped
		}
		k, err := f.Read(sc.buf[:min(int64(len(sc.buf)), e.Size-n)])
		sc.h.Write(sc.buf[:k])
		n += int64(k)
		sc.progress(int64(k))
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, err
		}
	}
	e.SHA256 = sc.digest()
	if keep != nil && n <= keepMax && n <= int64(len(sc.buf)) {
		if data, err := os.ReadFile(p); err == nil && int64(len(data)) == n {
			keep(e, data)
		}
	}
	return n, nil
}

func fillInfo(e *Entry, fi fs.FileInfo) {
	e.Type = typeOf(fi.Mode())
	e.Perm = permOf(fi.Mode())
	if e.Type == File || e.Type == Symlink {
		e.Size = fi.Size()
	}
	e.MTime = fi.ModTime().UnixNano()
}

// readFile reads a regular file of at most max bytes.
func (d dirHandle) readFile(name string, max int64) ([]byte, error) {
	p := filepath.Join(d.abs, name)
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	if fi.Size() > max {
		return nil, errLarge
	}
	return os.ReadFile(p)
}

// Lstat records the entry at the absolute path abs as a walk records one,
// reading no content (see the Unix version; here from os.Lstat: no owner,
// inode or link count). Its Path is abs.
func Lstat(abs string) (Entry, error) {
	e := Entry{Path: abs, UID: -1, GID: -1}
	fi, err := os.Lstat(abs)
	if err != nil {
		return e, err
	}
	fillInfo(&e, fi)
	if e.Type == Symlink {
		t, err := os.Readlink(abs)
		if err != nil {
			e.Err = describe(err)
		}
		e.Target = filepath.ToSlash(t)
	}
	return e, nil
}
