package proc_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/internal/testenv"
)

// abiAttempts are the int80 helper's attempts of a contained script, with
// the i386 (or x32) call each one's first system call is.
var abiAttempts = []struct{ attempt, call string }{
	{"getpid", "i386 getpid (20)"}, {"udp", "i386 socket (359)"}, {"unix", "i386 socket (359)"},
	{"userfaultfd", "i386 userfaultfd (374)"}, {"io_uring", "i386 io_uring_setup (425)"},
	{"keyctl", "i386 keyctl (288)"}, {"seccomp", "i386 seccomp (354)"},
	{"hook", "i386 mkdir (39)"}, {"write", "i386 open (5)"}, {"chmod", "i386 chmod (15)"},
	{"x32", "x32 socket (41)"},
}

// abiFixture is a workspace holding a repository without .git/hooks, a
// file outside it, a UDP listener on 127.0.0.1 and a unix socket listener
// outside the workspace.
type abiFixture struct {
	base, ws, outside string
	udpPort           int
	udpStop, unixStop func() int64
}

func newABIFixture(t *testing.T) abiFixture {
	t.Helper()
	base, err := os.MkdirTemp("/tmp", "dg-abi-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	f := abiFixture{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside.txt")}
	if err := os.MkdirAll(filepath.Join(f.ws, ".git", "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(f.ws, ".git", "config"), []byte("[core]\n"), 0o644)
	os.WriteFile(f.outside, []byte("outside\n"), 0o644)
	f.udpPort, f.udpStop = testenv.ListenUDP(t)
	f.unixStop = testenv.ListenUnix(t, filepath.Join(base, "engine.sock"))
	os.Chmod(filepath.Join(base, "engine.sock"), 0o777)
	return f
}

// args are the helper's attempts against f.
func (f abiFixture) args() []string {
	return []string{"udp", strconv.Itoa(f.udpPort), "unix", filepath.Join(f.base, "engine.sock"),
		"userfaultfd", "io_uring", "keyctl", "seccomp", "hook", filepath.Join(f.ws, ".git", "hooks"),
		"write", filepath.Join(f.ws, ".git", "config"), "chmod", f.outside, "x32"}
}

// check fails t when anything got through: a datagram or a connection
// reached a listener, a file changed, or an attempt did not fail with
// ENOSYS (out: the helper's output).
func (f abiFixture) check(t *testing.T, out string) {
	t.Helper()
	if n := f.udpStop(); n != 0 {
		t.Errorf("the UDP listener received %d datagrams", n)
	}
	if n := f.unixStop(); n != 0 {
		t.Errorf("the unix socket listener accepted %d connections", n)
	}
	if _, err := os.Lstat(filepath.Join(f.ws, ".git", "hooks")); err == nil {
		t.Error(".git/hooks was created")
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config = %q", b)
	}
	if fi, err := os.Stat(f.outside); err != nil || fi.Mode() != 0o644 {
		t.Errorf("%s: %v %v, want mode 0644", f.outside, fi.Mode(), err)
	}
	for _, a := range abiAttempts {
		if !strings.Contains("\n"+out, "\n"+a.attempt+" -38\n") {
			t.Errorf("%s did not fail with ENOSYS:\n%s", a.attempt, out)
		}
	}
}

func testContainmentForeignABI(t *testing.T, helper string, c proc.Containment) {
	f := newABIFixture(t)
	tmp := filepath.Join(f.base, "tmp")
	os.Mkdir(tmp, 0o700)
	c.Enabled, c.NoNet = true, true
	c.Writable = append(c.Writable, f.ws, tmp, "/dev/null")
	c.ReadOnly = append(c.ReadOnly, filepath.Join(f.ws, ".git", "hooks"), filepath.Join(f.ws, ".git", "config"))
	res, err := proc.Run(context.Background(), proc.Spec{
		Dir: f.ws, Path: helper, Args: append([]string{"getpid"}, f.args()...),
		Env: []string{"PATH=/usr/bin:/bin", "HOME=" + f.base, "TMPDIR=" + tmp}, Timeout: 60 * time.Second,
		Containment: c,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout.Head)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.ExitCode, out, res.Stderr.Head)
	}
	f.check(t, out)
	if c.NoNotify {
		return // refused by every filter, not observed
	}
	if !res.Contained.Observed {
		t.Fatalf("not observed: %s", res.Contained.ObserveWhy)
	}
	for _, a := range abiAttempts {
		wantBlocked(t, res.Blocked, proc.Blocked{Kind: "syscall-abi", Target: a.call})
	}
}

// TestContainmentForeignABI: a contained script's system calls through
// the i386 entry (INT $0x80) and x32 (UDP to 127.0.0.1 with the network
// off, a connect to a unix socket outside, userfaultfd, io_uring, keyctl,
// a seccomp listener, a planted hook, .git/config, a chmod outside) all
// fail with ENOSYS and are recorded as BLOCKED syscall-abi; go-seccomp-bpf
// sent them to its default action, Allow. With the read-only mounts and
// without them (a user without user namespaces), as root and as a user.
func TestContainmentForeignABI(t *testing.T) {
	testContainmentForeignABI(t, testenv.Int80(t), proc.Containment{})
}

func TestContainmentForeignABIAsUser(t *testing.T) {
	helper := testenv.Int80(t)
	if testenv.AsUser(t) {
		return
	}
	testContainmentForeignABI(t, helper, proc.Containment{})
}

func TestContainmentForeignABINoMounts(t *testing.T) {
	testContainmentForeignABI(t, testenv.Int80(t), proc.Containment{NoMounts: true})
}

func TestContainmentForeignABINoMountsAsUser(t *testing.T) {
	helper := testenv.Int80(t)
	if testenv.AsUser(t) {
		return
	}
	testContainmentForeignABI(t, helper, proc.Containment{NoMounts: true})
}

// Without the watcher every filter refuses them itself.
func TestContainmentForeignABIWithoutWatcher(t *testing.T) {
	testContainmentForeignABI(t, testenv.Int80(t), proc.Containment{NoNotify: true})
}

func TestContainmentForeignABIWithoutWatcherAsUser(t *testing.T) {
	helper := testenv.Int80(t)
	if testenv.AsUser(t) {
		return
	}
	testContainmentForeignABI(t, helper, proc.Containment{NoNotify: true})
}
