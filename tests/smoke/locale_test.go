package smoke

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakefileLocale checks the locale the Makefile exports to every build
// and test command: it must exist on a fresh machine, or perl, GTK and
// others print locale warnings (and the desktop app's end up in reports).
// It asks make for the values and runs locale and perl with them.
func TestMakefileLocale(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	makefile, err := filepath.Abs("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	show := exec.Command(mk, "-s", "--no-print-directory", "-f", makefile, "--eval",
		"diffgate-show-locale:\n\t@echo \"LANG=$$LANG\"; echo \"LC_ALL=$$LC_ALL\"", "diffgate-show-locale")
	show.Dir = t.TempDir()
	out, err := show.CombinedOutput()
	if err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, "LANG=") && !strings.HasPrefix(l, "LC_ALL=") {
			t.Fatalf("make printed %q", l)
		}
		env = append(env, l)
	}
	if env[1] == "LANG=" {
		t.Fatalf("the Makefile exports no LANG: %q", env)
	}
	for _, args := range [][]string{{"locale"}, {"perl", "-e", "1"}} {
		if _, err := exec.LookPath(args[0]); err != nil {
			t.Logf("no %s", args[0])
			continue
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("%s with the Makefile's %q: %v\n%s", strings.Join(args, " "), env[1:], err, stderr.String())
		}
	}
}
