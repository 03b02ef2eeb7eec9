package stage_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/internal/testenv"
)

func TestMain(m *testing.M) {
	proc.Supervise()
	if os.Getenv("DGTEST_STAGE_APPLY_CHILD") != "" {
		os.Exit(applyChild())
	}
	code := m.Run()
	if benchWS != "" {
		os.RemoveAll(filepath.Dir(benchWS))
	}
	os.Exit(code)
}

// script exercises every kind of change the upper layer can hold: a new
// file, an edit, a removal, a removed tree, a mode change, a new tree, a new
// symlink, a retargeted symlink and a directory replaced by a new one
// (opaque in the upper layer), a file replaced by a directory.
const script = `#!/bin/sh
set -e
echo "uid $(id -u)"
grep CapEff /proc/self/status
echo new > new.txt
echo more >> edit.txt
rm rm.txt
rm -rf rmtree
chmod 600 mode.txt
mkdir -p newdir/deep
echo f > newdir/deep/f
ln -s edit.txt newlink
rm link && ln -s keep.txt link
rm -rf repl && mkdir repl && echo z > repl/z
rm typ && mkdir typ && echo in > typ/in
chmod 750 .
setfattr -n user.note -v reviewed keep.txt
`

// makeWorkspace creates the workspace the script runs on.
func makeWorkspace(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"keep.txt": "keep\n", "edit.txt": "edit\n", "rm.txt": "rm\n", "mode.txt": "mode\n",
		"rmtree/a": "a\n", "rmtree/sub/b": "b\n", "repl/old1": "1\n", "repl/sub/old2": "2\n",
		"typ": "file\n", "deep/x/y/z.txt": "z\n",
	}
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("edit.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// An attribute that must survive the copy stage and the apply.
	if out, err := exec.Command("setfattr", "-n", "user.origin", "-v", "ws", filepath.Join(dir, "mode.txt")).CombinedOutput(); err != nil {
		t.Fatalf("setfattr: %v %s", err, out)
	}
}

func take(t *testing.T, dir string) *snapshot.Manifest {
	t.Helper()
	m, err := snapshot.Take(context.Background(), dir, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// summary lists changes as "kind path aspects" lines.
func summary(cs []diff.Change) []string {
	var out []string
	for _, c := range cs {
		var as []string
		for _, a := range c.Aspects {
			as = append(as, string(a))
		}
		out = append(out, fmt.Sprintf("%s %s %s", c.Kind, c.Path, strings.Join(as, ",")))
	}
	return out
}

// cpTree copies a tree as cp -a does.
func cpTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
}

// runIn runs the workspace's run.sh through the supervisor, in dir, over an
// overlay when ov is set.
func runIn(t *testing.T, dir, scriptPath string, ov *proc.Overlay) *proc.Result {
	t.Helper()
	res, err := proc.Run(context.Background(), proc.Spec{Dir: dir, Path: scriptPath, Overlay: ov, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("script exit %d: %s %s", res.ExitCode, res.Stdout.Head, res.Stderr.Head)
	}
	return res
}

// direct returns the changes the script makes when run directly on a copy
// of ws, and that copy (the expected outcome of an apply).
func direct(t *testing.T, ws string) ([]diff.Change, string) {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "direct")
	cpTree(t, ws, cp)
	before := take(t, cp)
	runIn(t, cp, filepath.Join(cp, "run.sh"), nil)
	return diff.Compare(before, take(t, cp), diff.Options{}), cp
}

// sameTree fails unless a and b hold the same entries (content, type, mode,
// owner, symlink targets).
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	if cs := diff.Compare(take(t, a), take(t, b), diff.Options{}); len(cs) > 0 {
		t.Fatalf("%s and %s differ:\n%s", a, b, strings.Join(summary(cs), "\n"))
	}
}

func overlayStage(t *testing.T) (ws string, st *stage.Stage) {
	t.Helper()
	base := t.TempDir()
	ws = filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	makeWorkspace(t, ws)
	st, err := stage.New(base, ws, stage.Overlay)
	if err != nil {
		t.Fatal(err)
	}
	// overlayfs leaves work/work mode 000: Discard copes with it, the
	// test's TempDir cleanup would not.
	t.Cleanup(func() { st.Discard() })
	return ws, st
}

