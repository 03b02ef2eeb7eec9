package gate_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/report"
)

func TestMain(m *testing.M) {
	proc.Supervise()
	os.Exit(m.Run())
}

// workspace makes a workspace with a few files and a script (outside it).
func workspace(t *testing.T, script string) (ws, path string) {
	t.Helper()
	ws = t.TempDir()
	os.MkdirAll(filepath.Join(ws, "logs"), 0o755)
	os.WriteFile(filepath.Join(ws, "config.json"), []byte("{\n  \"debug\": false\n}\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("keep\n"), 0o644)
	path = filepath.Join(t.TempDir(), "gen.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ws, path
}

func gateRun(t *testing.T, script string, cfg gate.Config) (*gate.Result, string) {
	t.Helper()
	ws, path := workspace(t, script)
	cfg.Workspace, cfg.Script = ws, path
	res, err := gate.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res, ws
}

func lines(r *report.Report) string { return strings.Join(r.Lines(), "\n") }

func TestVerdicts(t *testing.T) {
	cases := []struct {
		name, script string
		allow        []string
		verdict      string
		lines        string
	}{
		{"no-op", "true", nil, report.Pass, ""},
		{"allowed writes", "echo hi >> logs/run.log; mkdir -p .cache/x; echo 1 > .cache/x/y", []string{".cache/", "logs/run.log"}, report.Pass, ""},
		{"unexpected change", "echo '{}' > config.json", []string{"logs/"}, report.Fail, "CHANGED config.json"},
		{"unexpected add", "echo x > new.txt", nil, report.Fail, "ADDED new.txt"},
		{"unexpected remove", "rm keep.txt", nil, report.Fail, "REMOVED keep.txt"},
		{"chmod", "chmod 755 keep.txt", nil, report.Fail, "CHANGED keep.txt (mode 0644 -> 0755)"},
		{"non-zero exit", "exit 3", nil, report.Fail, "EXIT 3"},
		{"reads stdin", "cat; read x; true", nil, report.Pass, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := gateRun(t, tc.script, gate.Config{Allow: tc.allow, Timeout: time.Minute})
			r := res.Report
			if r.Verdict != tc.verdict || lines(r) != tc.lines {
				t.Fatalf("verdict %s, lines %q, reasons %v; want %s %q", r.Verdict, lines(r), r.Reasons, tc.verdict, tc.lines)
			}
		})
	}
}

func TestTextDiffOfChangedConfig(t *testing.T) {
	res, _ := gateRun(t, `sed -i 's/false/true/' config.json`, gate.Config{})
	c := res.Report.Changes[0]
	if c.Path != "config.json" || !strings.Contains(c.TextDiff, "-  \"debug\": false") || !strings.Contains(c.TextDiff, "+  \"debug\": true") {
		t.Fatalf("text diff: %+v", c)
	}
	old, ok := res.Contents(c.Before.SHA256)
	if !ok || !strings.Contains(string(old), "false") {
		t.Errorf("before content not kept")
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestLeftovers(t *testing.T) {
	// The script waits until its child has become sleep (exec'd), so that
	// the leftover is that, not the shell it forked from (an event, not a
	// time: a loaded machine may sweep before the child's exec).
	const execd = `
while [ -e /proc/$!/comm ] && [ "$(cat /proc/$!/comm 2>/dev/null)" != sleep ]; do :; done`
	for name, script := range map[string]string{
		"background": "sleep 300 &" + execd,
		"setsid":     "setsid sleep 300 &" + execd,
	} {
		t.Run(name, func(t *testing.T) {
			res, _ := gateRun(t, script, gate.Config{})
			p := res.Report.Process
			if len(p.Leftovers) != 1 || !strings.Contains(p.Leftovers[0].Cmd, "sleep 300") {
				t.Fatalf("leftovers %+v", p.Leftovers)
			}
			if alive(p.Leftovers[0].PID) {
				t.Errorf("leftover %d still alive", p.Leftovers[0].PID)
			}
			if res.Report.Verdict != report.Fail || !strings.Contains(lines(res.Report), "LEFTOVER pid ") {
				t.Errorf("verdict %s lines %q", res.Report.Verdict, lines(res.Report))
			}
		})
	}
}

func TestLateWriterCannotSneakIn(t *testing.T) {
	res, ws := gateRun(t, "(sleep 2; echo late > late.txt) & exit 0", gate.Config{})
	time.Sleep(3 * time.Second)
	if _, err := os.Stat(filepath.Join(ws, "late.txt")); err == nil {
		t.Fatal("a leftover process wrote into the workspace after the gate looked")
	}
	if len(res.Report.Process.Leftovers) == 0 {
		t.Error("daemon not reported")
	}
}

func TestTimeoutKillsTree(t *testing.T) {
	start := time.Now()
	res, _ := gateRun(t, "sleep 300 & sleep 300", gate.Config{Timeout: time.Second})
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	r := res.Report
	if !r.Process.TimedOut || r.Verdict != report.Fail || !strings.Contains(lines(r), "TIMEOUT 1s") {
		t.Fatalf("process %+v lines %q", r.Process, lines(r))
	}
}

func TestHugeOutputBounded(t *testing.T) {
	var streamed atomic.Int64
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			}
		}
	}()
	res, _ := gateRun(t, "head -c 200000000 /dev/zero | tr '\\0' x", gate.Config{Output: func(_ proc.Stream, p []byte) { streamed.Add(int64(len(p))) }})
	close(stop)
	if streamed.Load() != 200000000 {
		t.Errorf("streamed %d bytes", streamed.Load())
	}
	if n := len(res.Report.Process.StdoutTail) + len(res.Report.Process.StdoutHead); n > 256<<10 {
		t.Errorf("report keeps %d bytes of output", n)
	}
	if p := peak.Load(); p > 64<<20 {
		t.Errorf("peak heap %d MiB", p>>20)
	}
}

func TestSetupErrors(t *testing.T) {
	ws, script := workspace(t, "true")
	cases := map[string]gate.Config{
		"workspace":           {Workspace: filepath.Join(ws, "nope"), Script: script},
		"script":              {Workspace: ws, Script: filepath.Join(ws, "missing.sh")},
		"not a directory":     {Workspace: script, Script: script},
		"allowlist entry \"/": {Workspace: ws, Script: script, Allow: []string{"/etc"}},
	}
	for want, cfg := range cases {
		_, err := gate.Run(context.Background(), cfg)
		var se *gate.SetupError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v", want, err)
		}
	}
}

