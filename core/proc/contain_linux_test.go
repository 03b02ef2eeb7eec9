package proc_test

import (
	"context"
	"fmt"
	"golang.org/x/sys/unix"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
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
/usr/bin/python3 -c "import socket,sys; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b'x', ('::1', int(sys.argv[1])))" "$1" 2>/dev/null && echo UDP-SENT
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
	if e == nil || !e.Filesystem || !e.Net || !e.Signals || !e.Seccomp || !e.Secrets || e.LandlockABI < 6 || e.Why != "" ||
		!e.Observed || !e.StandIns || !e.Privileges || !e.Admin {
		t.Fatalf("Contained = %+v, want every layer at ABI >= 6", e)
	}
	wantBlocked(t, res.Blocked,
		proc.Blocked{Kind: "write", Target: filepath.Join(f.home, ".bashrc"), Op: "openat"},
		proc.Blocked{Kind: "read", Target: filepath.Join(f.home, ".ssh", "id_ed25519"), Op: "openat"},
		proc.Blocked{Kind: "net", Target: "127.0.0.1:" + strconv.Itoa(port), Op: "connect"},
		proc.Blocked{Kind: "net", Target: "[::1]:" + strconv.Itoa(port), Op: "sendto"},
	)
	for _, bad := range []string{"WROTE-BASHRC", "READ-SSH", "SECRET-KEY", "CONNECTED", "UDP-SENT", "STOPPED-SUPERVISOR"} {
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

// needMounts skips a test that needs the read-only mounts where this
// machine cannot make them, and fails it where it can but they are
// missing.
func needMounts(t *testing.T, e *proc.Enforced) {
	t.Helper()
	switch {
	case e == nil:
		t.Fatal("not contained")
	case e.Mounts:
	case testenv.MountNamespaces():
		t.Fatalf("no read-only mounts although this machine can make a private mount namespace: %s", e.MountsWhy)
	default:
		t.Skipf("no private mount namespace here: %s", e.MountsWhy)
	}
}

// wantBlocked fails t for each of want that list does not hold (see
// hasBlocked).
func wantBlocked(t *testing.T, list []proc.Blocked, want ...proc.Blocked) {
	t.Helper()
	for _, w := range want {
		if !hasBlocked(list, w) {
			t.Errorf("Blocked lacks %+v:\n%+v", w, list)
		}
	}
}

// hasBlocked reports whether list holds want's kind, target and op (any
// when ""), by a process with a command line.
func hasBlocked(list []proc.Blocked, want proc.Blocked) bool {
	for _, b := range list {
		if b.Kind == want.Kind && b.Target == want.Target && (want.Op == "" || b.Op == want.Op) && b.PID > 0 && b.Cmd != "" && b.Count >= 1 {
			return true
		}
	}
	return false
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
	for _, want := range []string{"WROTE-BASHRC", "READ-SSH", "CONNECTED", "UDP-SENT"} {
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
// the user may traverse but not list cannot be hidden by Landlock without a
// user namespace (Landlock can only allow, and the siblings there cannot be
// named): the script still runs and reads its files, the watcher refuses
// the secret (best effort), and the run says which path Landlock left
// readable. In the supervisor's user namespace (the
// read-only mounts' own) it may list its own directories, and the store
// is hidden.
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
	os.WriteFile(path, []byte("#!/bin/sh\ncat ../data\ncat ../home/.ssh/id 2>/dev/null\n"), 0o755)
	for _, noMounts := range []bool{true, false} {
		res, err := proc.Run(context.Background(), proc.Spec{Dir: ws, Path: path, Timeout: 30 * time.Second,
			Containment: proc.Containment{Enabled: true, Writable: []string{ws, "/dev/null"}, DenyRead: []string{filepath.Join(locked, "home", ".ssh")}, NoMounts: noMounts}})
		if err != nil {
			t.Fatal(err)
		}
		e := res.Contained
		switch {
		case e == nil || !e.Filesystem:
			t.Fatalf("Contained %+v", e)
		case noMounts && (string(res.Stdout.Head) != "D\n" || e.Secrets || !strings.Contains(e.Why, "secrets: ")):
			// Landlock cannot hide it; the watcher refuses the read (best
			// effort), and the layer is reported missing.
			t.Fatalf("without a user namespace: stdout %q stderr %q Contained %+v", res.Stdout.Head, res.Stderr.Head, e)
		case !noMounts && e.Mounts && (string(res.Stdout.Head) != "D\n" || !e.Secrets):
			t.Fatalf("in a user namespace: stdout %q stderr %q Contained %+v", res.Stdout.Head, res.Stderr.Head, e)
		}
	}
}

// TestContainmentForkLoopAsUser: a script that forks without end hits the
// RLIMIT_NPROC cap (64 tasks here, above the machine's count) instead of
// filling the machine, and the
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
	// The cap is 64 tasks above the machine's task count (an upper bound
	// of the user's): the loop tries 500 more than that.
	b, _ := os.ReadFile("/proc/loadavg")
	fields := strings.Fields(string(b))
	_, total, _ := strings.Cut(fields[3], "/")
	tasks, _ := strconv.Atoi(total)
	loop := tasks + 500
	path := filepath.Join(f.ws, "s.sh")
	os.WriteFile(path, []byte(fmt.Sprintf("#!/bin/sh\ni=0\nwhile [ $i -lt %d ]; do sleep 300 & i=$((i+1)); done 2>/dev/null\necho done\n", loop)), 0o755)
	res, err := proc.Run(context.Background(), proc.Spec{Dir: f.ws, Path: path, Timeout: 120 * time.Second,
		Containment: proc.Containment{Enabled: true, Writable: []string{f.ws, "/dev/null"}, NProc: 64}})
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Contained; e == nil || !e.NProc || !e.FSize {
		t.Fatalf("Contained = %+v", e)
	}
	if n := len(res.Leftovers); n == 0 || n >= loop || res.TimedOut {
		t.Fatalf("%d leftovers (timed out %v), want some but fewer than %d (stderr %q)", n, res.TimedOut, loop, res.Stderr.Head)
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

// runIn runs a shell script contained in f.ws (writable: f.ws and
// /dev/null) and returns the result.
func runIn(t *testing.T, f containFixture, script string, c proc.Containment) *proc.Result {
	t.Helper()
	path := filepath.Join(f.ws, "s.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	c.Enabled = true
	c.Writable = append(c.Writable, f.ws, "/dev/null")
	res, err := proc.Run(context.Background(), proc.Spec{Dir: f.ws, Path: path,
		Env:     []string{"PATH=/usr/bin:/bin", "HOME=" + f.home},
		Timeout: 60 * time.Second, Containment: c})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func testContainmentUnixSockets(t *testing.T) {
	f := newContainFixture(t)
	outside := filepath.Join(filepath.Dir(f.ws), "outside.sock")
	stopOut := testenv.ListenUnix(t, outside)
	abstract := "@dg-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	stopAbs := testenv.ListenUnix(t, abstract)
	gram := filepath.Join(filepath.Dir(f.ws), "gram.sock")
	rx, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: gram, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	if testenv.IsRoot() {
		for _, p := range []string{outside, gram} {
			os.Chmod(p, 0o777)
		}
	}
	res := runIn(t, f, `
python3 - <<'PY'
import socket
outside, abstract, gram = `+strconv.Quote(outside)+`, `+strconv.Quote(abstract)+`, `+strconv.Quote(gram)+`
srv = socket.socket(socket.AF_UNIX); srv.bind('in.sock'); srv.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect('in.sock'); a, _ = srv.accept()
c.sendall(b'ping'); print('INSIDE', a.recv(4).decode())
for name, addr in (('OUTSIDE', outside), ('ABSTRACT', '\0' + abstract[1:])):
    try:
        socket.socket(socket.AF_UNIX).connect(addr); print(name, 'connected')
    except OSError as e:
        print(name, 'refused', e.errno)
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    d.sendto(b'x', gram); print('GRAM sent')
except OSError as e:
    print('GRAM refused', e.errno)
PY
`, proc.Containment{})
	out := string(res.Stdout.Head)
	for _, want := range []string{"INSIDE ping", "OUTSIDE refused 13", "ABSTRACT refused 13", "GRAM refused 13"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s\nstderr: %s", want, out, res.Stderr.Head)
		}
	}
	if n := stopOut(); n != 0 {
		t.Errorf("the outside socket accepted %d connections", n)
	}
	if n := stopAbs(); n != 0 {
		t.Errorf("the abstract socket accepted %d connections", n)
	}
	rx.SetReadDeadline(time.Now()) // the script is gone: anything it sent is queued
	if _, _, err := rx.ReadFrom(make([]byte, 16)); err == nil {
		t.Error("the outside datagram socket received a datagram")
	}
	wantBlocked(t, res.Blocked,
		proc.Blocked{Kind: "net", Target: outside, Op: "connect"},
		proc.Blocked{Kind: "net", Target: abstract, Op: "connect"},
		proc.Blocked{Kind: "net", Target: gram, Op: "sendto"},
	)
}

// TestContainmentUnixSockets: an AF_UNIX socket in the workspace works; one
// outside it (stream or datagram) and an abstract one are refused and
// recorded, and receive nothing.
func TestContainmentUnixSockets(t *testing.T) { testContainmentUnixSockets(t) }

func TestContainmentUnixSocketsAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testContainmentUnixSockets(t)
}

func testContainmentReadOnlyInWorkspace(t *testing.T) {
	f := newContainFixture(t)
	hooks := filepath.Join(f.ws, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(f.ws, ".git", "config")
	os.WriteFile(config, []byte("[core]\n"), 0o644)
	os.WriteFile(filepath.Join(hooks, "pre-commit.sample"), []byte("#!/bin/sh\n"), 0o755)
	// A hard link to a file outside the workspace.
	outside := filepath.Join(f.home, "notes")
	os.WriteFile(outside, []byte("mine\n"), 0o644)
	link := filepath.Join(f.ws, "notes")
	if err := os.Link(outside, link); err != nil {
		t.Fatal(err)
	}
	testenv.Chown(t, filepath.Dir(f.ws))
	res := runIn(t, f, `
echo evil > .git/hooks/pre-commit && echo PLANTED
echo '[core] hooksPath = /tmp' >> .git/config && echo CONFIG
rm .git/hooks/pre-commit.sample && echo REMOVED-SAMPLE
mv .git .git-old && echo MOVED-GIT
mkdir .git/hooks/sub && echo MKDIR
echo more >> notes && echo WROTE-LINK
chmod 600 notes && echo CHMOD-LINK
echo ok > fine && echo WROTE-FINE
mkdir -p .git/objects/ab && echo obj > .git/objects/ab/cd && echo WROTE-OBJECT
echo done
`, proc.Containment{ReadOnly: []string{hooks, config}, HardLinks: []string{link}})
	out := string(res.Stdout.Head)
	for _, bad := range []string{"PLANTED", "CONFIG", "REMOVED-SAMPLE", "MOVED-GIT", "MKDIR", "WROTE-LINK", "CHMOD-LINK"} {
		if strings.Contains(out, bad) {
			t.Errorf("stdout has %s:\n%s", bad, out)
		}
	}
	for _, good := range []string{"WROTE-FINE", "WROTE-OBJECT", "done"} {
		if !strings.Contains(out, good) {
			t.Errorf("stdout lacks %s:\n%s\nstderr: %s", good, out, res.Stderr.Head)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "mine\n" {
		t.Errorf("the file outside = %q", b)
	}
	if fi, _ := os.Stat(outside); fi == nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file outside: %v", fi)
	}
	if b, _ := os.ReadFile(config); string(b) != "[core]\n" {
		t.Errorf(".git/config = %q", b)
	}
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); err == nil {
		t.Error("a hook was planted")
	}
	wantBlocked(t, res.Blocked,
		proc.Blocked{Kind: "create", Target: filepath.Join(hooks, "pre-commit")},
		proc.Blocked{Kind: "write", Target: config},
		proc.Blocked{Kind: "delete", Target: filepath.Join(hooks, "pre-commit.sample")},
		proc.Blocked{Kind: "rename", Target: filepath.Join(f.ws, ".git") + " -> " + filepath.Join(f.ws, ".git-old")},
		proc.Blocked{Kind: "create", Target: filepath.Join(hooks, "sub")},
		proc.Blocked{Kind: "write", Target: link},
		proc.Blocked{Kind: "metadata", Target: link},
	)
}

// TestContainmentReadOnlyInWorkspace: inside the writable workspace,
// .git/hooks and .git/config stay read-only (no hook planted, no config
// changed, the .git directory not moved away to put another in its place)
// and a hard link to a file outside cannot be written or changed through;
// the rest of the workspace, .git/objects included, is writable.
func TestContainmentReadOnlyInWorkspace(t *testing.T) { testContainmentReadOnlyInWorkspace(t) }

func TestContainmentReadOnlyInWorkspaceAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testContainmentReadOnlyInWorkspace(t)
}

func testContainmentMetadataOutside(t *testing.T) {
	f := newContainFixture(t)
	rc := filepath.Join(f.home, ".bashrc")
	before, err := os.Stat(rc)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.ws, "run.sh"), []byte("echo\n"), 0o644)
	testenv.Chown(t, filepath.Dir(f.ws))
	res := runIn(t, f, `
chmod 777 "$HOME/.bashrc" && echo CHMOD
touch -d 2001-01-01 "$HOME/.bashrc" && echo TOUCH
chown "$(id -u)" "$HOME/.bashrc" && echo CHOWN
setfattr -n user.x -v 1 "$HOME/.bashrc" 2>/dev/null && echo XATTR
chmod +x run.sh && echo CHMOD-INSIDE
touch -d 2001-01-01 run.sh && echo TOUCH-INSIDE
`, proc.Containment{})
	out := string(res.Stdout.Head)
	for _, bad := range []string{"CHMOD\n", "TOUCH\n", "CHOWN", "XATTR"} {
		if strings.Contains(out, bad) {
			t.Errorf("stdout has %q:\n%s", bad, out)
		}
	}
	for _, good := range []string{"CHMOD-INSIDE", "TOUCH-INSIDE"} {
		if !strings.Contains(out, good) {
			t.Errorf("stdout lacks %s:\n%s\nstderr: %s", good, out, res.Stderr.Head)
		}
	}
	after, _ := os.Stat(rc)
	if after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf(".bashrc changed: %v %v -> %v %v", before.Mode(), before.ModTime(), after.Mode(), after.ModTime())
	}
	// One entry per kind and target: chmod, chown (and setfattr) count
	// under metadata; touch opens the file for writing first.
	if !hasBlocked(res.Blocked, proc.Blocked{Kind: "metadata", Target: rc}) || !hasBlocked(res.Blocked, proc.Blocked{Kind: "write", Target: rc}) {
		t.Errorf("Blocked = %+v", res.Blocked)
	}
	for _, b := range res.Blocked {
		if b.Kind == "metadata" && b.Count < 2 {
			t.Errorf("metadata blocked %d times, want chmod and chown: %+v", b.Count, b)
		}
	}
}

// TestContainmentMetadataOutside: Landlock does not restrict a file's
// mode, owner, times or attributes; the supervisor refuses those changes
// outside the writable directories, and records them.
func TestContainmentMetadataOutside(t *testing.T) { testContainmentMetadataOutside(t) }

func TestContainmentMetadataOutsideAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testContainmentMetadataOutside(t)
}

