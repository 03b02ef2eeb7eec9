// Package testenv holds what tests across the module share: running a test
// again as an unprivileged user (root hides permission bugs) and building the
// CLI binary once per test process.
package testenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// childEnv marks the re-executed test process started by AsUser.
const childEnv = "DIFFGATE_TEST_AS_USER"

// UID and GID of the unprivileged user that tests drop to when they run as root
// (nobody/nogroup on Debian).
const (
	UID = 65534
	GID = 65534
)

// IsRoot reports whether the test process runs as root.
func IsRoot() bool { return os.Geteuid() == 0 }

// AsUser makes the calling test run as an unprivileged user. As root it runs
// the test again in a copy of the test binary as UID/GID, fails t with the
// child's output when the child fails, and returns true: the caller returns at
// once. In that child, or when the process is not root to begin with, it
// returns false and the test body runs here, as a normal user.
//
//	func TestXAsUser(t *testing.T) {
//		if testenv.AsUser(t) {
//			return
//		}
//		testX(t) // runs as uid 65534
//	}
func AsUser(t *testing.T) bool {
	t.Helper()
	if !IsRoot() {
		return false
	}
	if os.Getenv(childEnv) != "" {
		t.Fatalf("testenv: %s set but still root", childEnv)
	}
	bin := userCopyOfTestBinary(t)
	home := UserTempDir(t)
	var pat []string
	for _, part := range strings.Split(t.Name(), "/") {
		pat = append(pat, "^"+regexpQuote(part)+"$")
	}
	cmd := exec.Command(bin, "-test.run="+strings.Join(pat, "/"), "-test.count=1", "-test.v", "-test.timeout=10m")
	cmd.Dir = home
	cmd.Env = append(filteredEnv(), childEnv+"=1", "HOME="+home, "TMPDIR="+home,
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	cmd.Env = append(cmd.Env, builtEnv()...) // the child cannot build them as UID
	UserCmd(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") && !strings.Contains(string(out), "--- SKIP") {
		t.Fatalf("as uid %d: %v\n%s", UID, err, out)
	}
	if strings.Contains(string(out), "--- SKIP") && !strings.Contains(string(out), "--- PASS") {
		t.Skipf("as uid %d: skipped in the child:\n%s", UID, out)
	}
	t.Logf("ran as uid %d:\n%s", UID, out)
	return true
}

// SelfAndUser runs body as the current user ("self") and, when that is
// root, again as UID ("user", through AsUser).
func SelfAndUser(t *testing.T, body func(*testing.T)) {
	t.Helper()
	t.Run("self", body)
	if IsRoot() || InUserChild() {
		t.Run("user", func(t *testing.T) {
			if AsUser(t) {
				return
			}
			body(t)
		})
	}
}

// InUserChild reports whether this is the test process AsUser re-executed
// as UID (so a test can run its unprivileged variant there).
func InUserChild() bool { return os.Getenv(childEnv) != "" }

// UserCmd makes cmd run as UID/GID when the test process is root; otherwise
// it leaves cmd as it is.
func UserCmd(cmd *exec.Cmd) {
	if !IsRoot() {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = newSysProcAttr()
	}
	setCredential(cmd.SysProcAttr, UID, GID)
}

// UserTempDir is t.TempDir() made reachable and owned by UID/GID when root
// (t.TempDir's parents are 0700 root-owned, so it is created under a 0711
// directory of its own instead).
func UserTempDir(t *testing.T) string {
	t.Helper()
	if !IsRoot() {
		return t.TempDir()
	}
	parent, err := os.MkdirTemp("", "diffgate-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o711); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Chown(t, dir)
	return dir
}

// Chown gives path, and everything below it, to UID/GID when root.
func Chown(t *testing.T, path string) {
	t.Helper()
	if !IsRoot() {
		return
	}
	err := filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, UID, GID)
	})
	if err != nil {
		t.Fatal(err)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// userCopyOfTestBinary copies the test binary where UID can execute it (go
// test builds it in a 0700 directory).
func userCopyOfTestBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "diffgate-testbin-")
		if err != nil {
			binErr = err
			return
		}
		os.Chmod(dir, 0o755)
		binPath = filepath.Join(dir, filepath.Base(os.Args[0]))
		binErr = copyFile(os.Args[0], binPath, 0o755)
	})
	if binErr != nil {
		t.Fatalf("testenv: copy test binary: %v", binErr)
	}
	return binPath
}

