package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestAsUserRunsUnprivileged(t *testing.T) {
	if AsUser(t) {
		return
	}
	if os.Geteuid() == 0 {
		t.Fatal("still root")
	}
	// A 0700 root directory is out of reach: the permission bug root hides.
	if IsRoot() {
		t.Fatal("IsRoot in the child")
	}
	if _, err := os.ReadDir("/root"); err == nil {
		t.Skip("/root readable for this user; nothing to show")
	}
}

func TestUserTempDirAndCmd(t *testing.T) {
	dir := UserTempDir(t)
	cmd := exec.Command("sh", "-c", "id -u; echo x > f")
	cmd.Dir = dir
	UserCmd(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if IsRoot() && strings.TrimSpace(string(out)) != "65534" {
		t.Fatalf("uid %q, want 65534", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); err != nil {
		t.Fatal(err)
	}
}