// TestContainmentPrivilegesAsRoot: a contained root script keeps only the
// capabilities that own and change files and switch users; mounting,
// loading modules and raw sockets fail.
func TestContainmentPrivilegesAsRoot(t *testing.T) {
	if !testenv.IsRoot() {
		t.Skip("needs root")
	}
	f := newContainFixture(t)
	res := runIn(t, f, `
grep CapBnd /proc/self/status
mkdir m; mount -t tmpfs none m 2>/dev/null && echo MOUNTED
python3 -c "import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)" 2>/dev/null && echo RAW
python3 -c "import ctypes; print('REBOOT', ctypes.CDLL(None, use_errno=True).reboot(0) , ctypes.get_errno())"
chown 1:1 m && echo CHOWN-INSIDE
`, proc.Containment{})
	out := string(res.Stdout.Head)
	want := fmt.Sprintf("CapBnd:\t%016x", uint64(1<<0|1<<1|1<<3|1<<4|1<<5|1<<6|1<<7|1<<10))
	if !strings.Contains(out, want) || strings.Contains(out, "MOUNTED") || strings.Contains(out, "RAW") ||
		!strings.Contains(out, "REBOOT -1 1\n") || !strings.Contains(out, "CHOWN-INSIDE") {
		t.Fatalf("stdout:\n%s\nwant %q, no mount, no raw socket, reboot EPERM; stderr %s", out, want, res.Stderr.Head)
	}
	if e := res.Contained; e == nil || !e.Privileges || !e.Admin || !strings.Contains(e.KeptCaps, "chown") {
		t.Fatalf("Contained = %+v", e)
	}
}

