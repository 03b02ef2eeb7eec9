package main

// Pins the protection of every git directory of the workspace (the
// repository's .git, a submodule's under .git/modules, a worktree's under
// .git/worktrees), as root and as a normal user, with preset:git allowing
// everything below .git: a contained script can plant no hook, core
// setting, config.worktree or commondir, nor move a git directory away,
// and a later git status, checkout or commit runs nothing it planted.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
)

// gitT runs git in dir, failing the test on an error.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com",
		"-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// snapshotFiles reads every file below dirs (relative path -> content; a
// directory maps to "dir").
func snapshotFiles(t *testing.T, dirs ...string) map[string]string {
	out := map[string]string{}
	for _, d := range dirs {
		filepath.Walk(d, func(p string, fi os.FileInfo, err error) error {
			switch {
			case err != nil:
			case fi.IsDir():
				out[p] = "dir"
			default:
				b, _ := os.ReadFile(p)
				out[p] = string(b)
			}
			return nil
		})
	}
	return out
}

// gitFixture makes, directly in /tmp (see containCLI), a workspace ws
// holding a repository with a submodule of a local repository and a
// worktree (wt, branch wtb), and a folder planted outside it.
func gitFixture(t *testing.T) (ws, planted string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base, err := os.MkdirTemp("/tmp", "dg-gitdirs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	src, ws, planted := filepath.Join(base, "src"), filepath.Join(base, "ws"), filepath.Join(base, "planted")
	for _, d := range []string{src, ws, planted} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, src, "init", "-q")
	os.WriteFile(filepath.Join(src, "s.txt"), []byte("s\n"), 0o644)
	gitT(t, src, "add", ".")
	gitT(t, src, "commit", "-qm", "s")
	gitT(t, ws, "init", "-q")
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	gitT(t, ws, "add", ".")
	gitT(t, ws, "commit", "-qm", "a")
	gitT(t, ws, "submodule", "add", "-q", src, "sub")
	gitT(t, ws, "commit", "-qm", "sub")
	gitT(t, ws, "worktree", "add", "-q", "-b", "wtb", "wt")
	return ws, planted
}

// runGitScript runs script (its text) contained on ws with preset:git
// and the extra allow entries; it returns the exit code, stdout, stderr
// and the report.
func runGitScript(t *testing.T, ws, script string, allow ...string) (int, string, string, *report.Report) {
	t.Helper()
	bin := testenv.CLI(t)
	dir := filepath.Dir(ws)
	sh := filepath.Join(dir, "s.sh")
	os.WriteFile(sh, []byte(script), 0o755)
	js := filepath.Join(dir, "r.json")
	args := []string{"run", "--workspace", ws, "--no-history", "--allow", "preset:git", "--report", js}
	for _, a := range allow {
		args = append(args, "--allow", a)
	}
	cmd := exec.Command(bin, append(args, "--", sh)...)
	var ob, eb strings.Builder
	cmd.Stdout, cmd.Stderr = &ob, &eb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatalf("exit %d, no report: %v\nstdout %s\nstderr %s", code, err, ob.String(), eb.String())
	}
	rep, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return code, ob.String(), eb.String(), rep
}

