package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/diffgate/diffgate/internal/fspath"

	"golang.org/x/sys/unix"
)

// readOnlyMounts gives the script's mount namespace (the supervisor's own,
// made for the run with an IPC namespace: a mount namespace, and for a
// normal user a user namespace too) a read-only view of everything but the writable
// directories, so that the kernel itself refuses what Landlock does not
// cover, whatever the script does to its memory meanwhile:
//
//   - a change of mode, owner, times or extended attributes of a file
//     outside the writable directories (EROFS);
//   - a write to the read-only paths of the workspace that exist (the
//     hooks, config, config.worktree and commondir of each git directory:
//     contain.GitProtected), and to a hard link to a file outside (their
//     own read-only bind mounts); a hard link to such a file cannot be
//     made either (a link across mounts is EXDEV);
//   - moving a git directory away to put another in its place, or a
//     folder holding one inside another (.git/modules, .git/worktrees):
//     each is a mount point (EBUSY).
//
// A read-only path that does not exist cannot be covered by a mount
// without creating it in the workspace: the supervisor refuses its
// creation, and restoreReadOnly removes, once the script's tree is gone,
// what a thread racing that refusal made (and, without the mounts, puts
// back what was changed).
//
// Each writable directory becomes a mount of its own, the whole tree is
// made read-only (mount_setattr, AT_RECURSIVE), and the mounts that were
// writable below a writable directory are made writable again, the
// protected ones excepted. A private tmpfs on /dev/shm (POSIX shared
// memory, semaphores) is added to the writable directories. Device nodes
// stay writable on a read-only mount; Landlock decides which.
func readOnlyMounts(c *Containment) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mount tree private: %v", err)
	}
	bind := func(p string) error {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %v", p, err)
		}
		return nil
	}
	dirs, _ := resolveWritable(c.Writable)
	for _, d := range dirs {
		if err := bind(d); err != nil {
			return err
		}
	}
	// The repositories' git directories first (rw: objects and refs are
	// written), then what stays read-only inside them.
	var protect []string
	for _, g := range gitMountPoints(c.ReadOnly) {
		if err := bind(g); err != nil {
			return err
		}
	}
	for _, p := range append(append([]string{}, c.ReadOnly...), c.HardLinks...) {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // not there (yet): the watcher refuses it
		}
		if err := bind(r); err != nil {
			return err
		}
		protect = append(protect, r)
	}
	writable := writableMounts(dirs, protect)
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make the tree read-only: %v", err)
	}
	for _, m := range writable {
		if err := unix.MountSetattr(unix.AT_FDCWD, m, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("make %s writable again: %v", m, err)
		}
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777") == nil {
			c.Writable = append(c.Writable, "/dev/shm")
		}
	}
	c.hidden = hideSecrets(c.DenyRead, dirs)
	return nil
}

// hideSecrets covers each path the script may not read: a directory with
// an empty read-only tmpfs (mode 000), a file with the null device bound
// read-only. What lies below stays out of sight however the script gets
// there, and Landlock needs no rule for it (its "allow every sibling" walk
// of the directories on the way, a /tmp of hundreds of entries, is
// spared). It reports whether every path that exists was covered; one that
// holds a writable directory (--deny-read of the workspace's parent) is
// not covered, and Landlock's rules stand in.
func hideSecrets(deny, writable []string) bool {
	all := true
	for _, d := range deny {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue // not there: nothing to read, and nothing can be made there
		}
		if holds(r, writable) {
			all = false
			continue
		}
		fi, err := os.Stat(r)
		if err != nil {
			return false
		}
		const flags = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
		if fi.IsDir() {
			if unix.Mount("tmpfs", r, "tmpfs", flags, "mode=000,size=4k") != nil {
				return false
			}
			continue
		}
		if unix.Mount("/dev/null", r, "", unix.MS_BIND, "") != nil ||
			unix.Mount("", r, "", unix.MS_REMOUNT|unix.MS_BIND|flags, "") != nil {
			return false
		}
	}
	return all
}

// gitMountPoints returns the directories that become mount points of their
// own, outer first, so that none can be renamed or removed (EBUSY) to put
// another in its place: each git directory holding a read-only path, and
// every directory between it and a git directory above it (.git/modules,
// .git/modules/a/modules, .git/worktrees).
func gitMountPoints(readOnly []string) []string {
	git := map[string]bool{}
	for _, p := range readOnly {
		if g, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			git[g] = true
		}
	}
	out := map[string]bool{}
	for g := range git {
		out[g] = true
		for a := filepath.Dir(g); a != filepath.Dir(a); a = filepath.Dir(a) {
			for o := range git {
				if o != a && fspath.Within(a, o) {
					out[a] = true
				}
			}
		}
	}
	list := make([]string, 0, len(out))
	for d := range out {
		list = append(list, d)
	}
	// Outer first: a bind of an inner one then stacks on the outer's.
	sort.Slice(list, func(i, j int) bool {
		return len(list[i]) < len(list[j]) || len(list[i]) == len(list[j]) && list[i] < list[j]
	})
	return list
}

// writableMounts lists the mount points, as they are now, that are
// writable and lie in (or are) one of dirs, except the protected ones.
func writableMounts(dirs, protect []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range mountInfo() {
		if !strings.HasPrefix(m.options, "rw") || seen[m.point] || !within(m.point, dirs) || slices.Contains(protect, m.point) {
			continue
		}
		seen[m.point] = true
		out = append(out, m.point)
	}
	return out
}