// TestContainmentWithoutNotification: where the kernel has no seccomp user
// notification (pretended), the network is still off (socket() itself is
// refused), nothing is observed, and a required containment refuses to
// run, naming what is missing.
func TestContainmentWithoutNotification(t *testing.T) {
	f := newContainFixture(t)
	port, stop := testenv.Listen(t)
	outside := filepath.Join(filepath.Dir(f.ws), "outside.sock")
	stopOut := testenv.ListenUnix(t, outside)
	os.Chmod(outside, 0o777)
	res := runIn(t, f, fmt.Sprintf(`
python3 -c "import socket; socket.create_connection(('127.0.0.1', %d))" 2>&1 | tail -1
python3 -c "import socket; socket.socket(socket.AF_UNIX).connect('%s')" 2>&1 | tail -1
`, port, outside), proc.Containment{NoNet: true, NoNotify: true})
	if n := stop(); n != 0 {
		t.Errorf("the listener accepted %d connections", n)
	}
	if n := stopOut(); n != 0 {
		t.Errorf("the AF_UNIX listener outside accepted %d connections", n)
	}
	e := res.Contained
	if e == nil || e.Observed || !e.Seccomp || e.StandIns || !e.Sockets || !strings.Contains(e.ObserveWhy, "turned off") || len(res.Blocked) != 0 ||
		strings.Count(string(res.Stdout.Head), "PermissionError") != 2 {
		t.Fatalf("Contained %+v, Blocked %+v, stdout %q", e, res.Blocked, res.Stdout.Head)
	}
	// With the network on, nothing keeps a connect from a socket outside.
	res = runIn(t, f, "true\n", proc.Containment{NoNotify: true})
	if e := res.Contained; e == nil || e.Sockets || !strings.Contains(e.Why, "sockets: ") {
		t.Fatalf("network on: Contained %+v", e)
	}
	path := filepath.Join(f.ws, "s.sh")
	_, err := proc.Run(context.Background(), proc.Spec{Dir: f.ws, Path: path, Timeout: 30 * time.Second,
		Containment: proc.Containment{Enabled: true, Required: true, NoNotify: true, Writable: []string{f.ws}}})
	// The first missing layer is named: where no private mount namespace
	// can be made (a chroot), the read-only mounts come first.
	want := "metadata: seccomp user notification turned off"
	if !testenv.MountNamespaces() {
		want = "mounts: "
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run = %v, want it to name %q", err, want)
	}
}

