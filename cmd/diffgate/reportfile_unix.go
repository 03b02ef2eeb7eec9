//go:build unix

package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/quote"
)

// reportTarget is a --report FILE whose directory was opened before the
// script ran. The report is written relative to that directory, never
// following a link: a script that turns the directory (or FILE) into a
// symlink cannot send the report elsewhere.
type reportTarget struct {
	path string
	dir  *os.File // O_DIRECTORY, close-on-exec
	base string
}

// openReport checks path's format, opens its directory and tries a
// temporary file in it (as the write will), before the run.
func openReport(path string) (*reportTarget, error) {
	if err := report.CheckPath(path); err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	if base == "." || base == ".." || base == "/" || strings.HasSuffix(path, "/") {
		return nil, fmt.Errorf("report %s: not a file name", quote.Path(path))
	}
	dirPath := filepath.Dir(path)
	fd, err := unix.Open(dirPath, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("report %s: cannot write in %s: %v", quote.Path(path), quote.Path(dirPath), err)
	}
	t := &reportTarget{path: path, dir: os.NewFile(uintptr(fd), dirPath), base: base}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		t.close()
		return nil, fmt.Errorf("report %s: is a directory", quote.Path(path))
	}
	tmp, f, err := t.create()
	if err != nil {
		t.close()
		return nil, fmt.Errorf("report %s: cannot write in %s: %v", quote.Path(path), quote.Path(dirPath), err)
	}
	f.Close()
	unix.Unlinkat(fd, tmp, 0)
	return t, nil
}

// create makes a new temporary file in the directory (O_EXCL, no link
// followed).
func (t *reportTarget) create() (string, *os.File, error) {
	for range 10 {
		var b [8]byte
		rand.Read(b[:])
		name := ".diffgate-report-" + hex.EncodeToString(b[:])
		fd, err := unix.Openat(int(t.dir.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		return name, os.NewFile(uintptr(fd), name), nil
	}
	return "", nil, unix.EEXIST
}

// write writes r into the directory opened before the run: a temporary
// file renamed over the name (a link there is replaced, not followed).
func (t *reportTarget) write(r *report.Report) error {
	write := report.Formats[strings.ToLower(filepath.Ext(t.path))]
	tmp, f, err := t.create()
	if err != nil {
		return fmt.Errorf("report %s: %w", quote.Path(t.path), err)
	}
	dirfd := int(t.dir.Fd())
	err = write(r, f)
	if err == nil {
		err = unix.Fchmod(int(f.Fd()), 0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, t.base)
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return fmt.Errorf("report %s: %w", quote.Path(t.path), err)
	}
	return nil
}

func (t *reportTarget) close() { t.dir.Close() }
