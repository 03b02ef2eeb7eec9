//go:build unix

package assets

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDemoScript runs demo.sh (without the gate) and checks it does what the
// demo promises: an allowed log write, a config edit, a chmod, a deletion.
func TestDemoScript(t *testing.T) {
	d, err := NewDemo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(d.Script)
	cmd.Dir = d.Workspace
	// Its own process group, so the leftover "sleep 300" can be killed by
	// group id; output is discarded so the sleep holds no pipe of ours.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	if err := cmd.Wait(); err != nil {
		t.Fatalf("demo.sh: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(d.Workspace, "logs/run.log")); err != nil || !strings.Contains(string(b), "demo run ok") {
		t.Errorf("logs/run.log = %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(d.Workspace, "config.json")); !strings.Contains(string(b), `"debug": true`) {
		t.Errorf("config.json not edited: %s", b)
	}
	if st, _ := os.Stat(filepath.Join(d.Workspace, "src/app.py")); st.Mode().Perm()&0o100 == 0 {
		t.Error("src/app.py not made executable")
	}
	if _, err := os.Stat(filepath.Join(d.Workspace, "build.lock")); !os.IsNotExist(err) {
		t.Error("build.lock not removed")
	}
}