// TestContainmentForkBombAsRoot: RLIMIT_NPROC does not hold root; the
// tree's cgroup (pids.max) does, and the run records that the limit was
// hit.
func TestContainmentForkBombAsRoot(t *testing.T) {
	if !testenv.IsRoot() {
		t.Skip("needs root")
	}
	f := newContainFixture(t)
	res := runIn(t, f, `i=0; while [ $i -lt 1000 ]; do sleep 300 & i=$((i+1)); done 2>/dev/null; echo forked`,
		proc.Containment{NProc: 100})
	e := res.Contained
	if e == nil || e.CgroupPids == 0 {
		t.Skipf("no cgroup with the pids controller here: %+v", e)
	}
	var fork *proc.Blocked
	for i := range res.Blocked {
		if res.Blocked[i].Kind == "fork" {
			fork = &res.Blocked[i]
		}
	}
	// The whole tree is in the cgroup: never more of it than pids.max (a
	// cgroup v2 counts the supervisor's own threads too, a v1 one holds
	// only its thread that forks the script: joinLimits).
	if fork == nil || fork.Count == 0 || len(res.Leftovers) >= e.CgroupPids {
		t.Fatalf("fork %+v, %d leftovers, Blocked %+v", fork, len(res.Leftovers), res.Blocked)
	}
}

// TestContainmentMemoryLimit: --memory holds the script's tree (on a
// hybrid system, the v1 cgroup the supervisor's forking thread moved
// itself into): a script that fills 256 MiB under a 64 MiB limit is
// killed, the run records the limit and the kill, and a small one is not.
func TestContainmentMemoryLimit(t *testing.T) {
	f := newContainFixture(t)
	fill := `python3 -c "b = bytearray(256 << 20); print('filled', len(b))"`
	res := runIn(t, f, fill, proc.Containment{Memory: 64 << 20})
	e := res.Contained
	if e == nil || e.CgroupMemory == 0 {
		t.Skipf("no cgroup with the memory controller here: %+v", e)
	}
	if e.CgroupMemory != 64<<20 {
		t.Fatalf("CgroupMemory = %d", e.CgroupMemory)
	}
	var oom *proc.Blocked
	for i := range res.Blocked {
		if res.Blocked[i].Kind == "memory" {
			oom = &res.Blocked[i]
		}
	}
	if strings.Contains(string(res.Stdout.Head), "filled") || oom == nil || oom.Count == 0 {
		t.Fatalf("stdout %q, exit %d %s, Blocked %+v", res.Stdout.Head, res.ExitCode, res.Signal, res.Blocked)
	}
	small := runIn(t, f, `python3 -c "b = bytearray(8 << 20); print('filled', len(b))"`, proc.Containment{Memory: 64 << 20})
	if string(small.Stdout.Head) != "filled 8388608\n" {
		t.Fatalf("8 MiB under 64: stdout %q stderr %q", small.Stdout.Head, small.Stderr.Head)
	}
}

// TestContainmentOwnListenerRefused: a script may not install a seccomp
// filter with a listener of its own (it would take the watched calls
// away from the supervisor): EPERM, where uncontained the kernel gets as
// far as the missing program (EFAULT).
func TestContainmentOwnListenerRefused(t *testing.T) {
	f := newContainFixture(t)
	script := `python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
print('RC', libc.syscall(317, 1, 8, None), ctypes.get_errno())  # seccomp(SET_MODE_FILTER, NEW_LISTENER, NULL)
"`
	if runtime.GOARCH != "amd64" {
		t.Skip("the system call number is amd64's")
	}
	if out := string(runIn(t, f, script, proc.Containment{}).Stdout.Head); out != "RC -1 1\n" {
		t.Fatalf("contained: %q, want EPERM", out)
	}
	res, err := proc.Run(context.Background(), proc.Spec{Dir: f.ws, Path: filepath.Join(f.ws, "s.sh"), Timeout: 30 * time.Second})
	if err != nil || string(res.Stdout.Head) != "RC -1 14\n" {
		t.Fatalf("uncontained: %v %q, want EFAULT", err, res.Stdout.Head)
	}
}