func runStaged(t *testing.T, ws string, st *stage.Stage) {
	t.Helper()
	runIn(t, ws, filepath.Join(ws, "run.sh"), &proc.Overlay{Lower: ws, Upper: st.Upper(), Work: st.Work(), UserXattr: st.UserXattr})
}

// skipWithoutOverlay skips when this machine cannot mount an overlay in a
// (user) namespace: the probe decides, as a run does.
func skipWithoutOverlay(t *testing.T) {
	t.Helper()
	if p := stage.Probe(context.Background(), ""); p.Mechanism != stage.Overlay {
		t.Skipf("no overlay here: %s", p.Why)
	}
}

// TestOverlayRunLeavesWorkspaceUntouched: a real script run through the
// supervisor over the overlay writes only into the upper layer; the
// workspace is byte for byte as before; a removal is a 0/0 character device.
func TestOverlayRunLeavesWorkspaceUntouched(t *testing.T) {
	testenv.SelfAndUser(t, overlayRunLeavesWorkspaceUntouched)
}

func overlayRunLeavesWorkspaceUntouched(t *testing.T) {
	skipWithoutOverlay(t)
	ws, st := overlayStage(t)
	pristine := filepath.Join(t.TempDir(), "pristine")
	cpTree(t, ws, pristine)
	res := runIn(t, ws, filepath.Join(ws, "run.sh"), &proc.Overlay{Lower: ws, Upper: st.Upper(), Work: st.Work(), UserXattr: st.UserXattr})
	sameTree(t, ws, pristine)
	// The script runs as the caller's own uid and, unless that is root,
	// with no capability.
	out := string(res.Stdout.Head)
	want := fmt.Sprintf("uid %d\n", os.Getuid())
	if os.Getuid() != 0 {
		want += "CapEff:\t0000000000000000\n"
	}
	if !strings.HasPrefix(out, want) {
		t.Fatalf("script saw %q, want %q", out, want)
	}
	if b, err := os.ReadFile(filepath.Join(st.Upper(), "new.txt")); err != nil || string(b) != "new\n" {
		t.Fatalf("upper new.txt: %q %v", b, err)
	}
	fi, err := os.Lstat(filepath.Join(st.Upper(), "rm.txt"))
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("rm.txt in the upper layer is not a whiteout: %v %v", fi, err)
	}
}

// TestOverlayReadMatchesDirectRun: the changes read from the stage (only
// the touched paths) are exactly those a direct run produces, and so are
// those compared against the merged full manifest.
func TestOverlayReadMatchesDirectRun(t *testing.T) {
	testenv.SelfAndUser(t, overlayReadMatchesDirectRun)
}

