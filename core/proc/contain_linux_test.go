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

// containFixture is a fixture HOME with a shell rc file and an SSH key,
// and a workspace next to it.
type containFixture struct {
	home, ws string
}

func newContainFixture(t *testing.T) containFixture {
	t.Helper()
	// Directly in /tmp, not below TMPDIR: in testenv.AsUser's child that
	// is below a directory the user may traverse but not list, and the
	// deny-read rules cannot allow the siblings of what they cannot list
	// (they fail closed there).
	base, err := os.MkdirTemp("/tmp", "dg-contain-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	f := containFixture{home: filepath.Join(base, "home"), ws: filepath.Join(base, "ws")}
	for _, d := range []string{filepath.Join(f.home, ".ssh"), f.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.home, ".bashrc"), []byte("orig\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.home, ".ssh", "id_ed25519"), []byte("SECRET-KEY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

const containScript = `#!/bin/sh
echo x >> "$HOME/.bashrc" && echo WROTE-BASHRC
cat "$HOME/.ssh/id_ed25519" && echo READ-SSH
/usr/bin/python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])))" "$1" 2>/dev/null && echo CONNECTED
bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$1" 2>/dev/null && echo CONNECTED-BASH
/usr/bin/python3 -c "import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)" 2>/dev/null && echo UDP-SOCKET
/usr/bin/python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('u.sock')" && echo UNIX-SOCKET
kill -STOP $PPID 2>/dev/null && echo STOPPED-SUPERVISOR
echo ok > out && echo WROTE-WS
echo tmp > "$TMPDIR/t" && echo WROTE-TMP
head -c1 "$HOME/.bashrc" >/dev/null && echo READ-BASHRC
echo done
`

func runContained(t *testing.T, f containFixture, port int, c proc.Containment) *proc.Result {
	t.Helper()
	path := filepath.Join(f.ws, "script.sh")
	if err := os.WriteFile(path, []byte(containScript), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(f.ws), "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	c.Writable = append(c.Writable, f.ws, tmp, "/dev/null")
	res, err := proc.Run(context.Background(), proc.Spec{
		Dir: f.ws, Path: path, Args: []string{strconv.Itoa(port)},
		Env:         []string{"PATH=/usr/bin:/bin", "HOME=" + f.home, "TMPDIR=" + tmp},
		Timeout:     60 * time.Second,
		Containment: c,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func testContainment(t *testing.T) {
	f := newContainFixture(t)
	port, stop := testenv.Listen(t)
	res := runContained(t, f, port, proc.Containment{
		Enabled: true, NoNet: true, DenyRead: []string{filepath.Join(f.home, ".ssh")},
	})
	accepted := stop()
	out := string(res.Stdout.Head)
	if !strings.Contains(out, "done") || res.SupervisorLost != "" || res.ExitCode != 0 {
		t.Fatalf("run: exit %d, supervisor %q, stdout %q, stderr %q", res.ExitCode, res.SupervisorLost, out, res.Stderr.Head)
	}
	e := res.Contained
	if e == nil || !e.Filesystem || !e.Net || !e.Signals || !e.Seccomp || !e.Secrets || e.LandlockABI < 6 || e.Why != "" {
		t.Fatalf("Contained = %+v, want every layer at ABI >= 6", e)
	}
	for _, bad := range []string{"WROTE-BASHRC", "READ-SSH", "SECRET-KEY", "CONNECTED", "UDP-SOCKET", "STOPPED-SUPERVISOR"} {
		if strings.Contains(out, bad) {
			t.Errorf("stdout has %s:\n%s", bad, out)
		}
	}
	for _, good := range []string{"WROTE-WS", "WROTE-TMP", "READ-BASHRC", "UNIX-SOCKET"} {
		if !strings.Contains(out, good) {
			t.Errorf("stdout lacks %s:\n%s\nstderr: %s", good, out, res.Stderr.Head)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.home, ".bashrc")); string(b) != "orig\n" {
		t.Errorf(".bashrc = %q, want it unchanged", b)
	}
	if accepted != 0 {
		t.Errorf("the listener accepted %d connections", accepted)
	}
}

// TestContainment runs a script that tries to write ~/.bashrc, read
// ~/.ssh/id_ed25519, connect to a listener on 127.0.0.1, open a UDP
// socket and stop the supervisor: all fail, while it writes its workspace
// and TMPDIR and binds an AF_UNIX socket there.
func TestContainment(t *testing.T) { testContainment(t) }

func TestContainmentAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testContainment(t)
}

// TestContainmentOff is the control: the same script, uncontained, does
// all of it.
func TestContainmentOff(t *testing.T) {
	f := newContainFixture(t)
	port, stop := testenv.Listen(t)
	res := runContained(t, f, port, proc.Containment{})
	accepted := stop()
	out := string(res.Stdout.Head)
	for _, want := range []string{"WROTE-BASHRC", "READ-SSH", "CONNECTED", "UDP-SOCKET"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %s:\n%s", want, out)
		}
	}
	if accepted == 0 || res.Contained != nil {
		t.Errorf("accepted %d, Contained %+v", accepted, res.Contained)
	}
}

// TestContainmentMissingLayer: without Landlock (pretended), a required
// containment refuses to start the script; otherwise the run says why.
func TestContainmentMissingLayer(t *testing.T) {
	f := newContainFixture(t)
	path := filepath.Join(f.ws, "script.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho ran > ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := proc.Spec{Dir: f.ws, Path: path, Timeout: 30 * time.Second,
		Containment: proc.Containment{Enabled: true, Required: true, NoLandlock: true}}
	_, err := proc.Run(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "landlock") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Run = %v, want a one-line error naming landlock", err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "ran")); err == nil {
		t.Fatal("the script ran")
	}
	spec.Containment.Required = false
	res, err := proc.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Contained; e == nil || e.Filesystem || e.LandlockABI != 0 || !strings.Contains(e.Why, "landlock") {
		t.Fatalf("Contained = %+v", e)
	}
}

// TestContainmentUnlistableParentAsUser: a secret store below a directory
// the user may traverse but not list cannot be hidden (Landlock can only
// allow, and the siblings there cannot be named): the script still runs
// and reads its files, and the run says which path stayed readable.
func TestContainmentUnlistableParentAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	f := newContainFixture(t)
	locked := filepath.Join(filepath.Dir(f.ws), "locked")
	for _, d := range []string{filepath.Join(locked, "ws"), filepath.Join(locked, "home", ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(locked, "home", ".ssh", "id"), []byte("K\n"), 0o600)
	os.WriteFile(filepath.Join(locked, "data"), []byte("D\n"), 0o644)
	if err := os.Chmod(locked, 0o311); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	ws := filepath.Join(locked, "ws")
	path := filepath.Join(ws, "s.sh")
	os.WriteFile(path, []byte("#!/bin/sh\ncat ../data\n"), 0o755)
	res, err := proc.Run(context.Background(), proc.Spec{Dir: ws, Path: path, Timeout: 30 * time.Second,
		Containment: proc.Containment{Enabled: true, Writable: []string{ws}, DenyRead: []string{filepath.Join(locked, "home", ".ssh")}}})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Contained
	if string(res.Stdout.Head) != "D\n" || e == nil || !e.Filesystem || e.Secrets || !strings.Contains(e.Why, "secrets: ") {
		t.Fatalf("stdout %q stderr %q Contained %+v", res.Stdout.Head, res.Stderr.Head, e)
	}
}

// TestContainmentForkLoopAsUser: a script that forks without end hits the
// RLIMIT_NPROC cap (64 tasks here) instead of filling the machine, and the
// run ends; its processes are all killed. As a normal user only: the cap
// does not hold root.
func TestContainmentForkLoopAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	if os.Getuid() == 0 {
		t.Skip("RLIMIT_NPROC does not hold root")
	}
	f := newContainFixture(t)
	path := filepath.Join(f.ws, "s.sh")
	os.WriteFile(path, []byte("#!/bin/sh\ni=0\nwhile [ $i -lt 1000 ]; do sleep 300 & i=$((i+1)); done 2>/dev/null\necho done\n"), 0o755)
	res, err := proc.Run(context.Background(), proc.Spec{Dir: f.ws, Path: path, Timeout: 120 * time.Second,
		Containment: proc.Containment{Enabled: true, Writable: []string{f.ws, "/dev/null"}, NProc: 64}})
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Contained; e == nil || !e.NProc || !e.FSize {
		t.Fatalf("Contained = %+v", e)
	}
	if n := len(res.Leftovers); n == 0 || n >= 1000 || res.TimedOut {
		t.Fatalf("%d leftovers (timed out %v), want some but fewer than 1000 (stderr %q)", n, res.TimedOut, res.Stderr.Head)
	}
}

// TestContainmentFileSizeCap: a file written past the RLIMIT_FSIZE cap
// stops at it (the writer gets SIGXFSZ).
func TestContainmentFileSizeCap(t *testing.T) {
	f := newContainFixture(t)
	path := filepath.Join(f.ws, "s.sh")
	os.WriteFile(path, []byte("#!/bin/sh\nhead -c 1000000 /dev/zero > big\necho rc=$?\n"), 0o755)
	res, err := proc.Run(context.Background(), proc.Spec{Dir: f.ws, Path: path, Timeout: 60 * time.Second,
		Containment: proc.Containment{Enabled: true, Writable: []string{f.ws}, FSize: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(f.ws, "big"))
	if err != nil || fi.Size() != 4096 || strings.Contains(string(res.Stdout.Head), "rc=0") {
		t.Fatalf("big: %v %v, stdout %q", fi, err, res.Stdout.Head)
	}
}