// TestContainmentStagedHasNoCapabilitiesAsUser: a staged run's supervisor
// holds capabilities in its user namespace (as ambient ones, to mount the
// overlay); the contained script it starts has none.
func TestContainmentStagedHasNoCapabilitiesAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	f := newContainFixture(t)
	up, work := filepath.Join(filepath.Dir(f.ws), "up"), filepath.Join(filepath.Dir(f.ws), "work")
	os.Mkdir(up, 0o755)
	os.Mkdir(work, 0o755)
	path := filepath.Join(filepath.Dir(f.ws), "s.sh")
	os.WriteFile(path, []byte("#!/bin/sh\ngrep -E '^Cap(Eff|Prm|Amb|Inh)' /proc/self/status\necho x > staged\n"), 0o755)
	res, err := proc.Run(context.Background(), proc.Spec{Dir: f.ws, Path: path, Timeout: 30 * time.Second,
		Overlay:     &proc.Overlay{Lower: f.ws, Upper: up, Work: work, UserXattr: os.Geteuid() != 0},
		Containment: proc.Containment{Enabled: true, Writable: []string{f.ws}}})
	if err != nil {
		t.Skipf("no overlay here: %v", err)
	}
	out := string(res.Stdout.Head)
	if strings.Count(out, "\t0000000000000000\n") != 4 {
		t.Fatalf("capabilities of the contained staged script:\n%s\nstderr %s", out, res.Stderr.Head)
	}
	if _, err := os.Stat(filepath.Join(up, "staged")); err != nil {
		t.Fatalf("the write did not land in the stage: %v", err)
	}
	if e := res.Contained; e == nil || !e.Privileges || e.KeptCaps != "none" {
		t.Fatalf("Contained = %+v", e)
	}
}

func testContainmentMountsWithoutWatcher(t *testing.T) {
	f := newContainFixture(t)
	hooks := filepath.Join(f.ws, ".git", "hooks")
	os.MkdirAll(hooks, 0o755)
	config := filepath.Join(f.ws, ".git", "config")
	os.WriteFile(config, []byte("[core]\n"), 0o644)
	outside := filepath.Join(f.home, "notes")
	os.WriteFile(outside, []byte("mine\n"), 0o644)
	link := filepath.Join(f.ws, "notes")
	os.Link(outside, link)
	testenv.Chown(t, filepath.Dir(f.ws))
	res := runIn(t, f, `
chmod 777 "$HOME/.bashrc" 2>/dev/null && echo CHMOD
echo evil > .git/hooks/pre-commit 2>/dev/null && echo PLANTED
echo x >> .git/config 2>/dev/null && echo CONFIG
mv .git .git-old 2>/dev/null && echo MOVED-GIT
echo more >> notes 2>/dev/null && echo WROTE-LINK
ln notes notes2 2>/dev/null && echo LINKED
echo ok > fine && echo WROTE-FINE
python3 -c "import multiprocessing; multiprocessing.Semaphore(); print('SHM')"
echo done
`, proc.Containment{ReadOnly: []string{hooks, config}, HardLinks: []string{link}, NoNotify: true})
	e := res.Contained
	if e == nil || e.Observed {
		t.Fatalf("Contained %+v", e)
	}
	needMounts(t, e)
	out := string(res.Stdout.Head)
	for _, bad := range []string{"CHMOD", "PLANTED", "CONFIG", "MOVED-GIT", "WROTE-LINK", "LINKED"} {
		if strings.Contains(out, bad) {
			t.Errorf("stdout has %s:\n%s", bad, out)
		}
	}
	for _, good := range []string{"WROTE-FINE", "SHM", "done"} {
		if !strings.Contains(out, good) {
			t.Errorf("stdout lacks %s:\n%s\nstderr: %s", good, out, res.Stderr.Head)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "mine\n" {
		t.Errorf("the file outside = %q", b)
	}
}

// TestContainmentMountsWithoutWatcher: the read-only mounts hold on their
// own (the watcher turned off): no metadata change outside, no hook, no
// config change, no .git moved away, no write or new link through a hard
// link to a file outside; the workspace and a private /dev/shm are
// writable.
func TestContainmentMountsWithoutWatcher(t *testing.T) { testContainmentMountsWithoutWatcher(t) }

func TestContainmentMountsWithoutWatcherAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testContainmentMountsWithoutWatcher(t)
}

// TestContainmentMetadataRace: a script that races the watcher (one thread
// chmods a path inside the workspace while another keeps rewriting that
// path, in the same buffer, to a file outside) changes nothing outside:
// the read-only mounts refuse what the watcher let through on a path it
// read before the rewrite. (Without them, NoMounts, the race wins within
// the 20,000 tries every time it was run here: the watcher alone is best
// effort.)
func TestContainmentMetadataRace(t *testing.T) {
	f := newContainFixture(t)
	rc := filepath.Join(f.home, ".bashrc")
	os.WriteFile(filepath.Join(f.ws, "in"), []byte("x\n"), 0o644)
	testenv.Chown(t, filepath.Dir(f.ws))
	res := runIn(t, f, fmt.Sprintf(`python3 - <<'PY'
import ctypes, threading
libc = ctypes.CDLL(None, use_errno=True)
inside, outside = b"in".ljust(256, b"\0"), %q.encode().ljust(256, b"\0")
buf = ctypes.create_string_buffer(inside, 256)
stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, outside, 256)
        ctypes.memmove(buf, inside, 256)
t = threading.Thread(target=flip); t.start()
ok = 0
for i in range(20000):
    if libc.chmod(buf, 0o777) == 0:
        ok += 1
stop = True; t.join()
print("CHMODS", ok)
PY
`, rc), proc.Containment{})
	needMounts(t, res.Contained)
	fi, err := os.Stat(rc)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf(".bashrc: %v %v (stdout %q stderr %q)", fi.Mode(), err, res.Stdout.Head, res.Stderr.Head)
	}
	t.Logf("%s", res.Stdout.Head)
}