func overlayReadMatchesDirectRun(t *testing.T) {
	skipWithoutOverlay(t)
	ws, st := overlayStage(t)
	want, _ := direct(t, ws)
	before := take(t, ws)
	runStaged(t, ws, st)
	d, err := st.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !d.Partial || len(d.Before.Entries) > 20 {
		t.Fatalf("read is not limited to the touched paths: partial=%v, %d before entries", d.Partial, len(d.Before.Entries))
	}
	got := summary(diff.Compare(d.Before, d.After, diff.Options{}))
	if w := summary(want); !slices.Equal(got, w) {
		t.Fatalf("staged changes:\n%s\nwant (direct run):\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
	merged := summary(diff.Compare(before, stage.Merge(before, d), diff.Options{}))
	if w := summary(want); !slices.Equal(merged, w) {
		t.Fatalf("merged changes:\n%s\nwant:\n%s", strings.Join(merged, "\n"), strings.Join(w, "\n"))
	}
}

// TestOverlayApply: applying every staged change makes the workspace what a
// direct run makes it; applying again is refused.
func TestOverlayApply(t *testing.T) { testenv.SelfAndUser(t, overlayApply) }

func overlayApply(t *testing.T) {
	skipWithoutOverlay(t)
	ws, st := overlayStage(t)
	_, expect := direct(t, ws)
	runStaged(t, ws, st)
	changes := read(t, st)
	if _, err := st.Apply(context.Background(), changes, stage.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, ws, expect)
	// Applied once, every path now differs from its before-state.
	if _, err := st.Apply(context.Background(), changes, stage.ApplyOptions{}); !isConflict(err) {
		t.Fatalf("second apply: %v, want conflicts", err)
	}
	// Resuming finds every path applied already and changes nothing.
	if _, err := st.Apply(context.Background(), changes, stage.ApplyOptions{Resume: true}); err != nil {
		t.Fatalf("resume of a complete apply: %v", err)
	}
	sameTree(t, ws, expect)
	noTemps(t, ws)
}

func isConflict(err error) bool {
	_, ok := err.(*stage.ConflictError)
	return ok
}

func read(t *testing.T, st *stage.Stage) []diff.Change {
	t.Helper()
	d, err := st.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return diff.Compare(d.Before, d.After, diff.Options{Root: st.Workspace})
}

func noTemps(t *testing.T, ws string) {
	t.Helper()
	filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".diffgate-apply-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestOverlayApplyConflict: a path changed in the workspace since the run
// is a conflict, named, and nothing at all is applied.
func TestOverlayApplyConflict(t *testing.T) { testenv.SelfAndUser(t, overlayApplyConflict) }

func overlayApplyConflict(t *testing.T) {
	skipWithoutOverlay(t)
	ws, st := overlayStage(t)
	runStaged(t, ws, st)
	changes := read(t, st)
	if err := os.WriteFile(filepath.Join(ws, "edit.txt"), []byte("someone else\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "new.txt"), []byte("me too\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pristine := filepath.Join(t.TempDir(), "pristine")
	cpTree(t, ws, pristine)
	_, err := st.Apply(context.Background(), changes, stage.ApplyOptions{})
	ce, ok := err.(*stage.ConflictError)
	if !ok {
		t.Fatalf("apply: %v, want a conflict", err)
	}
	var paths []string
	for _, c := range ce.Conflicts {
		paths = append(paths, c.Path+": "+c.Reason)
	}
	if want := []string{"edit.txt: changed since the run", "new.txt: created since the run"}; !slices.Equal(paths, want) {
		t.Fatalf("conflicts %q, want %q", paths, want)
	}
	sameTree(t, ws, pristine)
}

// TestOverlayApplyOnlyChosen: applying a subset touches only those paths.
func TestOverlayApplyOnlyChosen(t *testing.T) { testenv.SelfAndUser(t, overlayApplyOnlyChosen) }

func overlayApplyOnlyChosen(t *testing.T) {
	skipWithoutOverlay(t)
	ws, st := overlayStage(t)
	runStaged(t, ws, st)
	var chosen []diff.Change
	all := read(t, st)
	for _, c := range all {
		// newdir itself is not chosen: a chosen file needs it, so it comes.
		if c.Path == "new.txt" || c.Path == "rm.txt" || strings.HasPrefix(c.Path, "newdir/") {
			chosen = append(chosen, c)
		}
	}
	paths, err := st.Apply(context.Background(), chosen, stage.ApplyOptions{All: all})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"new.txt", "newdir", "newdir/deep", "newdir/deep/f", "rm.txt"}; !slices.Equal(paths, want) {
		t.Fatalf("applied %q, want %q", paths, want)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "newdir/deep/f")); string(b) != "f\n" {
		t.Fatalf("newdir/deep/f = %q", b)
	}
	if _, err := os.Lstat(filepath.Join(ws, "rm.txt")); !os.IsNotExist(err) {
		t.Fatalf("rm.txt not removed: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "edit.txt")); string(b) != "edit\n" {
		t.Fatalf("edit.txt was applied: %q", b)
	}
}

// TestApplyKilledMidwayCompletes: an apply killed with SIGKILL after some of
// its operations (a child process blocks there and says so) leaves no file
// half-written, and the next apply completes it.
func TestApplyKilledMidwayCompletes(t *testing.T) { testenv.SelfAndUser(t, applyKilledMidwayCompletes) }

func applyKilledMidwayCompletes(t *testing.T) {
	skipWithoutOverlay(t)
	ws, st := overlayStage(t)
	_, expect := direct(t, ws)
	runStaged(t, ws, st)
	changes := read(t, st)
	for _, n := range []int{1, len(changes) / 2} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ws, st := overlayStage(t)
			runStaged(t, ws, st)
			changes := read(t, st) // the run's record, before the workspace changes
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "DGTEST_STAGE_APPLY_CHILD="+filepath.Dir(st.Dir)+"|"+st.ID+"|"+strconv.Itoa(n))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			// The child blocks reading its stdin, which stays open.
			hold, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer hold.Close()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			if line != "blocked\n" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("child said %q", line)
			}
			cmd.Process.Kill() // SIGKILL
			cmd.Wait()
			// Every file is whole: its before or its after content.
			checkWhole(t, ws, expect)
			noTemps(t, ws)
			// Half-applied: as a fresh apply, it conflicts.
			if _, err := st.Apply(context.Background(), changes, stage.ApplyOptions{}); !isConflict(err) {
				t.Fatalf("fresh apply of a half-applied workspace: %v, want conflicts", err)
			}
			if _, err := st.Apply(context.Background(), changes, stage.ApplyOptions{Resume: true}); err != nil {
				if ce, ok := err.(*stage.ConflictError); ok {
					t.Fatalf("apply after the kill: %v", ce.Conflicts)
				}
				t.Fatalf("apply after the kill: %v", err)
			}
			sameTree(t, ws, expect)
			noTemps(t, ws)
		})
	}
}

