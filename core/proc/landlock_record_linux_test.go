package proc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/internal/testenv"
)

// testLandlockRefusalsRecorded: writes that Landlock refuses without the
// path naming a place outside — through the gate's /proc/PID/root and
// /proc/PID/cwd (the gate is the script's grandparent), and a hard link
// from outside into the workspace (EXDEV) — are recorded.
func testLandlockRefusalsRecorded(t *testing.T, c proc.Containment) {
	f := newContainFixture(t)
	cwd := t.TempDir()
	if testenv.InUserChild() {
		cwd = f.home
	}
	t.Chdir(cwd)
	bashrc := filepath.Join(f.home, ".bashrc")
	res := runIn(t, f, fmt.Sprintf(`gate=$(awk '/^PPid/{print $2}' /proc/$PPID/status)
echo gate=$gate
echo x >> /proc/$gate/root%s && echo WROTE-ROOT
echo x > /proc/$gate/cwd/planted && echo WROTE-CWD
ln %s linked && echo LINKED
echo done
`, bashrc, bashrc), c)
	out := string(res.Stdout.Head)
	if !strings.Contains(out, "done") {
		t.Fatalf("stdout %q stderr %q", out, res.Stderr.Head)
	}
	for _, bad := range []string{"WROTE-ROOT", "WROTE-CWD", "LINKED"} {
		if strings.Contains(out, bad) {
			t.Errorf("stdout has %s", bad)
		}
	}
	if b, _ := os.ReadFile(bashrc); string(b) != "orig\n" {
		t.Errorf(".bashrc = %q", b)
	}
	if _, err := os.Lstat(filepath.Join(cwd, "planted")); err == nil {
		t.Error("planted in the gate's working directory")
	}
	// As root the supervisor follows the gate's magic links and records
	// the file; from a user namespace it may not (nor may the script) and
	// records the path as named.
	gate := "/proc/" + strconv.Itoa(os.Getpid())
	for _, alt := range [][2]proc.Blocked{
		{{Kind: "write", Target: bashrc}, {Kind: "write", Target: gate + "/root" + bashrc}},
		{{Kind: "create", Target: filepath.Join(cwd, "planted")}, {Kind: "write", Target: gate + "/cwd/planted"}},
	} {
		if !hasBlocked(res.Blocked, alt[0]) && !hasBlocked(res.Blocked, alt[1]) {
			t.Errorf("Blocked lacks %+v or %+v: %+v", alt[0], alt[1], res.Blocked)
		}
	}
	wantBlocked(t, res.Blocked, proc.Blocked{Kind: "link", Target: bashrc + " -> " + filepath.Join(f.ws, "linked"), Op: "linkat"})
}

func TestLandlockRefusalsRecorded(t *testing.T) { testLandlockRefusalsRecorded(t, proc.Containment{}) }

func TestLandlockRefusalsRecordedAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testLandlockRefusalsRecorded(t, proc.Containment{})
}

// Without Landlock and the mounts the watcher refuses them itself.
func TestLandlockRefusalsRecordedWatcherOnly(t *testing.T) {
	testLandlockRefusalsRecorded(t, proc.Containment{NoLandlock: true, NoMounts: true})
}

func TestLandlockRefusalsRecordedWatcherOnlyAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testLandlockRefusalsRecorded(t, proc.Containment{NoLandlock: true, NoMounts: true})
}
