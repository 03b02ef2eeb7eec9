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

// asRootAndUser runs body as the current user and, when that is root,
// again as an unprivileged user (testenv.AsUser).
func asRootAndUser(t *testing.T, body func(*testing.T)) {
	t.Run("self", body)
	if testenv.IsRoot() || testenv.InUserChild() {
		t.Run("user", func(t *testing.T) {
			if testenv.AsUser(t) {
				return
			}
			body(t)
		})
	}
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
	asRootAndUser(t, overlayRunLeavesWorkspaceUntouched)
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
func TestOverlayReadMatchesDirectRun(t *testing.T) { asRootAndUser(t, overlayReadMatchesDirectRun) }

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
func TestOverlayApply(t *testing.T) { asRootAndUser(t, overlayApply) }

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
	if st.State() != stage.StateApplied {
		t.Fatalf("state %s after the apply", st.State())
	}
	if _, err := st.Apply(context.Background(), changes, stage.ApplyOptions{}); err != stage.ErrApplied {
		t.Fatalf("second apply: %v, want ErrApplied", err)
	}
	noTemps(t, ws)
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
func TestOverlayApplyConflict(t *testing.T) { asRootAndUser(t, overlayApplyConflict) }

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
func TestOverlayApplyOnlyChosen(t *testing.T) { asRootAndUser(t, overlayApplyOnlyChosen) }

func overlayApplyOnlyChosen(t *testing.T) {
	skipWithoutOverlay(t)
	ws, st := overlayStage(t)
	runStaged(t, ws, st)
	var chosen []diff.Change
	for _, c := range read(t, st) {
		if c.Path == "new.txt" || c.Path == "rm.txt" || strings.HasPrefix(c.Path, "newdir") {
			chosen = append(chosen, c)
		}
	}
	if st.State() != stage.StatePending {
		t.Fatalf("state %s before the apply", st.State())
	}
	rec, err := st.Apply(context.Background(), chosen, stage.ApplyOptions{Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.State() != stage.StatePartiallyApplied {
		t.Fatalf("state %s after a partial apply", st.State())
	}
	if len(rec.Paths) != 5 {
		t.Fatalf("applied %q", rec.Paths)
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
func TestApplyKilledMidwayCompletes(t *testing.T) { asRootAndUser(t, applyKilledMidwayCompletes) }

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
			if st.State() != stage.StateApplying {
				t.Fatalf("state %s after the kill, want applying", st.State())
			}
			// Every file is whole: its before or its after content.
			checkWhole(t, ws, expect)
			if _, err := st.Apply(context.Background(), nil, stage.ApplyOptions{}); err != nil {
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
func TestCopyStage(t *testing.T) { asRootAndUser(t, copyStage) }

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
func TestApplyRefusesALinkedParent(t *testing.T) { asRootAndUser(t, applyRefusesALinkedParent) }

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
func TestOverlayLockedDirectory(t *testing.T) { asRootAndUser(t, overlayLockedDirectory) }

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
func TestProbeForWorkspace(t *testing.T) { asRootAndUser(t, probeForWorkspace) }

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
