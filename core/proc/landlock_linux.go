package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unsafe"

	"github.com/diffgate/diffgate/internal/fspath"
	"golang.org/x/sys/unix"
)

// Landlock access rights (golang.org/x/sys/unix names them; the raw
// system calls are used rather than go-landlock, whose package pulls in
// libcap/psx, which would be linked, with its C part, into the cgo
// desktop app that imports this package).
const (
	readFileRights  = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_EXECUTE
	readDirRights   = readFileRights | unix.LANDLOCK_ACCESS_FS_READ_DIR
	writeFileRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS returns the filesystem rights Landlock ABI abi can restrict.
func handledFS(abi int) uint64 {
	h := uint64(1<<13 - 1) // ABI 1: EXECUTE .. MAKE_SYM
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// pathRule is one Landlock path-beneath rule.
type pathRule struct {
	path   string
	rights uint64
}

// restrictThread applies Landlock to the calling (locked) thread.
func restrictThread(c *Containment) (*Enforced, error) {
	enf := &Enforced{}
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 || c.NoLandlock {
		abi = 0
	}
	enf.LandlockABI = int(abi)
	if abi < 1 {
		enf.Why = "landlock: not supported by this kernel"
		if c.NoLandlock {
			enf.Why = "landlock: turned off for a test"
		}
		return enf, required(c, enf.Why)
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS(int(abi))}
	size := unsafe.Sizeof(attr.Handled_access_fs)
	var why []string
	if c.NoNet {
		if abi >= 4 {
			attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
			size = unsafe.Offsetof(attr.Handled_access_net) + unsafe.Sizeof(attr.Handled_access_net)
			enf.Net = true
		} else {
			why = append(why, fmt.Sprintf("net: Landlock ABI %d has no TCP rules (needs 4)", abi))
		}
	}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Offsetof(attr.Scoped) + unsafe.Sizeof(attr.Scoped)
		enf.Signals = true
	} else {
		why = append(why, fmt.Sprintf("signals: Landlock ABI %d has no signal scope (needs 6)", abi))
	}
	if len(why) > 0 && c.Required {
		return nil, errors.New("proc: containment: " + why[0])
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		enf.Why = "landlock: create ruleset: " + errno.Error()
		return enf, required(c, enf.Why)
	}
	defer unix.Close(int(fd))
	rules, open := pathRules(c)
	if len(open) > 0 {
		why = append(why, fmt.Sprintf("secrets: %s stays readable (a directory above it cannot be listed)", open[0]))
		if c.Required {
			return nil, errors.New("proc: containment: " + why[len(why)-1])
		}
	} else {
		enf.Secrets = true
	}
	for _, r := range rules {
		if err := addPathRule(int(fd), r, attr.Handled_access_fs); err != nil {
			return nil, fmt.Errorf("proc: containment: landlock rule for %s: %v", r.path, err)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return nil, fmt.Errorf("proc: containment: landlock: %v", errno)
	}
	enf.Filesystem = true
	enf.Why = strings.Join(why, "; ")
	return enf, nil
}

// addPathRule adds one path-beneath rule; a path that vanished is skipped.
func addPathRule(fd int, r pathRule, handled uint64) error {
	pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(pfd)
	attr := unix.LandlockPathBeneathAttr{Allowed_access: r.rights & handled, Parent_fd: int32(pfd)}
	if attr.Allowed_access == 0 {
		return nil
	}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// pathRules returns the Landlock filesystem rules for c on this system
// (planPathRules over the real root).
func pathRules(c *Containment) (rules []pathRule, open []string) {
	var deny []string
	if !c.hidden { // else covered by the read-only mounts (hideSecrets)
		for _, d := range c.DenyRead {
			if r, err := filepath.EvalSymlinks(d); err == nil {
				deny = append(deny, r)
			}
		}
	}
	return planPathRules(osFS{}, deny, c.Writable)
}

// planFS is what planPathRules reads: the real file system (osFS) or, in
// tests, a map. Paths are absolute and taken byte for byte (an io/fs.FS
// would refuse a name that is not UTF-8, and the workspace's may not be).
type planFS interface {
	Stat(path string) (fs.FileInfo, error)
	ReadDir(path string) ([]fs.DirEntry, error)
}

// osFS is the real file system.
type osFS struct{}

func (osFS) Stat(p string) (fs.FileInfo, error)      { return os.Stat(p) }
func (osFS) ReadDir(p string) ([]fs.DirEntry, error) { return os.ReadDir(p) }

// planPathRules plans the Landlock rules over fsys: read (and execute) everywhere but the denied paths, write below
// the writable ones. Landlock can only allow, and a rule covers a
// directory's whole tree: each directory on the way to a denied path gets
// no rule of its own, its other entries get one each ("allow every sibling
// along the path"). open lists the denied paths that stay readable because
// a directory on their way cannot be listed. deny and writable are
// absolute, clean and free of symbolic links. It reads fsys and nothing
// else, so the tests give it a map.
func planPathRules(fsys planFS, deny, writable []string) (rules []pathRule, open []string) {
	add := func(p string, dirRights, fileRights uint64) {
		fi, err := fsys.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			rules = append(rules, pathRule{p, dirRights})
		default:
			rules = append(rules, pathRule{p, fileRights})
		}
	}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			// Its entries cannot be named (a directory the user may
			// traverse but not list): the whole directory stays
			// readable, and so do the denied paths below it (reported).
			add(dir, readDirRights, readFileRights)
			for _, d := range deny {
				if denyRelation(d, []string{dir}) == isDenied {
					open = append(open, d)
				}
			}
			return
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			switch denyRelation(p, deny) {
			case unrelated:
				// Neither denied nor on the way to a denied path. The
				// entry's type comes from the listing: no stat for each
				// of a large directory's entries (a /tmp of hundreds).
				switch {
				case e.Type()&fs.ModeSymlink != 0:
				case e.IsDir():
					rules = append(rules, pathRule{p, readDirRights})
				default:
					rules = append(rules, pathRule{p, readFileRights})
				}
			case holdsDenied:
				if e.IsDir() {
					walk(p)
				}
			case isDenied: // no rule
			}
		}
	}
	if denyRelation("/", deny) == unrelated {
		add("/", readDirRights, readFileRights)
	} else {
		walk("/")
	}
	writeDir := handledFS(99) &^ readDirRights
	ws := append([]string{}, writable...)
	sort.Strings(ws)
	for _, w := range ws {
		// A writable directory is readable too (also inside a denied
		// one: --deny-read of the workspace's parent leaves the
		// workspace usable), unless a denied path lies below it: then its
		// reads come from the walk above.
		if denyRelation(w, deny) != holdsDenied {
			add(w, writeDir|readDirRights, writeFileRights|readFileRights)
		} else {
			add(w, writeDir, writeFileRights)
		}
	}
	return rules, open
}

// denyRel is where a path stands relative to the denied paths.
type denyRel int

const (
	unrelated   denyRel = iota // neither denied nor on the way to one
	isDenied                   // one of them, or below one
	holdsDenied                // one of them lies below it
)

// denyRelation says where p stands relative to the denied paths (being
// denied wins over holding a denied path).
func denyRelation(p string, deny []string) denyRel {
	res := unrelated
	for _, d := range deny {
		switch {
		case fspath.Within(p, d):
			return isDenied
		case fspath.Within(d, p):
			res = holdsDenied
		}
	}
	return res
}