func testRunContainedGitDirs(t *testing.T) {
	ws, planted := gitFixture(t)
	// The submodule's hooks directory does not exist: its creation must be
	// refused as surely as a write to an existing one.
	if err := os.RemoveAll(filepath.Join(ws, ".git", "modules", "sub", "hooks")); err != nil {
		t.Fatal(err)
	}
	gitDirs := []string{".git", ".git/modules/sub", ".git/worktrees/wt"}
	var sh strings.Builder
	fmt.Fprintf(&sh, "#!/bin/sh\ncd %q\n", ws)
	for i, g := range gitDirs {
		hook := fmt.Sprintf("#!/bin/sh\ntouch %s/hook-%d-$(basename $0)\n", planted, i)
		fsmon := fmt.Sprintf("[core]\n\tfsmonitor = \"touch %s/fsmonitor-%d;:\"\n\thooksPath = %s/evil\n", planted, i, ws)
		fmt.Fprintf(&sh, "mkdir -p %[1]s/hooks\n", g)
		for _, h := range []string{"post-checkout", "pre-commit", "post-commit", "reference-transaction"} {
			fmt.Fprintf(&sh, "printf %%s %[3]q > %[1]s/hooks/%[2]s; chmod +x %[1]s/hooks/%[2]s\n", g, h, hook)
		}
		fmt.Fprintf(&sh, "printf %%s %[2]q >> %[1]s/config\ngit config -f %[1]s/config core.fsmonitor 'touch %[3]s/gitconfig-%[4]d;:'\n", g, fsmon, planted, i)
		fmt.Fprintf(&sh, "printf %%s %[2]q > %[1]s/config.worktree\necho evil > %[1]s/commondir\n", g, fsmon)
		fmt.Fprintf(&sh, "mv %[1]s/config %[1]s/config.old; mv %[1]s/hooks %[1]s/hooks.old\n", g)
	}
	// Move a git directory, or the folder holding it, away to put another
	// in its place.
	fmt.Fprintf(&sh, "mv .git/modules/sub .git/modules/old; mv .git/modules .git/modules.old; mv .git/worktrees .git/worktrees.old\n")
	fmt.Fprintf(&sh, "mkdir -p .git/modules/sub/hooks && printf %%s %q > .git/modules/sub/hooks/post-checkout\n",
		fmt.Sprintf("#!/bin/sh\ntouch %s/replaced\n", planted))
	fmt.Fprintf(&sh, "mkdir -p evil && printf %%s %q > evil/post-checkout && chmod +x evil/post-checkout\n",
		fmt.Sprintf("#!/bin/sh\ntouch %s/hookspath\n", planted))
	sh.WriteString("echo ok > out\n")
	before := snapshotFiles(t, filepath.Join(ws, ".git"))
	code, out, errs, rep := runGitScript(t, ws, sh.String(), "out", "evil/")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (blocked)\nstdout %s\nstderr %s", code, out, errs)
	}
	if !testenv.MountNamespaces() {
		t.Log("no mount namespace: the supervisor alone refuses")
	}
	// Nothing below .git changed: not a hook, not a config, no new file.
	after := snapshotFiles(t, filepath.Join(ws, ".git"))
	for p, c := range after {
		if b, ok := before[p]; !ok {
			t.Errorf("added: %s", p)
		} else if b != c && !strings.HasSuffix(p, "/index") && !strings.Contains(p, "/logs/") {
			t.Errorf("changed: %s", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("removed: %s", p)
		}
	}
	// Each protected name of each git directory was recorded.
	for _, g := range gitDirs {
		for _, name := range []string{"hooks", "config", "config.worktree", "commondir"} {
			p := filepath.Join(ws, filepath.FromSlash(g), name)
			found := false
			for _, b := range rep.Blocked {
				found = found || strings.HasPrefix(b.Target, p) && b.Kind != "read"
			}
			if !found {
				t.Errorf("no BLOCKED action on %s", p)
			}
		}
	}
	// The next git commands run nothing the script planted.
	for _, args := range [][]string{
		{"-C", ws, "status"}, {"-C", filepath.Join(ws, "sub"), "status"}, {"-C", filepath.Join(ws, "wt"), "status"},
		{"-C", filepath.Join(ws, "sub"), "checkout", "-q", "HEAD"}, {"-C", filepath.Join(ws, "wt"), "checkout", "-q", "wtb"},
		{"-C", ws, "checkout", "-q", "main"}, {"-C", ws, "commit", "-q", "--allow-empty", "-m", "x"},
		{"-C", filepath.Join(ws, "sub"), "commit", "-q", "--allow-empty", "-m", "x"},
	} {
		c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if o, err := c.CombinedOutput(); err != nil {
			t.Errorf("git %q: %v\n%s", args, err, o)
		}
	}
	if ents, _ := os.ReadDir(planted); len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("planted code ran: %q", names)
	}
	if t.Failed() {
		t.Logf("stdout %s\nstderr %s", out, errs)
	}
}

func TestRunContainedGitDirs(t *testing.T) { testRunContainedGitDirs(t) }

// testRunContainedGitWorks: the protection leaves git usable: commits in
// the repository, its submodule and its worktree, and a gc, pass.
func testRunContainedGitWorks(t *testing.T) {
	ws, _ := gitFixture(t)
	code, out, errs, _ := runGitScript(t, ws, `#!/bin/sh
set -e
g() { git -c user.name=t -c user.email=t@example.com "$@"; }
echo b > b && g add b && g commit -qm b
echo c > sub/c && g -C sub add c && g -C sub commit -qm c
echo d > wt/d && g -C wt add d && g -C wt commit -qm d
g gc -q
g status --short
echo ALL-OK
`, "b", "sub/", "wt/")
	if code != 0 || !strings.Contains(errs, "ALL-OK") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}

func TestRunContainedGitWorks(t *testing.T) { testRunContainedGitWorks(t) }

func TestRunContainedGitWorksAsUser(t *testing.T) {
	testenv.CLI(t) // built as root, used by the user
	if testenv.AsUser(t) {
		return
	}
	testRunContainedGitWorks(t)
}

func TestRunContainedGitDirsAsUser(t *testing.T) {
	testenv.CLI(t) // built as root, used by the user
	if testenv.AsUser(t) {
		return
	}
	testRunContainedGitDirs(t)
}

// TestGitProtectedNamesTested keeps the test above in step with the data.
func TestGitProtectedNamesTested(t *testing.T) {
	var names []string
	for _, p := range pipeline.GitProtected() {
		names = append(names, p.Name)
	}
	if !bytes.Equal([]byte(strings.Join(names, " ")), []byte("hooks config config.worktree commondir")) {
		t.Fatalf("contain.GitProtected = %q: update testRunContainedGitDirs", names)
	}
}
