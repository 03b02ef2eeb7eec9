//go:build !unix

package snapshot

import (
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

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

func (d dirHandle) close() { d.f.Close() }

// list reads the directory's names into sc.
func (d dirHandle) list(sc *scratch) error {
	sc.names, sc.ents = sc.names[:0], sc.ents[:0]
	des, err := d.f.ReadDir(-1)
	for _, de := range des {
		sc.add([]byte(de.Name()), de.Type().IsRegular())
	}
	return err
}

func (d dirHandle) lstat(name string, e *Entry) error {
	fi, err := os.Lstat(filepath.Join(d.abs, name))
	if err != nil {
		return err
	}
	fillInfo(e, fi)
	return nil
}

func (d dirHandle) readlink(name string) (string, error) {
	t, err := os.Readlink(filepath.Join(d.abs, name))
	return filepath.ToSlash(t), err
}

func (d dirHandle) hashFile(name string, e *Entry, sc *scratch, maxSize, keepMax int64, keep func(*Entry, []byte)) (int64, error) {
	p := filepath.Join(d.abs, name)
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
	n, err := io.CopyBuffer(sc.h, io.LimitReader(f, e.Size), sc.buf)
	if err != nil {
		return n, err
	}
	e.SHA256 = hex.EncodeToString(sc.h.Sum(sc.sum[:0]))
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