// TestContainmentIPCNamespace: a System V shared memory segment of the
// host is out of a contained script's reach (its own IPC namespace).
func TestContainmentIPCNamespace(t *testing.T) {
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o666)
	if err != nil {
		t.Skipf("no System V shared memory: %v", err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	f := newContainFixture(t)
	res := runIn(t, f, fmt.Sprintf("python3 -c \"import ctypes; l=ctypes.CDLL(None, use_errno=True); print('ATTACH', l.shmat(%d, None, 0) != -1)\"\n", id), proc.Containment{})
	needMounts(t, res.Contained)
	if got := string(res.Stdout.Head); got != "ATTACH False\n" {
		t.Fatalf("stdout %q stderr %q: the host's segment %d was reachable", got, res.Stderr.Head, id)
	}
	// Uncontained it is reachable (the check is real).
	res2, err := proc.Run(context.Background(), proc.Spec{Dir: f.ws, Path: filepath.Join(f.ws, "s.sh"), Timeout: 30 * time.Second})
	if err != nil || string(res2.Stdout.Head) != "ATTACH True\n" {
		t.Fatalf("uncontained: %v %q %q", err, res2.Stdout.Head, res2.Stderr.Head)
	}
}

// TestContainmentKillAllAsUser: kill -9 -1 from a contained script reaches
// only its own tree: the supervisor, this test process and a process of
// the same user outside the tree survive. (As a normal user only: the
// blast radius of a failure is that user's processes, this test's among
// them, which would fail it; as root it would be the machine.)
func TestContainmentKillAllAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	if testenv.IsRoot() {
		t.Skip("never as root")
	}
	bystander := exec.Command("sleep", "300")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer bystander.Process.Kill()
	f := newContainFixture(t)
	res := runIn(t, f, "sleep 300 &\nkill -9 -1\necho after\n", proc.Containment{})
	if e := res.Contained; e == nil || !e.Signals {
		t.Skipf("no signal scope here: %+v", e)
	}
	if res.SupervisorLost != "" || bystander.Process.Signal(syscall.Signal(0)) != nil {
		t.Fatalf("supervisor lost %q, bystander alive: %v", res.SupervisorLost, bystander.Process.Signal(syscall.Signal(0)))
	}
	// (Whether the script's own sleep is reported as a leftover depends on
	// how far its death got when the supervisor looked: not asserted.)
}

// TestContainmentWatcherWithoutLandlock: where neither Landlock nor the
// read-only mounts hold (pretended), the watcher refuses writes outside
// the workspace and reads of secret stores itself, and records them: a
// blocked action is never one that went through.
func TestContainmentWatcherWithoutLandlock(t *testing.T) {
	f := newContainFixture(t)
	testenv.Chown(t, filepath.Dir(f.ws))
	res := runIn(t, f, `
echo x >> "$HOME/.bashrc" && echo WROTE
cat "$HOME/.ssh/id_ed25519" && echo READ
touch "$HOME/new" && echo CREATED
echo ok > inside && echo INSIDE
`, proc.Containment{NoLandlock: true, NoMounts: true, DenyRead: []string{filepath.Join(f.home, ".ssh")}})
	if e := res.Contained; e == nil || e.Filesystem || e.Mounts || !e.Observed {
		t.Fatalf("Contained %+v", e)
	}
	out := string(res.Stdout.Head)
	if out != "INSIDE\n" {
		t.Errorf("stdout %q, want only INSIDE (stderr %s)", out, res.Stderr.Head)
	}
	if b, _ := os.ReadFile(filepath.Join(f.home, ".bashrc")); string(b) != "orig\n" {
		t.Errorf(".bashrc = %q", b)
	}
	if _, err := os.Stat(filepath.Join(f.home, "new")); err == nil {
		t.Error("a file was created outside")
	}
	wantBlocked(t, res.Blocked,
		proc.Blocked{Kind: "write", Target: filepath.Join(f.home, ".bashrc")},
		proc.Blocked{Kind: "read", Target: filepath.Join(f.home, ".ssh", "id_ed25519")},
		proc.Blocked{Kind: "create", Target: filepath.Join(f.home, "new")},
	)
}

// TestContainmentSecretRace: a script racing the watcher on a read (one
// thread opens a file of its own while another keeps rewriting the path,
// in the same buffer, to the SSH key) never reads the key: the read-only
// mounts cover the secret stores (and Landlock would refuse them where
// they do not), whatever the watcher let through.
func TestContainmentSecretRace(t *testing.T) {
	f := newContainFixture(t)
	key := filepath.Join(f.home, ".ssh", "id_ed25519")
	os.WriteFile(filepath.Join(f.ws, "in"), []byte("mine\n"), 0o644)
	testenv.Chown(t, filepath.Dir(f.ws))
	res := runIn(t, f, fmt.Sprintf(`python3 - <<'PY'
import ctypes, threading, os
libc = ctypes.CDLL(None, use_errno=True)
inside, outside = b"in".ljust(256, b"\0"), %q.encode().ljust(256, b"\0")
buf = ctypes.create_string_buffer(inside, 256)
stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, outside, 256)
        ctypes.memmove(buf, inside, 256)
t = threading.Thread(target=flip); t.start()
leaked = 0
data = ctypes.create_string_buffer(64)
for i in range(20000):
    fd = libc.open(buf, 0)
    if fd >= 0:
        n = libc.read(fd, data, 64)
        if n > 0 and b"SECRET" in data.raw[:n]:
            leaked += 1
        libc.close(fd)
stop = True; t.join()
print("LEAKED", leaked)
PY
`, key), proc.Containment{DenyRead: []string{filepath.Join(f.home, ".ssh")}})
	needMounts(t, res.Contained)
	if e := res.Contained; !e.Secrets {
		t.Fatalf("secrets not enforced: %+v", e)
	}
	if got := string(res.Stdout.Head); got != "LEAKED 0\n" {
		t.Fatalf("stdout %q stderr %q", got, res.Stderr.Head)
	}
}

// TestContainmentDenyReadAboveWorkspace: --deny-read of a directory that
// holds the workspace leaves the workspace usable (it is not covered by a
// mount) and everything else in that directory unreadable.
func TestContainmentDenyReadAboveWorkspace(t *testing.T) {
	f := newContainFixture(t)
	base := filepath.Dir(f.ws)
	os.WriteFile(filepath.Join(base, "sibling"), []byte("S\n"), 0o644)
	testenv.Chown(t, base)
	res := runIn(t, f, "echo ok > mine && cat mine\ncat ../sibling 2>/dev/null && echo READ-SIBLING\n",
		proc.Containment{DenyRead: []string{base}})
	if got := string(res.Stdout.Head); got != "ok\n" {
		t.Fatalf("stdout %q stderr %q Contained %+v", got, res.Stderr.Head, res.Contained)
	}
}

