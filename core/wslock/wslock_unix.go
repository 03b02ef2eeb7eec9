//go:build unix

package wslock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// tryLock takes f's flock without waiting; ok is false when another open
// file description holds a conflicting lock.
func tryLock(f *os.File, exclusive bool) (ok bool, err error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// ownDir refuses a lock directory that is not a directory of ours (the
// fallback in the shared temporary directory could be planted by another user).
func ownDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is not a directory owned by uid %d", dir, os.Getuid())
	}
	return nil
}

// otherRun finds a run that holds the lock file f conflicts on, from the
// kernel's list of locks (Linux /proc/locks): the pid of one holder, and
// the workspace that it wrote into its own lock file in dir.
func otherRun(dir string, f *os.File) (string, int) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return "", 0
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return "", 0
	}
	// "1: FLOCK  ADVISORY  WRITE 4211 08:01:1234 0 EOF"
	want := ":" + strconv.FormatUint(st.Ino, 10)
	for _, line := range strings.Split(string(data), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 6 || fs[1] != "FLOCK" || !strings.HasSuffix(fs[5], want) {
			continue
		}
		pid, err := strconv.Atoi(fs[4])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		return ownWorkspace(dir, pid), pid
	}
	return "", 0
}

// ownWorkspace returns the workspace that run pid named in its lock file.
func ownWorkspace(dir string, pid int) string {
	names, _ := filepath.Glob(filepath.Join(dir, "*.lock"))
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			continue
		}
		p, ws := readRecord(f)
		f.Close()
		if p == pid {
			return ws
		}
	}
	return ""
}
