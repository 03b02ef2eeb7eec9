//go:build unix

package stage

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/diffgate/diffgate/core/snapshot"
	"golang.org/x/sys/unix"
)

// wsRoot is a directory (the workspace, or a stage's upper layer or copy)
// opened once: every path below it is opened relative to it, never
// following a symlink (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the
// kernel has it, one component at a time with O_NOFOLLOW otherwise), so no
// write can land outside it, whatever is renamed or linked meanwhile.
type wsRoot struct {
	fd   int
	path string
}

const applySupported = true

// openRoot opens dir (whose last component must not be a symlink).
func openRoot(dir string) (*wsRoot, error) {
	fd, err := unix.Open(dir, dirFlags|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return &wsRoot{fd: fd, path: dir}, nil
}

func (r *wsRoot) close() { unix.Close(r.fd) }

// open opens rel ("" or "." for the root itself) below the root with flags
// (O_NOFOLLOW and O_CLOEXEC added).
func (r *wsRoot) open(rel string, flags int) (int, error) {
	if rel == "" || rel == "." {
		return unix.Openat(r.fd, ".", flags|unix.O_CLOEXEC, 0)
	}
	fd, err := openBeneath(r.fd, rel, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err == unix.ENOSYS {
		fd, err = walkOpen(r.fd, rel, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	}
	return fd, err
}

// walkOpen opens rel below dirfd one component at a time, each directory
// with O_NOFOLLOW.
func walkOpen(dirfd int, rel string, flags int) (int, error) {
	parts := strings.Split(rel, "/")
	fd, err := unix.Openat(dirfd, ".", dirFlags|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for i, part := range parts {
		if part == "" || part == "." || part == ".." {
			unix.Close(fd)
			return -1, unix.EINVAL // never out of dirfd
		}
		fl := dirFlags | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i == len(parts)-1 {
			fl = flags
		}
		nfd, err := unix.Openat(fd, part, fl, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = nfd
	}
	return fd, nil
}

// parent opens the directory holding rel and returns it with rel's last
// component.
func (r *wsRoot) parent(rel string) (int, string, error) {
	dir, name := snapshot.SplitPath(rel)
	fd, err := r.open(dir, dirFlags)
	if err != nil {
		return -1, "", fmt.Errorf("%s: %w", dirOrRoot(dir), err)
	}
	return fd, name, nil
}

func dirOrRoot(dir string) string {
	if dir == "" {
		return "the workspace"
	}
	return dir
}

// isDir says whether rel is a directory (not a symlink to one); an error
// is fs.ErrNotExist when rel (or a parent) is missing, unix.ELOOP or
// unix.ENOTDIR when a parent is a symlink or no directory.
func (r *wsRoot) isDir(rel string) (bool, error) {
	pfd, name, err := r.parent(rel)
	if err != nil {
		return false, errors.Unwrap(err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, err
	}
	return st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// openFile opens regular file rel below the root for reading; anything
// else (a symlink, a FIFO, a device) is refused.
func (r *wsRoot) openFile(rel string) (*os.File, error) {
	fd, err := r.open(rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, errors.New("not a regular file")
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// mkdir makes directory rel (mode 0700 until its chmod); one that exists is
// fine.
func (r *wsRoot) mkdir(rel string) error {
	pfd, name, err := r.parent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	err = unix.Mkdirat(pfd, name, 0o700)
	if err == unix.EEXIST {
		var st unix.Stat_t
		if unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return nil
		}
	}
	return err
}

// remove removes rel and, for a directory, everything below it, never
// following a symlink; a missing rel is fine.
func (r *wsRoot) remove(rel string) error {
	pfd, name, err := r.parent(rel)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	return removeAt(pfd, name)
}

func removeAt(pfd int, name string) error {
	err := unix.Unlinkat(pfd, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	var st unix.Stat_t
	if e := unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); e != nil {
		if e == unix.ENOENT {
			return nil
		}
		return e
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return err
	}
	fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.EACCES {
		// A directory the owner cannot list: make it listable first.
		if err = chmodAt(pfd, name, 0o700); err == nil {
			fd, err = unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return err
	}
	madeWritable := false
	for _, n := range names {
		err := removeAt(fd, n)
		if (err == unix.EACCES || err == unix.EPERM) && !madeWritable {
			madeWritable = true
			if unix.Fchmod(fd, 0o700) == nil {
				err = removeAt(fd, n)
			}
		}
		if err != nil {
			return err
		}
	}
	return unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR)
}

// chmodDir sets directory rel's mode (raw bits, 07777), and first its
// owner when owner is not nil (a chown clears setuid and setgid).
func (r *wsRoot) chmodDir(rel string, mode uint32, owner *[2]int64) error {
	fd := r.fd
	if rel != "" && rel != "." {
		var err error
		if fd, err = r.open(rel, dirFlags|unix.O_DIRECTORY); err != nil {
			return err
		}
		defer unix.Close(fd)
	}
	if owner != nil {
		if err := chownFd(fd, int(owner[0]), int(owner[1])); err != nil {
			return err
		}
	}
	return chmodFd(fd, mode)
}

// chmodAt sets the mode of directory name in pfd.
func chmodAt(pfd int, name string, mode uint32) error {
	fd, err := unix.Openat(pfd, name, dirFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return chmodFd(fd, mode)
}

// symlink makes rel a symlink to target (owned by owner, when not nil),
// replacing what is there (not a directory) atomically.
func (r *wsRoot) symlink(rel, target string, owner *[2]int64) error {
	return r.place(rel, func(pfd int, tmp string) error {
		if err := unix.Symlinkat(target, pfd, tmp); err != nil {
			return err
		}
		if owner != nil {
			return unix.Fchownat(pfd, tmp, int(owner[0]), int(owner[1]), unix.AT_SYMLINK_NOFOLLOW)
		}
		return nil
	})
}

// node makes rel a FIFO, socket or device node (of type typ, mode perm,
// device number rdev) with modification time mtime (0: left) and owner
// (nil: the applier's), replacing what is there (not a directory)
// atomically.
func (r *wsRoot) node(rel string, typ snapshot.Type, perm uint32, rdev uint64, mtime int64, owner *[2]int64) error {
	mode, err := nodeMode(typ)
	if err != nil {
		return err
	}
	return r.place(rel, func(pfd int, tmp string) error {
		if err := mknodAtFd(pfd, tmp, mode|0o600, rdev); err != nil {
			return err
		}
		if owner != nil {
			if err := unix.Fchownat(pfd, tmp, int(owner[0]), int(owner[1]), unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return err
			}
		}
		// The name is new and random: nothing but the node made is there.
		if err := unix.Fchmodat(pfd, tmp, perm&0o7777, 0); err != nil {
			return err
		}
		if mtime != 0 {
			ts := unix.NsecToTimespec(mtime)
			return unix.UtimesNanoAt(pfd, tmp, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
		}
		return nil
	})
}

// link makes rel another name of the file at target (below the root, not a
// symlink), replacing what is there (not a directory) atomically; rel
// already a name of it is fine.
func (r *wsRoot) link(rel, target string) error {
	tfd, tname, err := r.parent(target)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	var ts unix.Stat_t
	if err := unix.Fstatat(tfd, tname, &ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if ts.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%s is not a regular file", target)
	}
	return r.place(rel, func(pfd int, tmp string) error {
		_, name := snapshot.SplitPath(rel)
		var st unix.Stat_t
		if unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Dev == ts.Dev && st.Ino == ts.Ino {
			return errSame // a rename onto the same inode would leave tmp
		}
		return unix.Linkat(tfd, tname, pfd, tmp, 0)
	})
}

var errSame = errors.New("already in place")

// place makes a new entry with a random name in rel's directory (make),
// then renames it onto rel.
func (r *wsRoot) place(rel string, make func(pfd int, tmp string) error) error {
	pfd, name, err := r.parent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	for range 100 {
		tmp := tempName()
		err := make(pfd, tmp)
		if err == errSame {
			return nil
		}
		if err == unix.EEXIST {
			continue // the name was taken: not made
		}
		if err == nil {
			err = unix.Renameat(pfd, tmp, pfd, name)
		}
		if err != nil {
			unix.Unlinkat(pfd, tmp, 0)
		}
		return err
	}
	return errors.New("no free temporary name")
}

// writableParent runs fn with rel's directory writable by its owner when
// it is not (a read-only folder of the workspace that the staged script
// made writable, wrote in and made read-only again), then restores its
// mode.
func (r *wsRoot) writableParent(rel string, fn func() error) error {
	dir, _ := snapshot.SplitPath(rel)
	fd, err := r.open(dir, dirFlags|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if uint32(st.Mode)&0o200 != 0 {
		return fn()
	}
	if err := chmodFd(fd, uint32(st.Mode)&0o7777|0o700); err != nil {
		return err
	}
	err = fn()
	if cerr := chmodFd(fd, uint32(st.Mode)&0o7777); err == nil {
		err = cerr
	}
	return err
}

// ownerUID is the uid owning path (not followed), -1 when unknown.
func ownerUID(path string) int {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return -1
	}
	return int(st.Uid)
}

// writeFile writes rel: fill writes the content (and mode, attributes) into
// a new file, which then gets mtime (ns since the epoch, 0: left as is) and
// replaces rel atomically. The new file has no name until it is complete
// (O_TMPFILE) or a random one made with O_EXCL; no name a workspace holds
// can clash with it.
func (r *wsRoot) writeFile(rel string, mtime int64, fill func(*os.File) error) error {
	pfd, name, err := r.parent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	f, tmp, err := createTemp(pfd)
	if err != nil {
		return err
	}
	err = fill(f)
	if err == nil && tmp == "" {
		tmp, err = linkTemp(pfd, f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && mtime != 0 {
		ts := unix.NsecToTimespec(mtime)
		err = unix.UtimesNanoAt(pfd, tmp, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err == nil {
		err = unix.Renameat(pfd, tmp, pfd, name)
	}
	if err != nil && tmp != "" {
		unix.Unlinkat(pfd, tmp, 0)
	}
	return err
}

// createRandom makes a new file with a random temporary name in pfd.
func createRandom(pfd int) (*os.File, string, error) {
	for range 100 {
		tmp := tempName()
		fd, err := unix.Openat(pfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return os.NewFile(uintptr(fd), tmp), tmp, nil
	}
	return nil, "", errors.New("no free temporary name")
}

// tempName is a random name for a file apply is making: nothing in the
// workspace can predict it, and it is only ever created exclusively.
func tempName() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return ".diffgate-apply-" + hex.EncodeToString(b[:])
}

// nodeMode is the S_IF* file type bits of a node of type typ (a FIFO,
// socket or device).
func nodeMode(typ snapshot.Type) (uint32, error) {
	switch typ {
	case snapshot.FIFO:
		return unix.S_IFIFO, nil
	case snapshot.Socket:
		return unix.S_IFSOCK, nil
	case snapshot.Char:
		return unix.S_IFCHR, nil
	case snapshot.Block:
		return unix.S_IFBLK, nil
	}
	return 0, fmt.Errorf("a %s cannot be made", typ)
}
