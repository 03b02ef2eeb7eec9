package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestProcLinks: the gate reads the /proc magic links that a blocked
// action's target goes through, and leaves every other target alone.
func TestProcLinks(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	self := "/proc/" + strconv.Itoa(os.Getpid())
	fd := self + "/fd/" + strconv.Itoa(int(f.Fd()))
	for _, c := range []struct{ kind, in, want string }{
		{kindWrite, self + "/root/home/u/.bashrc", "/home/u/.bashrc"},
		{kindWrite, self + "/root", "/"},
		{kindCreate, self + "/cwd/planted", filepath.Join(dir, "planted")},
		{kindMetadata, fd + "/x", filepath.Join(dir, "x")},
		{kindLink, "/etc/passwd -> " + self + "/cwd/l", "/etc/passwd -> " + filepath.Join(dir, "l")},
		{kindWrite, self + "/rootx/a", self + "/rootx/a"},
		{kindWrite, "/proc/12x/root/a", "/proc/12x/root/a"},
		{kindWrite, "/proc/999999999/root/a", "/proc/999999999/root/a"},
		{kindWrite, self + "/environ", self + "/environ"},
		{kindWrite, "/tmp/a", "/tmp/a"},
		{kindNet, self + "/root/s.sock", self + "/root/s.sock"},
	} {
		bs := []Blocked{{Kind: c.kind, Target: c.in}}
		procLinks{}.apply(bs)
		if bs[0].Target != c.want {
			t.Errorf("%s %s: %s, want %s", c.kind, c.in, bs[0].Target, c.want)
		}
	}
}
