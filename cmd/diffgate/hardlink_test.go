package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/internal/testenv"
)

// testRunHardlinkEscape pins the hardlink-escape lines on real hard links:
// a file outside the workspace linked in before the run and written
// through (contained: through or blocked, see below), one the script links
// in (uncontained: Landlock refuses a link from outside), and two names
// inside the workspace, which are no risk.
// allowlist suggest names the risk, and only its entry allows the change.
func testRunHardlinkEscape(t *testing.T) {
	ws, sh := fixture(t, `echo more >> data/x
ln ../outside/y data/y 2>/dev/null
ln data/a data/b`)
	out := filepath.Join(filepath.Dir(ws), "outside")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	reset := func() {
		t.Helper()
		os.RemoveAll(out)
		os.RemoveAll(filepath.Join(ws, "data"))
		must(os.MkdirAll(out, 0o755))
		must(os.Mkdir(filepath.Join(ws, "data"), 0o755))
		must(os.WriteFile(filepath.Join(out, "x"), []byte("outside x\n"), 0o644))
		must(os.WriteFile(filepath.Join(out, "y"), []byte("outside y\n"), 0o644))
		must(os.WriteFile(filepath.Join(ws, "data", "a"), []byte("a\n"), 0o644))
		must(os.Link(filepath.Join(out, "x"), filepath.Join(ws, "data", "x")))
	}
	// Contained, the write through the link is refused (Landlock checks
	// paths, so the gate hands the supervisor diff.HardlinkEscapes: the
	// read-only mounts and the watcher refuse it) and recorded; the link
	// from outside is refused too (Landlock: EXDEV).
	t.Run("contained", func(t *testing.T) {
		reset()
		code, stdout, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--", sh)
		var changes, blocked []string
		for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
			if strings.HasPrefix(l, "BLOCKED ") {
				blocked = append(blocked, l)
			} else {
				changes = append(changes, l)
			}
		}
		b, _ := os.ReadFile(filepath.Join(out, "x"))
		if code != 1 || string(b) != "outside x\n" || !slices.Equal(changes, []string{"ADDED data/b"}) ||
			!slices.Contains(blocked, "BLOCKED write "+filepath.Join(ws, "data", "x")) {
			t.Fatalf("outside x = %q, exit %d stdout:\n%s\nstderr %s", b, code, stdout, errs)
		}
	})
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"uncontained", []string{"--contain=off", "--no-watch"}, "ADDED data/b\n" +
			"CHANGED data/x (hardlink-escape: 2 links, 1 in the workspace, allow with hardlink-escape:data/x)\n" +
			"ADDED data/y (hardlink-escape: 2 links, 1 in the workspace, allow with hardlink-escape:data/y)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset()
			db := filepath.Join(t.TempDir(), "h.db")
			args := append([]string{"run", "--workspace", ws, "--db", db}, tc.flags...)
			code, stdout, errs := cliRun(t, append(args, "--", sh)...)
			if code != 1 || stdout != tc.want {
				t.Fatalf("exit %d stdout:\n%s\nwant:\n%s\nstderr: %s", code, stdout, tc.want, errs)
			}
			if b, _ := os.ReadFile(filepath.Join(out, "x")); string(b) != "outside x\nmore\n" {
				t.Fatalf("outside x = %q: the write did not go through the link", b)
			}
			code, sugg, errs := cliRun(t, "allowlist", "suggest", "last", "--db", db)
			if code != 0 || !strings.Contains(sugg, "hardlink-escape:data/x\n") || strings.Contains(sugg, "\ndata/x\n") {
				t.Fatalf("suggest: exit %d %q %q", code, sugg, errs)
			}
			if code, show, _ := cliRun(t, "history", "show", "last", "--violations", "--db", db); code != 1 || show != tc.want {
				t.Errorf("history show: exit %d\n%s", code, show)
			}
			reset()
			args = append([]string{"run", "--workspace", ws, "--no-history"}, tc.flags...)
			for _, e := range strings.Fields(sugg) {
				args = append(args, "--allow", e)
			}
			if code, stdout, errs := cliRun(t, append(args, "--", sh)...); code != 0 {
				t.Fatalf("with the suggested entries: exit %d %q %q", code, stdout, errs)
			}
			reset()
			if code, stdout, _ := cliRun(t, append(args, "--allow", "data/", "--", sh)...); code != 0 {
				t.Fatalf("with data/ added: exit %d %q", code, stdout)
			}
			reset()
			if code, stdout, _ := cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", "data/", "--contain=off", "--no-watch", "--", sh); code != 1 || !strings.Contains(stdout, "CHANGED data/x (hardlink-escape") {
				t.Fatalf("a plain entry silenced the risk: exit %d %q", code, stdout)
			}
		})
	}
}

func TestRunHardlinkEscape(t *testing.T) { testRunHardlinkEscape(t) }

func TestRunHardlinkEscapeAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testRunHardlinkEscape(t)
}