// cliEnv passes the CLI built by the parent to an AsUser child.
const cliEnv = "DIFFGATE_TEST_CLI"

// int80Env passes the int80 helper built by the parent to an AsUser child.
const int80Env = "DIFFGATE_TEST_INT80"

// binary is one program built once per test process.
type binary struct {
	once sync.Once
	path string
	err  error
}

// built maps an environment variable (cliEnv, int80Env) to its *binary;
// AsUser passes the paths of those built to the child.
var built sync.Map

// buildOnce builds package pkg (relative to the module root, CGO_ENABLED=0)
// once per test process into a directory every user can read, and returns
// the binary's path; in an AsUser child, the parent's binary named by env.
func buildOnce(t *testing.T, pkg, env string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" && os.Getenv(childEnv) != "" {
		return p
	}
	v, _ := built.LoadOrStore(env, &binary{})
	b := v.(*binary)
	b.once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			b.err = err
			return
		}
		dir, err := os.MkdirTemp("", "diffgate-bin-")
		if err != nil {
			b.err = err
			return
		}
		os.Chmod(dir, 0o755)
		path := filepath.Join(dir, filepath.Base(pkg))
		// With the test hooks (DIFFGATE_TEST_*), which a release build
		// lacks (cmd/diffgate/testhooks_*.go).
		cmd := exec.Command("go", "build", "-tags", "testhooks", "-o", path, pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
			return
		}
		b.path = path
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// builtEnv is the environment that hands the binaries built so far to an
// AsUser child (which cannot build them as UID).
func builtEnv() []string {
	var env []string
	built.Range(func(k, v any) bool {
		if b := v.(*binary); b.path != "" {
			env = append(env, k.(string)+"="+b.path)
		}
		return true
	})
	return env
}

// CLI builds cmd/diffgate once per test process (with -tags testhooks)
// and returns the binary's path. A test that needs the CLI as UID calls
// CLI before AsUser: the child uses the parent's binary.
func CLI(t *testing.T) string {
	t.Helper()
	return buildOnce(t, "./cmd/diffgate", cliEnv)
}

// Int80 builds the int80 helper (testdata/int80: system calls through the
// i386 entry, INT $0x80, and x32 from a 64-bit process) once per test
// process and returns its path; call it before AsUser, as CLI. It skips t
// where the helper cannot run (not linux/amd64) and where the kernel has
// no i386 entry (the helper's getpid through it fails).
func Int80(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the int80 helper is for linux/amd64")
	}
	p := buildOnce(t, "./internal/testenv/testdata/int80", int80Env)
	out, err := exec.Command(p, "getpid").Output()
	if err != nil || !strings.HasPrefix(string(out), "getpid ") || strings.HasPrefix(string(out), "getpid -") {
		t.Skipf("the kernel has no i386 system call entry (ia32_emulation): %v %q", err, out)
	}
	return p
}

// moduleRoot finds the directory of go.mod from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testenv: no go.mod above the working directory")
		}
		dir = parent
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// filteredEnv is the environment without the variables that would point the
// child at root's directories.
func filteredEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "GOCOVERDIR", childEnv, cliEnv, int80Env:
			continue
		}
		env = append(env, kv)
	}
	return env
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

var (
	nsOnce sync.Once
	nsOK   bool
)

// MountNamespaces reports whether this machine lets the calling user make
// a mount namespace (as a normal user, inside a user namespace) whose
// mount tree can be made private: what a contained run's read-only mounts
// and a staged run's overlay need. A chroot (the fresh-machine check) or
// restricted user namespaces (Ubuntu 24.04) say no; tests then accept
// those layers missing, and only then. The probe is util-linux's unshare,
// independent of the code under test.
func MountNamespaces() bool {
	nsOnce.Do(func() {
		args := []string{"--mount", "--propagation", "private", "true"}
		if !IsRoot() {
			args = append([]string{"--user", "--map-root-user"}, args...)
		}
		nsOK = exec.Command("unshare", args...).Run() == nil
	})
	return nsOK
}
