package main

// Pins containment as seen from the CLI, as root and as a normal user: a
// contained script cannot write ~/.bashrc (a fixture HOME), read
// ~/.ssh/id_ed25519, connect to a listener on 127.0.0.1 or see secrets in
// its environment; the report and the stderr summary say what was
// enforced; --contain=on without a layer exits 2 naming it.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
)

const containCLIScript = `#!/bin/sh
echo x >> "$HOME/.bashrc" && echo WROTE-BASHRC
cat "$HOME/.ssh/id_ed25519" && echo READ-SSH
/usr/bin/python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])))" "$1" 2>/dev/null && echo CONNECTED
curl -s -m 10 -o /dev/null "http://127.0.0.1:$1/"; [ $? = 7 ] || echo CONNECTED-CURL # 7: could not connect
echo "secret=${DG_API_TOKEN-unset} passed=${DG_PASSED-unset} set=${DG_SET-unset} named=${DG_TEST_KEY-unset}"
echo ok > out
`

// containCLI runs the CLI binary on a workspace in /tmp with a fixture HOME
// and a listener on 127.0.0.1; it returns the exit code, stdout, stderr,
// the fixture HOME and the listener's connection count.
func containCLI(t *testing.T, env []string, flags ...string) (code int, out, errs, home string, accepted int64, rep *report.Report) {
	t.Helper()
	bin := testenv.CLI(t)
	// Directly in /tmp: the deny-read rules cannot allow the siblings in
	// a directory the user may not list (testenv's 0711 parents).
	base, err := os.MkdirTemp("/tmp", "dg-contain-cli-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	for _, d := range []string{filepath.Join(home, ".ssh"), ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("orig\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("SECRET-KEY\n"), 0o600)
	sh := filepath.Join(base, "s.sh")
	os.WriteFile(sh, []byte(containCLIScript), 0o755)
	port, stop := testenv.Listen(t)
	js := filepath.Join(base, "r.json")
	args := append([]string{"run", "--workspace", ws, "--no-history", "--allow", "out", "--report", js}, flags...)
	cmd := exec.Command(bin, append(args, "--", sh, strconv.Itoa(port))...)
	cmd.Env = append(os.Environ(), append([]string{"HOME=" + home, "DG_API_TOKEN=leak", "DG_PASSED=p", "DG_TEST_KEY=k"}, env...)...)
	var ob, eb strings.Builder
	cmd.Stdout, cmd.Stderr = &ob, &eb
	err = cmd.Run()
	accepted = stop()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(js); err == nil {
		if rep, err = report.Parse(data); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "orig\n" && code != 2 && rep != nil && rep.Containment.Contained {
		t.Errorf(".bashrc = %q after a contained run", b)
	}
	return code, ob.String(), eb.String(), home, accepted, rep
}

func testRunContained(t *testing.T) {
	code, out, errs, home, accepted, rep := containCLI(t, nil, "--env", "DG_PASSED", "--env", "DG_SET=s", "--env", "DG_TEST_KEY")
	// Each blocked action is a finding: a BLOCKED line, and the run fails.
	if code != 1 || rep == nil {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	for _, want := range []string{"BLOCKED write " + filepath.Join(home, ".bashrc") + "\n", "BLOCKED read " + filepath.Join(home, ".ssh", "id_ed25519") + "\n",
		"BLOCKED net 127.0.0.1:" + rep.Script.Args[0]} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != strings.Count(out, "BLOCKED ") || n != len(rep.Blocked) ||
		!strings.Contains(strings.Join(rep.Reasons, ","), fmt.Sprintf("%d blocked actions", n)) {
		t.Errorf("stdout:\n%s\nreasons %q, blocked %+v", out, rep.Reasons, rep.Blocked)
	}
	for _, bad := range []string{"WROTE-BASHRC", "READ-SSH", "SECRET-KEY", "CONNECTED", "leak"} {
		if strings.Contains(errs, bad) {
			t.Errorf("the script's output has %s:\n%s", bad, errs)
		}
	}
	if !strings.Contains(errs, "secret=unset passed=p set=s named=k") {
		t.Errorf("environment: stderr %s", errs)
	}
	if accepted != 0 {
		t.Errorf("the listener accepted %d connections", accepted)
	}
	c := rep.Containment
	if c == nil || c.Mode != "auto" || c.LandlockABI < 6 || !c.Observed || c.Why != "" {
		t.Fatalf("containment = %+v", c)
	}
	// Every layer, but those this machine cannot have: as root, the limits
	// where no cgroup with the pids controller can be made (RLIMIT_NPROC
	// does not hold root); the read-only mounts where no private mount
	// namespace can be made (a chroot, restricted user namespaces).
	for _, l := range c.Missing() {
		switch {
		case l.Name == "limits" && os.Geteuid() == 0 && strings.Contains(l.Why, "RLIMIT_NPROC does not hold root"):
		case (l.Name == "metadata" || l.Name == "workspace" || l.Name == "ipc") && !testenv.MountNamespaces():
		default:
			t.Errorf("layer %s missing: %s", l.Name, l.Why)
		}
	}
	if len(c.Missing()) == 0 && (!c.Contained || !strings.Contains(errs, "\ncontained: landlock v")) {
		t.Fatalf("containment %+v, stderr %s", c, errs)
	}
	if len(c.Missing()) > 0 && !strings.Contains(errs, "NOT CONTAINED: ") {
		t.Fatalf("missing layers and no NOT CONTAINED line: stderr %s", errs)
	}
	port := rep.Script.Args[0]
	for _, want := range []report.Blocked{
		{Kind: "write", Target: filepath.Join(home, ".bashrc")},
		{Kind: "read", Target: filepath.Join(home, ".ssh", "id_ed25519")},
		{Kind: "net", Target: "127.0.0.1:" + port},
	} {
		found := false
		for _, b := range rep.Blocked {
			found = found || b.Kind == want.Kind && b.Target == want.Target && b.PID > 0 && b.Count > 0
		}
		if !found {
			t.Errorf("the report's blocked list lacks %s %s: %+v", want.Kind, want.Target, rep.Blocked)
		}
	}
}

func TestRunContained(t *testing.T) { testRunContained(t) }

func TestRunContainedAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testRunContained(t)
}

// TestRunContainOff is the control: uncontained, the same script writes
// ~/.bashrc, reads the key, connects and sees the secret, and the summary
// says NOT CONTAINED; the watch outside the workspace catches the write to
// ~/.bashrc, which fails the run.
func TestRunContainOff(t *testing.T) {
	code, out, errs, home, accepted, rep := containCLI(t, nil, "--contain=off")
	if code != 1 || out != "OUTSIDE changed "+filepath.Join(home, ".bashrc")+" (size 5 B -> 7 B)\n" ||
		accepted == 0 || rep == nil || rep.Containment == nil || rep.Containment.Mode != "off" {
		t.Fatalf("exit %d accepted %d\nstdout %s\nstderr %s", code, accepted, out, errs)
	}
	for _, want := range []string{"WROTE-BASHRC", "READ-SSH", "CONNECTED", "CONNECTED-CURL", "secret=leak", "NOT CONTAINED: --contain=off"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %s:\n%s", want, errs)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "orig\nx\n" {
		t.Errorf(".bashrc = %q", b)
	}
}

// TestRunContainOnMissingLayer: with Landlock pretended absent,
// --contain=on exits 2 with one line naming it and the script never runs;
// --contain=auto runs it and says NOT CONTAINED.
func TestRunContainOnMissingLayer(t *testing.T) {
	code, out, errs, home, accepted, rep := containCLI(t, []string{"DIFFGATE_TEST_NO_LANDLOCK=1"}, "--contain=on")
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "landlock") || rep != nil || accepted != 0 {
		t.Fatalf("exit %d accepted %d\nstdout %s\nstderr %s", code, accepted, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "orig\n" {
		t.Errorf(".bashrc = %q: the script ran", b)
	}
	// Without Landlock the read-only mounts still stop the write to
	// ~/.bashrc (a blocked action, which fails the run); without them and
	// the watcher too, it goes through, and the watch outside the
	// workspace catches it.
	code, out, errs, home, _, rep = containCLI(t, []string{"DIFFGATE_TEST_NO_LANDLOCK=1"})
	if code != 1 || !strings.Contains(out, "BLOCKED write "+filepath.Join(home, ".bashrc")+"\n") || strings.Contains(out, "OUTSIDE") ||
		rep == nil || rep.Containment.Contained || !strings.Contains(errs, "NOT CONTAINED: filesystem (landlock: ") {
		t.Fatalf("auto without landlock: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	code, out, errs, home, _, _ = containCLI(t, []string{"DIFFGATE_TEST_NO_LANDLOCK=1", "DIFFGATE_TEST_NO_MOUNTS=1", "DIFFGATE_TEST_NO_NOTIFY=1"})
	if code != 1 || !strings.Contains(out, "OUTSIDE changed "+filepath.Join(home, ".bashrc")+" (size 5 B -> 7 B)\n") {
		t.Fatalf("auto without landlock, mounts or watcher: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	// The other layers a test can take away: the watcher (seccomp user
	// notification) and the read-only mounts.
	// (The first missing layer is named: where no private mount namespace
	// can be made, a chroot, that is the read-only mounts.)
	noNotify := "seccomp user notification"
	if !testenv.MountNamespaces() {
		noNotify = "mounts: "
	}
	for _, tc := range []struct{ env, word string }{
		{"DIFFGATE_TEST_NO_NOTIFY=1", noNotify},
		{"DIFFGATE_TEST_NO_MOUNTS=1", "mounts: "},
	} {
		code, out, errs, home, accepted, rep := containCLI(t, []string{tc.env}, "--contain=on")
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, tc.word) || rep != nil || accepted != 0 {
			t.Fatalf("%s: exit %d accepted %d\nstdout %s\nstderr %s", tc.env, code, accepted, out, errs)
		}
		if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "orig\n" {
			t.Errorf("%s: .bashrc = %q: the script ran", tc.env, b)
		}
	}
}

// TestRunContainedGitHooks: in a git repository of the workspace (here
// one without a hooks directory yet), a contained script cannot plant a
// hook or change .git/config, and the run says so; with --writable .git
// it can (and the diff shows it).
func TestRunContainedGitHooks(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".git", "objects"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644)
	sh := filepath.Join(t.TempDir(), "s.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\nmkdir -p .git/hooks && printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit\necho '[alias] st = !evil' >> .git/config\necho ok > out\n"), 0o755)
	js := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", "out", "--report", js, "--", sh)
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil || code == 0 && strings.Contains(out, "ADDED .git/hooks") {
		t.Fatalf("a hook was planted: exit %d stdout %q stderr %q", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(b) != "[core]\n" {
		t.Fatalf(".git/config = %q", b)
	}
	data, _ := os.ReadFile(js)
	rep, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{filepath.Join(ws, ".git", "hooks"): false, filepath.Join(ws, ".git", "config"): false}
	for _, b := range rep.Blocked {
		if _, ok := want[b.Target]; ok {
			want[b.Target] = true
		}
	}
	for p, seen := range want {
		if !seen {
			t.Errorf("not blocked: %s (%+v)", p, rep.Blocked)
		}
	}
	code, out, errs = cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", "out", "--writable", ".git", "--", sh)
	if code != 1 || !strings.Contains(out, "ADDED .git/hooks/pre-commit") || !strings.Contains(out, "CHANGED .git/config") {
		t.Fatalf("--writable .git: exit %d stdout %q stderr %q", code, out, errs)
	}
}
