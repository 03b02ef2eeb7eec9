package proc

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/internal/oneline"
)

// The read-only paths of the workspace (Containment.ReadOnly: the hooks,
// config, config.worktree and commondir of each git directory) are saved
// before the script starts and checked once its whole tree is gone, when
// nothing can race the check. The read-only mounts and the supervisor
// refuse changes while the script runs; what got past them (a name that
// did not exist, which no mount can cover, made by a thread racing the
// supervisor; anything, where no mount namespace could be made) is put
// back as it was and recorded as blocked, so that nothing planted runs at
// the next git command.

// Bounds of what is saved of one read-only path; a larger one is checked
// and recorded when changed, but not put back.
const (
	maxSavedBytes   = 8 << 20
	maxSavedEntries = 4096
)

// savedPath is a read-only path as it was before the run.
type savedPath struct {
	path string
	// entries are the path itself (rel "") and, for a directory, what
	// lies below it, parents first; none when it did not exist.
	entries []savedEntry
	// complete says the entries are all there is (within the bounds).
	complete bool
}

// savedEntry is one file, directory or symlink of a saved path.
type savedEntry struct {
	rel      string
	mode     fs.FileMode // type and permission bits
	uid, gid int
	mtime    time.Time
	data     []byte // a file's content, a symlink's target
}

// same compares what matters to git: type, permissions, owner, content.
func (e savedEntry) same(o savedEntry) bool {
	return e.rel == o.rel && e.mode == o.mode && e.uid == o.uid && e.gid == o.gid && bytes.Equal(e.data, o.data)
}

// saveReadOnly reads each read-only path as it is now.
func saveReadOnly(paths []string) []savedPath {
	out := make([]savedPath, 0, len(paths))
	for _, p := range paths {
		entries, complete := readTree(p)
		out = append(out, savedPath{path: p, entries: entries, complete: complete})
	}
	return out
}

// readTree reads p and, for a directory, everything below it (symlinks
// are not followed), parents first, within the bounds.
func readTree(root string) (entries []savedEntry, complete bool) {
	complete = true
	size := 0
	var walk func(rel string)
	walk = func(rel string) {
		p := filepath.Join(root, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			if rel != "" {
				complete = false
			}
			return
		}
		if len(entries) >= maxSavedEntries || size > maxSavedBytes {
			complete = false
			return
		}
		e := savedEntry{rel: rel, mode: fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), mtime: fi.ModTime()}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			e.uid, e.gid = int(st.Uid), int(st.Gid)
		}
		switch {
		case fi.Mode().IsRegular():
			if fi.Size() > maxSavedBytes-int64(size) {
				complete = false
				return
			}
			if e.data, err = readNoFollow(p); err != nil {
				complete = false
				return
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				complete = false
				return
			}
			e.data = []byte(t)
		case fi.IsDir():
		default:
			complete = false // a FIFO, socket or device: never put back
		}
		size += len(e.data)
		entries = append(entries, e)
		if fi.IsDir() {
			ents, err := os.ReadDir(p)
			if err != nil {
				complete = false
				return
			}
			for _, d := range ents {
				walk(filepath.Join(rel, d.Name()))
			}
		}
	}
	walk("")
	return entries, complete
}

// readNoFollow reads a regular file without following a symlink in its
// place and without blocking on a FIFO.
func readNoFollow(p string) ([]byte, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(f)
	return b.Bytes(), err
}

// restoreReadOnly runs once the script's whole tree is gone: each saved
// path that changed is recorded (a create when it did not exist, a write
// otherwise, on behalf of the script's main process pid) and put back as
// it was: removed when it did not exist, rewritten when it was saved
// whole.
func restoreReadOnly(saved []savedPath, pid int, rec *recorder) {
	for _, s := range saved {
		now, _ := readTree(s.path)
		if slices.EqualFunc(now, s.entries, savedEntry.same) {
			continue
		}
		kind, op := kindWrite, "changed past the supervisor: put back after the run"
		switch {
		case len(s.entries) == 0:
			kind, op = kindCreate, "made past the supervisor: removed after the run"
		case !s.complete:
			op = "changed past the supervisor: too large to put back"
		}
		if len(s.entries) == 0 || s.complete {
			if err := putBack(s); err != nil {
				op = "changed past the supervisor: cannot put it back: " + oneline.Flat(err.Error())
			}
		}
		rec.add(pid, kind, s.path, op)
	}
}

// putBack removes what is at s.path and recreates the saved entries.
func putBack(s savedPath) error {
	if os.RemoveAll(s.path) != nil {
		// A directory made unreadable (mode 0300: git can still run a
		// hook in it) is opened up first.
		openUp(s.path)
	}
	if err := os.RemoveAll(s.path); err != nil {
		return err
	}
	if len(s.entries) == 0 {
		return nil
	}
	if _, err := os.Lstat(filepath.Dir(s.path)); err != nil {
		return err // its git directory is gone: nothing git would read
	}
	for _, e := range s.entries {
		p := filepath.Join(s.path, e.rel)
		var err error
		switch {
		case e.mode.IsDir():
			err = os.Mkdir(p, 0o700)
		case e.mode&fs.ModeSymlink != 0:
			err = os.Symlink(string(e.data), p)
		default:
			var f *os.File
			if f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600); err == nil {
				_, err = f.Write(e.data)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
		}
		if err != nil {
			return err
		}
	}
	// Owners, modes and times last, children before their directory (a
	// directory of mode 0555 refuses new entries).
	for i := len(s.entries) - 1; i >= 0; i-- {
		e := s.entries[i]
		p := filepath.Join(s.path, e.rel)
		_ = os.Lchown(p, e.uid, e.gid)
		if e.mode&fs.ModeSymlink == 0 {
			if err := os.Chmod(p, e.mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
				return err
			}
			_ = os.Chtimes(p, e.mtime, e.mtime)
		}
	}
	return nil
}

// openUp gives p, when it is a directory, and every directory below it,
// mode 0700, so that their owner (or root) can remove what they hold.
func openUp(p string) {
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
		return
	}
	_ = os.Chmod(p, 0o700)
	ents, _ := os.ReadDir(p)
	for _, e := range ents {
		if e.IsDir() {
			openUp(filepath.Join(p, e.Name()))
		}
	}
}