// TestContainmentDenyReadInsideWorkspace: --deny-read of a file inside the
// workspace keeps it unreadable although the workspace is writable.
func TestContainmentDenyReadInsideWorkspace(t *testing.T) {
	f := newContainFixture(t)
	secret := filepath.Join(f.ws, ".env")
	os.WriteFile(secret, []byte("TOKEN=x\n"), 0o644)
	testenv.Chown(t, filepath.Dir(f.ws))
	res := runIn(t, f, "cat .env 2>/dev/null && echo READ\necho ok\n", proc.Containment{DenyRead: []string{secret}})
	if got := string(res.Stdout.Head); got != "ok\n" {
		t.Fatalf("stdout %q stderr %q", got, res.Stderr.Head)
	}
	wantBlocked(t, res.Blocked, proc.Blocked{Kind: "read", Target: secret})
}

// testContainmentMissingHooks: a hooks directory that does not exist is
// protected as surely as one that does. The supervisor refuses its
// creation; a thread that races the supervisor (or, here, a run without
// the watcher: the race always won) gets it made, but once the script's
// whole tree is gone the supervisor removes it and records the create.
func testContainmentMissingHooks(t *testing.T, noNotify bool) {
	f := newContainFixture(t)
	git := filepath.Join(f.ws, ".git")
	os.MkdirAll(filepath.Join(git, "objects"), 0o755)
	os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n"), 0o644)
	hooks, commondir := filepath.Join(git, "hooks"), filepath.Join(git, "commondir")
	testenv.Chown(t, filepath.Dir(f.ws))
	res := runIn(t, f, `
mkdir .git/hooks 2>/dev/null && echo MADE
printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit 2>/dev/null && echo PLANTED
echo evil > .git/commondir 2>/dev/null && echo COMMONDIR
mkdir -p .git/hooks/deep/er 2>/dev/null; chmod 300 .git/hooks/deep/er .git/hooks/deep .git/hooks 2>/dev/null
echo done
`, proc.Containment{ReadOnly: []string{hooks, filepath.Join(git, "config"), commondir}, NoNotify: noNotify})
	out := string(res.Stdout.Head)
	if !strings.Contains(out, "done") {
		t.Fatalf("stdout %q stderr %q", out, res.Stderr.Head)
	}
	if !noNotify && (strings.Contains(out, "MADE") || strings.Contains(out, "PLANTED") || strings.Contains(out, "COMMONDIR")) {
		t.Errorf("the supervisor let it through: %s", out)
	}
	for _, p := range []string{hooks, commondir} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists after the run", p)
		}
		wantCreate(t, res.Blocked, p)
	}
}

func TestContainmentMissingHooks(t *testing.T) { testContainmentMissingHooks(t, false) }

func TestContainmentMissingHooksAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testContainmentMissingHooks(t, false)
}

func TestContainmentMissingHooksWithoutWatcher(t *testing.T) { testContainmentMissingHooks(t, true) }

func TestContainmentMissingHooksWithoutWatcherAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testContainmentMissingHooks(t, true)
}

// TestContainmentMissingHooksRace: a script that races the supervisor (one
// thread makes a directory while another keeps rewriting its name, in the
// same buffer, between an allowed name and .git/hooks, and plants a hook
// whenever the race is won) leaves no hooks directory behind, and the
// create is recorded.
func TestContainmentMissingHooksRace(t *testing.T) {
	f := newContainFixture(t)
	git := filepath.Join(f.ws, ".git")
	os.MkdirAll(filepath.Join(git, "objects"), 0o755)
	hooks := filepath.Join(git, "hooks")
	testenv.Chown(t, filepath.Dir(f.ws))
	res := runIn(t, f, `python3 - <<'PY'
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
allowed, hooks = b".git/hookz".ljust(64, b"\0"), b".git/hooks".ljust(64, b"\0")
buf = ctypes.create_string_buffer(allowed, 64)
stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, hooks, 64)
        ctypes.memmove(buf, allowed, 64)
t = threading.Thread(target=flip, daemon=True); t.start()
won = 0
for i in range(20000):
    if libc.mkdir(buf, 0o755) == 0:
        if os.path.isdir(".git/hooks"):
            won += 1
            try:
                open(".git/hooks/pre-commit", "w").write("#!/bin/sh\necho pwned\n")
            except OSError:
                pass
            break
        os.rmdir(".git/hookz")
stop = True; t.join()
print("WON", won, "after", i + 1, "tries")
PY
`, proc.Containment{ReadOnly: []string{hooks, filepath.Join(git, "config")}})
	t.Logf("stdout %s stderr %s", res.Stdout.Head, res.Stderr.Head)
	if _, err := os.Lstat(hooks); err == nil {
		t.Fatalf("%s exists after the run", hooks)
	}
	if strings.Contains(string(res.Stdout.Head), "WON 1") {
		wantCreate(t, res.Blocked, hooks)
	}
}

// wantCreate checks that list records a create of p (one removed after
// the run names no living process).
func wantCreate(t *testing.T, list []proc.Blocked, p string) {
	t.Helper()
	for _, b := range list {
		if b.Kind == "create" && b.Target == p && b.PID > 0 && b.Count >= 1 {
			return
		}
	}
	t.Errorf("Blocked lacks a create of %s:\n%+v", p, list)
}