// checkWhole fails if a regular file of ws has neither its original content
// (makeWorkspace) nor the one a direct run gives it.
func checkWhole(t *testing.T, ws, expect string) {
	t.Helper()
	orig := filepath.Join(t.TempDir(), "orig")
	os.Mkdir(orig, 0o755)
	makeWorkspace(t, orig)
	filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".diffgate-apply-") {
			return nil
		}
		rel, _ := filepath.Rel(ws, p)
		got, _ := os.ReadFile(p)
		a, errA := os.ReadFile(filepath.Join(orig, rel))
		b, errB := os.ReadFile(filepath.Join(expect, rel))
		if !(errA == nil && string(a) == string(got)) && !(errB == nil && string(b) == string(got)) {
			t.Errorf("%s is half-written: %q", rel, got)
		}
		return nil
	})
}

// applyChild applies a stage and blocks forever after N operations, having
// said so on stdout: the parent kills it there.
func applyChild() int {
	parts := strings.Split(os.Getenv("DGTEST_STAGE_APPLY_CHILD"), "|")
	n, _ := strconv.Atoi(parts[2])
	st, err := stage.Open(parts[0], parts[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	d, err := st.Read(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	changes := diff.Compare(d.Before, d.After, diff.Options{Root: st.Workspace})
	_, err = st.Apply(context.Background(), changes, stage.ApplyOptions{AfterOp: func(done int) {
		if done == n {
			fmt.Println("blocked")
			io.ReadAll(os.Stdin) // the parent kills us while we wait here
		}
	}})
	fmt.Fprintln(os.Stderr, "apply finished without blocking:", err)
	return 1
}

// TestDiscardAndExpire: Discard removes the stage (even with read-only
// directories a script left), Expire removes only stages older than MaxAge.
func TestDiscardAndExpire(t *testing.T) {
	base := t.TempDir()
	ws := t.TempDir()
	a, err := stage.New(base, ws, stage.Overlay)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(a.Upper(), "ro/sub"), 0o755)
	os.Chmod(filepath.Join(a.Upper(), "ro"), 0o555)
	if err := a.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.Dir); !os.IsNotExist(err) {
		t.Fatalf("stage still there: %v", err)
	}
	if _, err := stage.Open(base, a.ID); err == nil {
		t.Fatal("a discarded stage opens")
	}
	b, _ := stage.New(base, ws, stage.Copy)
	gone, err := stage.Expire(base, stage.MaxAge, time.Now().Add(stage.MaxAge-time.Hour))
	if err != nil || len(gone) != 0 {
		t.Fatalf("young stage expired: %v %v", gone, err)
	}
	gone, err = stage.Expire(base, stage.MaxAge, time.Now().Add(stage.MaxAge+time.Hour))
	if err != nil || !slices.Equal(gone, []string{b.ID}) {
		t.Fatalf("expired %v %v, want %s", gone, err, b.ID)
	}
	if _, err := stage.New(filepath.Join(ws, "cache"), ws, stage.Copy); err == nil {
		t.Fatal("a stage inside the workspace was made")
	}
}

// TestCopyStage: the copy fallback gives the same changes and the same
// applied outcome as a direct run.
func TestCopyStage(t *testing.T) { testenv.SelfAndUser(t, copyStage) }

func copyStage(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(ws, 0o755)
	makeWorkspace(t, ws)
	want, expect := direct(t, ws)
	before := take(t, ws)
	st, err := stage.New(base, ws, stage.Copy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Populate(context.Background()); err != nil {
		t.Fatal(err)
	}
	runIn(t, st.RunDir(), filepath.Join(st.RunDir(), "run.sh"), nil)
	d, err := st.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	changes := diff.Compare(before, stage.Merge(before, d), diff.Options{Root: ws})
	if got, w := summary(changes), summary(want); !slices.Equal(got, w) {
		t.Fatalf("copy-staged changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
	if _, err := st.Apply(context.Background(), changes, stage.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, ws, expect)
}

// TestApplyRefusesALinkedParent: a directory of the workspace replaced by a
// symlink (to outside) after the run is a conflict for every path below it:
// nothing is written through the link.
func TestApplyRefusesALinkedParent(t *testing.T) { testenv.SelfAndUser(t, applyRefusesALinkedParent) }

func applyRefusesALinkedParent(t *testing.T) {
	skipWithoutOverlay(t)
	ws, st := overlayStage(t)
	script := filepath.Join(t.TempDir(), "s.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho new > deep/x/new.txt\necho top > top.txt\n"), 0o755)
	runIn(t, ws, script, &proc.Overlay{Lower: ws, Upper: st.Upper(), Work: st.Work(), UserXattr: st.UserXattr})
	changes := read(t, st)
	outside := t.TempDir()
	if err := os.RemoveAll(filepath.Join(ws, "deep/x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "deep/x")); err != nil {
		t.Fatal(err)
	}
	_, err := st.Apply(context.Background(), changes, stage.ApplyOptions{})
	ce, ok := err.(*stage.ConflictError)
	if !ok || len(ce.Conflicts) == 0 {
		t.Fatalf("apply: %v, want conflicts", err)
	}
	var paths []string
	for _, c := range ce.Conflicts {
		paths = append(paths, c.Path)
	}
	if !slices.Contains(paths, "deep/x/new.txt") || slices.Contains(paths, "top.txt") {
		t.Fatalf("conflicts %v", ce.Conflicts)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("written through the link: %v", ents)
	}
	if _, err := os.Lstat(filepath.Join(ws, "top.txt")); err == nil {
		t.Fatal("top.txt applied despite the conflict")
	}
}

// TestProbeFallsBack: when the trial overlay run cannot even be set up (here:
// the stage directory cannot be made), Probe chooses the copy and says why
// in one line; it never assumes the overlay works.
func TestProbeFallsBack(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	p := stage.Probe(context.Background(), filepath.Join(file, "stages"))
	if p.Mechanism != stage.Copy || p.Why == "" || strings.Contains(p.Why, "\n") {
		t.Fatalf("probe %+v, want the copy with one line of reason", p)
	}
}

// TestOverlayLockedDirectory: a directory the script creates and locks
// (mode 000) reads from the stage as a direct run's walk reads it: as
// root, with its content; as a user, unreadable, nothing below it known.
func TestOverlayLockedDirectory(t *testing.T) { testenv.SelfAndUser(t, overlayLockedDirectory) }

func overlayLockedDirectory(t *testing.T) {
	skipWithoutOverlay(t)
	ws, st := overlayStage(t)
	script := filepath.Join(t.TempDir(), "s.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nmkdir locked && echo x > locked/f && chmod 000 locked\n"), 0o755)
	cp := filepath.Join(t.TempDir(), "direct")
	cpTree(t, ws, cp)
	before := take(t, cp)
	runIn(t, cp, script, nil)
	t.Cleanup(func() { os.Chmod(filepath.Join(cp, "locked"), 0o755) })
	want := diff.Compare(before, take(t, cp), diff.Options{})
	runIn(t, ws, script, &proc.Overlay{Lower: ws, Upper: st.Upper(), Work: st.Work(), UserXattr: st.UserXattr})
	d, err := st.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := diff.Compare(d.Before, d.After, diff.Options{})
	if g, w := summary(got), summary(want); !slices.Equal(g, w) {
		t.Fatalf("staged %q, direct %q", g, w)
	}
	if g, w := len(diff.Unreadable(d.Before, d.After)), len(diff.Unreadable(before, take(t, cp))); g != w {
		t.Fatalf("%d unreadable staged, %d direct", g, w)
	}
}

// TestProbeForWorkspace: the trial run over the workspace itself leaves it
// untouched; a workspace that does not exist means the copy, with a reason.
func TestProbeForWorkspace(t *testing.T) { testenv.SelfAndUser(t, probeForWorkspace) }

func probeForWorkspace(t *testing.T) {
	skipWithoutOverlay(t)
	ws := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(ws, 0o755)
	makeWorkspace(t, ws)
	pristine := filepath.Join(t.TempDir(), "pristine")
	cpTree(t, ws, pristine)
	if p := stage.Probe(context.Background(), t.TempDir()); p.Mechanism != stage.Overlay {
		t.Skipf("no overlay here (uid %d): %s", os.Geteuid(), p.Why)
	}
	if p := stage.ProbeFor(context.Background(), t.TempDir(), ws); p.Mechanism != stage.Overlay {
		t.Fatalf("probe over the workspace: %+v", p)
	}
	sameTree(t, ws, pristine)
	if p := stage.ProbeFor(context.Background(), t.TempDir(), filepath.Join(ws, "missing")); p.Mechanism != stage.Copy || p.Why == "" {
		t.Fatalf("probe over a missing workspace: %+v", p)
	}
}

// TestApplyRefusesPathsOutside: a change path with "..", an absolute path
// or an empty component (a forged record) is refused before anything is
// written, and nothing outside the workspace is touched.
func TestApplyRefusesPathsOutside(t *testing.T) { testenv.SelfAndUser(t, applyRefusesPathsOutside) }

func applyRefusesPathsOutside(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	victim := filepath.Join(t.TempDir(), "victim")
	os.Mkdir(victim, 0o755)
	os.WriteFile(filepath.Join(victim, "v"), []byte("v\n"), 0o644)
	st, err := stage.New(base, ws, stage.Copy)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(ws, victim)
	dir := &snapshot.Entry{Type: snapshot.Dir, Perm: 0o755}
	for _, p := range []string{rel, "/etc", "a//b", "./a.txt", "a.txt/..", ""} {
		changes := []diff.Change{{Path: "a.txt", Kind: diff.Removed, Before: &snapshot.Entry{Path: "a.txt", Type: snapshot.File}},
			{Path: p, Kind: diff.Removed, Before: dir}}
		if _, err := st.Apply(context.Background(), changes, stage.ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "invalid path") {
			t.Fatalf("path %q: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(victim, "v")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err != nil {
		t.Fatalf("a.txt went: %v", err)
	}
}

// TestApplyResumeChecks: an interrupted apply resumes only over paths that
// are as the run found them or as the apply leaves them: one the user
// changed meanwhile is a conflict, and nothing more is written.
func TestApplyResumeChecks(t *testing.T) { testenv.SelfAndUser(t, applyResumeChecks) }

func applyResumeChecks(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(ws, 0o755)
	makeWorkspace(t, ws)
	_, expect := direct(t, ws)
	before := take(t, ws)
	st, err := stage.New(base, ws, stage.Copy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Populate(context.Background()); err != nil {
		t.Fatal(err)
	}
	runIn(t, st.RunDir(), filepath.Join(st.RunDir(), "run.sh"), nil)
	d, err := st.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	changes := diff.Compare(before, stage.Merge(before, d), diff.Options{Root: ws})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := 0
	_, err = st.Apply(ctx, changes, stage.ApplyOptions{
		Start: func([]string) error { started++; return nil },
		AfterOp: func(done int) {
			if done == 3 {
				cancel()
			}
		}})
	if err == nil || !strings.Contains(err.Error(), "interrupted") || started != 1 {
		t.Fatalf("apply stopped after 3 operations: %v (started %d)", err, started)
	}
	// edit.txt: neither its before (edit) nor its after (edit, more).
	if err := os.WriteFile(filepath.Join(ws, "edit.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	half := take(t, ws)
	_, err = st.Apply(context.Background(), changes, stage.ApplyOptions{Resume: true})
	ce, ok := err.(*stage.ConflictError)
	if !ok || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != "edit.txt" {
		t.Fatalf("resume over a changed path: %v", err)
	}
	if cs := diff.Compare(half, take(t, ws), diff.Options{}); len(cs) > 0 {
		t.Fatalf("the refused resume wrote:\n%s", strings.Join(summary(cs), "\n"))
	}
	os.WriteFile(filepath.Join(ws, "edit.txt"), []byte("edit\n"), 0o644)
	if _, err := st.Apply(context.Background(), changes, stage.ApplyOptions{Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, ws, expect)
	noTemps(t, ws)
}

// TestApplyKeepsHoles: a sparse file (256 MiB of hole, one data block) is
// applied, and copied into a copy stage, sparse: few blocks on disk
// (st_blocks), the same content.
func TestApplyKeepsHoles(t *testing.T) { testenv.SelfAndUser(t, applyKeepsHoles) }

func applyKeepsHoles(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(ws, 0o755)
	const size = 256 << 20
	sparse := func(p string) {
		t.Helper()
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("data in the middle"), size/2); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	sparse(filepath.Join(ws, "old.img"))
	if blocks(t, filepath.Join(ws, "old.img")) > 64 {
		t.Skip("this filesystem does not keep holes")
	}
	before := take(t, ws)
	st, err := stage.New(base, ws, stage.Copy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Discard() })
	if _, err := st.Populate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b := blocks(t, filepath.Join(st.Copy(), "old.img")); b > 64 {
		t.Fatalf("the copy stage made old.img dense: %d blocks", b)
	}
	sparse(filepath.Join(st.Copy(), "new.img"))
	d, err := st.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	changes := diff.Compare(before, stage.Merge(before, d), diff.Options{Root: ws})
	start := time.Now()
	if _, err := st.Apply(context.Background(), changes, stage.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("applied a 256 MiB sparse file in %v", time.Since(start))
	if b := blocks(t, filepath.Join(ws, "new.img")); b > 64 {
		t.Fatalf("applied new.img dense: %d blocks", b)
	}
	sameTree(t, ws, st.Copy())
}

// blocks is p's st_blocks (512-byte units).
func blocks(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Blocks
}

// TestApplyRefusesATamperedStage: a staged file rewritten after the run
// (its content no longer the reviewed one) stops the apply before its
// first write: nothing is written, and Start is never called.
func TestApplyRefusesATamperedStage(t *testing.T) { testenv.SelfAndUser(t, applyRefusesATamperedStage) }

func applyRefusesATamperedStage(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	before := take(t, ws)
	st, err := stage.New(base, ws, stage.Copy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Populate(context.Background()); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(st.Copy(), "a.txt"))
	os.WriteFile(filepath.Join(st.Copy(), "b.txt"), []byte("reviewed\n"), 0o644)
	d, err := st.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	changes := diff.Compare(before, stage.Merge(before, d), diff.Options{Root: ws})
	os.WriteFile(filepath.Join(st.Copy(), "b.txt"), []byte("evil!!!!\n"), 0o644) // same size
	_, err = st.Apply(context.Background(), changes, stage.ApplyOptions{Start: func([]string) error {
		t.Error("Start called for a tampered stage")
		return nil
	}})
	if err == nil || !strings.Contains(err.Error(), "changed since it was reviewed; nothing applied") {
		t.Fatalf("apply of a tampered stage: %v", err)
	}
	if cs := diff.Compare(before, take(t, ws), diff.Options{}); len(cs) > 0 {
		t.Fatalf("written: %v", summary(cs))
	}
	// The reviewed content back, with an attribute added: refused too.
	os.WriteFile(filepath.Join(st.Copy(), "b.txt"), []byte("reviewed\n"), 0o644)
	if out, err := exec.Command("setfattr", "-n", "user.evil", "-v", "1", filepath.Join(st.Copy(), "b.txt")).CombinedOutput(); err != nil {
		t.Fatalf("setfattr: %v %s", err, out)
	}
	if _, err = st.Apply(context.Background(), changes, stage.ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "extended attributes changed since it was reviewed; nothing applied") {
		t.Fatalf("apply of a stage with an attribute added: %v", err)
	}
	if cs := diff.Compare(before, take(t, ws), diff.Options{}); len(cs) > 0 {
		t.Fatalf("written: %v", summary(cs))
	}
	exec.Command("setfattr", "-x", "user.evil", filepath.Join(st.Copy(), "b.txt")).Run()
	if _, err = st.Apply(context.Background(), changes, stage.ApplyOptions{}); err != nil {
		t.Fatalf("apply of the stage as reviewed (touched, same content and attributes): %v", err)
	}
}
