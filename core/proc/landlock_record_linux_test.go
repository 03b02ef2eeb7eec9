package proc_test

import (
	"fmt"
	"os"
	"path/filepath"
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
	// As root the supervisor follows the gate's magic links itself; from
	// a user namespace it may not (nor may the script), and the gate reads
	// them: either way the finding names the file.
	wantBlocked(t, res.Blocked, proc.Blocked{Kind: "write", Target: bashrc})
	planted := filepath.Join(cwd, "planted")
	if !hasBlocked(res.Blocked, proc.Blocked{Kind: "create", Target: planted}) && !hasBlocked(res.Blocked, proc.Blocked{Kind: "write", Target: planted}) {
		t.Errorf("Blocked lacks the create (or write) of %s: %+v", planted, res.Blocked)
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