// TestCancelDuringRun: a run cancelled once the script has written its
// file (it says so on stdout) reports the cancel and what was written.
func TestCancelDuringRun(t *testing.T) {
	ws, script := workspace(t, "echo x > partial.txt; echo written; sleep 300")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := gate.Run(ctx, gate.Config{Workspace: ws, Script: script, Output: func(_ proc.Stream, p []byte) {
		if strings.Contains(string(p), "written") {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if !r.Process.Cancelled || r.Verdict != report.Fail {
		t.Fatalf("process %+v verdict %s", r.Process, r.Verdict)
	}
	if !strings.Contains(lines(r), "ADDED partial.txt") {
		t.Errorf("what the script did before the cancel is lost: %q", lines(r))
	}
}

func TestStateStaysOutsideWorkspace(t *testing.T) {
	res, ws := gateRun(t, "true", gate.Config{})
	if len(res.Report.Changes) != 0 {
		t.Fatalf("the gate saw its own files: %+v", res.Report.Changes)
	}
	entries, _ := os.ReadDir(ws)
	if len(entries) != 3 {
		t.Errorf("workspace has %d entries", len(entries))
	}
}

// TestTextDiffFromStore: when the before-snapshot did not keep a file's
// content (its hash came from the cache, or the keep budget ran out), the
// before-content comes from the store.
func TestTextDiffFromStore(t *testing.T) {
	ws, script := workspace(t, `sed -i 's/false/true/' config.json`)
	before, _ := os.ReadFile(filepath.Join(ws, "config.json"))
	sum := sha256.Sum256(before)
	stored := map[string][]byte{hex.EncodeToString(sum[:]): before}
	for _, store := range []map[string][]byte{nil, stored} {
		res, err := gate.Run(context.Background(), gate.Config{Workspace: ws, Script: script, KeepBudget: 1,
			Stored: func(sha string) ([]byte, bool) { d, ok := store[sha]; return d, ok }})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Report.Changes[0].TextDiff
		if want := store != nil; strings.Contains(got, "+  \"debug\": true") != want {
			t.Fatalf("store %v: text diff %q", want, got)
		}
		os.WriteFile(filepath.Join(ws, "config.json"), before, 0o644)
	}
}

// TestUnchangedListingsStillSeeEveryChange: with every entry old enough for
// reuse (a negative granularity), the after-snapshot takes each unchanged
// directory's names from the before-snapshot, and every addition, removal,
// rename and relinked symlink in directories that existed before is still
// reported: each changes its directory's ctime.
func TestUnchangedListingsStillSeeEveryChange(t *testing.T) {
	probe := t.TempDir()
	ctime := func() int64 {
		var st syscall.Stat_t
		if err := syscall.Stat(probe, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ctim.Nano()
	}
	os.WriteFile(filepath.Join(probe, "1"), nil, 0o644)
	c1 := ctime()
	os.WriteFile(filepath.Join(probe, "2"), nil, 0o644)
	if ctime() == c1 {
		t.Skip("two changes in one clock tick leave a directory's ctime alone here (no fine-grained timestamps): the default 2 s granularity covers that")
	}
	script := `echo x > logs/new.txt; rm keep.txt; mv config.json logs/c.json; mkdir logs/sub; ln -sfn keep.txt logs/link; echo y > logs/deep/z`
	ws, path := workspace(t, script)
	os.MkdirAll(filepath.Join(ws, "logs/deep"), 0o755)
	os.WriteFile(filepath.Join(ws, "logs/deep/z"), []byte("z\n"), 0o644)
	os.Symlink("config.json", filepath.Join(ws, "logs/link"))
	res, err := gate.Run(context.Background(), gate.Config{Workspace: ws, Script: path, Granularity: -time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := "ADDED logs/c.json\nADDED logs/new.txt\nADDED logs/sub\nCHANGED logs/deep/z\nCHANGED logs/link (target config.json -> keep.txt)\nREMOVED config.json\nREMOVED keep.txt"
	got := strings.Split(lines(res.Report), "\n")
	slices.Sort(got)
	if strings.Join(got, "\n") != want {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}

// TestCachedListingsSeeChangesBetweenRuns: the before-snapshot takes an
// unchanged directory's names from the hash cache the last run recorded.
// A file added between two runs (its directory's ctime changes) is listed,
// so the second run's script changing it is reported; were the cached
// names taken, neither snapshot would hold the file.
func TestCachedListingsSeeChangesBetweenRuns(t *testing.T) {
	ws, noop := workspace(t, "true")
	db, run := historyRuns(t, ws)
	run(noop)
	if c, _ := db.HashCache(context.Background(), ws); c == nil || !c.Listed || c.Lookup("logs") == nil {
		t.Fatalf("the recorded cache keeps no listing: %+v", c)
	}
	before := lstatCtime(t, filepath.Join(ws, "logs"))
	os.WriteFile(filepath.Join(ws, "logs/sneaky"), []byte("a\n"), 0o644)
	if lstatCtime(t, filepath.Join(ws, "logs")) == before {
		t.Skip("adding a file left its directory's ctime alone within one clock tick (no fine-grained timestamps here)")
	}
	edit := filepath.Join(t.TempDir(), "edit.sh")
	os.WriteFile(edit, []byte("#!/bin/sh\necho b > logs/sneaky\n"), 0o755)
	if got := lines(run(edit).Report); got != "CHANGED logs/sneaky" {
		t.Errorf("lines %q, want CHANGED logs/sneaky", got)
	}
}

// TestCachedRunSeesAttributesSet: a file whose hash the before-snapshot
// takes from the hash cache, and a directory whose names it takes from
// it, still have their extended attributes recorded, so that an attribute
// the script sets on either is reported. The cache once kept none: the
// before-snapshot then knew none, and the diff compares no attributes
// against an unknown side (a silent pass).
func TestCachedRunSeesAttributesSet(t *testing.T) {
	if _, err := exec.LookPath("setfattr"); err != nil {
		t.Skip("setfattr is not installed (Debian's attr; make test-deps installs it)")
	}
	ws, noop := workspace(t, "true")
	if err := unix.Setxattr(filepath.Join(ws, "keep.txt"), "user.probe", []byte("1"), 0); err != nil {
		t.Skipf("no user extended attributes here: %v", err)
	}
	unix.Removexattr(filepath.Join(ws, "keep.txt"), "user.probe")
	_, run := historyRuns(t, ws)
	run(noop)
	set := filepath.Join(t.TempDir(), "set.sh")
	os.WriteFile(set, []byte("#!/bin/sh\nsetfattr -n user.k -v v keep.txt && setfattr -n user.k -v v logs\n"), 0o755)
	want := "CHANGED keep.txt (xattr none -> user.k)\nCHANGED logs (xattr none -> user.k)"
	if got := lines(run(set).Report); got != want {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// historyRuns opens a history for ws and returns it with a function that
// gates one run of script there as the CLI does: with the hash cache the
// history holds, every entry old enough for reuse (negative granularity),
// and records it.
func historyRuns(t *testing.T, ws string) (*history.DB, func(script string) *gate.Result) {
	t.Helper()
	db, err := history.Open(filepath.Join(t.TempDir(), "h.db"), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	return db, func(script string) *gate.Result {
		t.Helper()
		prior, err := db.HashCache(ctx, ws)
		if err != nil {
			t.Fatal(err)
		}
		res, err := gate.Run(ctx, gate.Config{Workspace: ws, Script: script, Prior: prior, Granularity: -time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Record(ctx, &history.Run{Report: res.Report, ScriptText: res.ScriptText}, res.Contents, res.After); err != nil {
			t.Fatal(err)
		}
		return res
	}
}

func lstatCtime(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ctim.Nano()
}