// testContainmentGitPutBack: with neither the read-only mounts nor the
// watcher (nothing refuses while the script runs), what the script did to
// the read-only paths of the workspace (a hook planted into an existing
// hooks directory, which it then made unlistable; a config rewritten; a
// config.worktree made; the hooks directory replaced by a symlink in
// another git directory) is put back once its tree is gone, and recorded.
func testContainmentGitPutBack(t *testing.T) {
	f := newContainFixture(t)
	var ro []string
	before := map[string]string{}
	for _, g := range []string{".git", ".git/modules/sub"} {
		git := filepath.Join(f.ws, g)
		os.MkdirAll(filepath.Join(git, "hooks"), 0o755)
		os.MkdirAll(filepath.Join(git, "objects"), 0o755)
		os.WriteFile(filepath.Join(git, "hooks", "pre-commit.sample"), []byte("#!/bin/sh\n"), 0o755)
		os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n\tbare = false\n"), 0o644)
		ro = append(ro, filepath.Join(git, "hooks"), filepath.Join(git, "config"), filepath.Join(git, "config.worktree"))
	}
	testenv.Chown(t, filepath.Dir(f.ws))
	for _, p := range ro {
		before[p] = treeOf(t, p)
	}
	res := runIn(t, f, `
printf '#!/bin/sh\necho pwned\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout && echo PLANTED
chmod 300 .git/hooks
printf '[core]\n\tfsmonitor = evil\n' > .git/config && echo CONFIG
printf '[core]\n\thooksPath = /x\n' > .git/config.worktree && echo WORKTREE
rm -rf .git/modules/sub/hooks && ln -s ../../../evil .git/modules/sub/hooks && echo SYMLINK
echo done
`, proc.Containment{ReadOnly: ro, NoMounts: true, NoNotify: true})
	out := string(res.Stdout.Head)
	for _, want := range []string{"PLANTED", "CONFIG", "WORKTREE", "SYMLINK", "done"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the script did not get %s through (nothing refuses here): %s %s", want, out, res.Stderr.Head)
		}
	}
	for _, p := range ro {
		if got := treeOf(t, p); got != before[p] {
			t.Errorf("%s after the run:\n%s\nbefore:\n%s", p, got, before[p])
		}
	}
	for _, p := range []string{filepath.Join(f.ws, ".git", "hooks"), filepath.Join(f.ws, ".git", "config"), filepath.Join(f.ws, ".git", "modules", "sub", "hooks")} {
		found := false
		for _, b := range res.Blocked {
			found = found || b.Kind == "write" && b.Target == p
		}
		if !found {
			t.Errorf("no blocked write of %s: %+v", p, res.Blocked)
		}
	}
	wantCreate(t, res.Blocked, filepath.Join(f.ws, ".git", "config.worktree"))
}

// treeOf describes p and what lies below it: type, mode, content.
func treeOf(t *testing.T, root string) string {
	var b strings.Builder
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", p, err)
			return nil
		}
		data, _ := os.ReadFile(p)
		if !fi.Mode().IsRegular() {
			data = nil
		}
		fmt.Fprintf(&b, "%s %v %q\n", p, fi.Mode(), data)
		return nil
	})
	return b.String()
}

func TestContainmentGitPutBack(t *testing.T) { testContainmentGitPutBack(t) }

func TestContainmentGitPutBackAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testContainmentGitPutBack(t)
}

// TestContainmentSecretReadWays: a read of a secret store is recorded,
// under the file's own path, whichever way the script names it: the
// watcher's walk without symlinks (openPath) takes a plain absolute path
// and one with "..", and must hand every other way to the full walk — a
// symlinked directory or file (also one outside the workspace), a
// relative path, /proc's magic links, a missing name behind a symlink, a
// directory of the workspace read from and then replaced by a symlink.
// With the layers (the mounts cover the store: every name in it is
// missing), with Landlock alone (the files are there), and with the
// watcher alone (it refuses the reads itself).
func TestContainmentSecretReadWays(t *testing.T) {
	for _, c := range []struct {
		name   string
		layers proc.Containment
	}{
		{"layers", proc.Containment{}},
		{"landlock", proc.Containment{NoMounts: true}},
		{"watcher only", proc.Containment{NoLandlock: true, NoMounts: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newContainFixture(t)
			ssh, base := filepath.Join(f.home, ".ssh"), filepath.Dir(f.ws)
			for _, i := range []int{1, 2, 3, 4, 5, 6, 9} {
				os.WriteFile(filepath.Join(ssh, "k"+strconv.Itoa(i)), []byte("SECRET-KEY\n"), 0o644)
			}
			os.Symlink(ssh, filepath.Join(f.ws, "sshlink"))
			os.Symlink(filepath.Join(ssh, "k5"), filepath.Join(f.ws, "k5link"))
			secret := filepath.Join(base, "secret.txt")
			os.WriteFile(secret, []byte("SECRET-KEY\n"), 0o644)
			os.Symlink("secret.txt", filepath.Join(base, "slink"))
			testenv.Chown(t, base)
			c.layers.DenyRead = []string{ssh, secret}
			res := runIn(t, f, `
cat "$HOME/.ssh/k1"
cat "$PWD/sshlink/k2"
cat "$PWD/../home/.ssh/k3"
cat ../home/.ssh/k4
cat "$PWD/k5link"
cat "/proc/self/root$HOME/.ssh/k6"
cat "$HOME/.ssh/k7"
cat "$PWD/sshlink/k8"
cat "$HOME/.ssh/k1"
cat "$(dirname "$PWD")/slink"
mkdir d && : > d/k9 && cat "$PWD/d/k9" && rm -r d && ln -s "$HOME/.ssh" d
cat "$PWD/d/k9"
echo done
`, c.layers)
			if out := string(res.Stdout.Head); out != "done\n" {
				t.Errorf("stdout %q, want only done (stderr %s)", out, res.Stderr.Head)
			}
			for i := 1; i <= 8; i++ {
				if i == 5 && c.name == "layers" {
					// Under the mounts k5 is not there: the link dangles and
					// names itself (as before the walk without symlinks).
					continue
				}
				wantBlocked(t, res.Blocked, proc.Blocked{Kind: "read", Target: filepath.Join(ssh, "k"+strconv.Itoa(i))})
			}
			wantBlocked(t, res.Blocked, proc.Blocked{Kind: "read", Target: secret},
				proc.Blocked{Kind: "read", Target: filepath.Join(ssh, "k9")})
		})
	}
}
