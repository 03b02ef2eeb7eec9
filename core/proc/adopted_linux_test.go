package proc_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/core/proc"
)

// TestGateSweepsWhatSupervisorLeft: a supervisor whose final sweep ran out
// of time (here: skipped) says so, and the gate finds what it left among
// its own children, reports it and kills it, with the cgroup and without.
// Before, the gate looked only when the supervisor was lost, and a hopper
// that outlived a slow sweep on a loaded machine lived on. (A hopper is not
// among the cases: without a cgroup, a look at the gate's children can
// still miss one that hops while it looks, on a heavily loaded machine.)
func TestGateSweepsWhatSupervisorLeft(t *testing.T) {
	proc.WithoutSupervisorCleanup(t)
	for _, mech := range []string{"default", "subreaper"} {
		t.Run(mech, func(t *testing.T) {
			if mech == "subreaper" {
				proc.WithoutCgroup(t)
			}
			for _, body := range []string{
				"DGMARK=$1 sleep 300 &\nwaitmark $1\n",
				"DGMARK=$1 setsid sleep 300 &\nwaitmark $1\n",
			} {
				res, tok, _ := runTagged(t, body, nil)
				if len(res.Leftovers) == 0 {
					t.Errorf("%q: nothing reported (mechanism %s)", body, res.Mechanism)
				}
				assertAllGone(t, res, tok, true)
			}
		})
	}
}

// TestAdoptedZombiesReaped: while a run is in progress, a process that
// came to the gate as an orphan (in a session of its own, as the script's
// are) is reaped once it exits, so that a tree that escaped cannot fill
// the process table with the gate's zombies. A child the gate started
// itself, in a process group of its own, is left to its own Wait.
func TestAdoptedZombiesReaped(t *testing.T) {
	proc.ReapAdoptedWhileRunning(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "go")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The orphan: in a session of its own, it says its pid and waits on
	// the fifo (its output closed, so that Output returns); its parent
	// exits at once, so it is adopted.
	out, err := exec.Command("sh", "-c", `setsid sh -c 'echo $$; exec >/dev/null 2>&1; read x <"$1"' sh "$1" &`, "sh", fifo).Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("pid %q: %v", out, err)
	}
	t.Cleanup(func() { unix.Kill(pid, unix.SIGKILL) })
	waitFor(t, "the orphan adopted", func() bool { return ppidOf(pid) == os.Getpid() })
	// A child of ours in a process group of its own, in our session (what
	// the package asks of a program that calls Run): its exit is its
	// Wait's, never the reaper's.
	own := exec.Command("sh", "-c", "cat >/dev/null")
	own.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	ownIn, err := own.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()     // the orphan sees the end of the fifo and exits
	ownIn.Close() // and so does our own child, at the end of its input
	waitFor(t, "the orphan reaped", func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		return errors.Is(err, os.ErrNotExist)
	})
	if err := own.Wait(); err != nil {
		t.Errorf("our own child's Wait: %v (its exit was taken by the reaper)", err)
	}
}

// ppidOf is pid's parent, or 0.
func ppidOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// waitFor polls cond until it holds, failing t after a minute: the bound
// only ends a test that would otherwise hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
