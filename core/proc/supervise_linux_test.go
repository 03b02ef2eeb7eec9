package proc_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/internal/testenv"
)

// safetyNet bounds a Run that would otherwise hang forever (the bug these
// tests pin); it is far above what any of them takes.
const safetyNet = 90 * time.Second

// runBounded is runTagged without a timeout (0: the worst case, nothing
// bounds the run but the gate's own handling), failing the test if Run does
// not return within safetyNet.
func runBounded(t *testing.T, body string) (*proc.Result, string, string, time.Duration) {
	t.Helper()
	type out struct {
		res      *proc.Result
		tok, dir string
		elapsed  time.Duration
	}
	c := make(chan out, 1)
	go func() {
		begin := time.Now()
		res, tok, dir := runTagged(t, body, func(s *proc.Spec) { s.Timeout = 0 })
		c <- out{res, tok, dir, time.Since(begin)}
	}()
	select {
	case o := <-c:
		return o.res, o.tok, o.dir, o.elapsed
	case <-time.After(safetyNet):
		t.Fatalf("Run did not return within %v", safetyNet)
	}
	panic("unreachable")
}

func leftoverPIDs(res *proc.Result) map[int]string {
	m := map[int]string{}
	for _, l := range res.Leftovers {
		m[l.PID] = l.Cmd
	}
	return m
}

// readPID reads a pid the script wrote into the workspace.
func readPID(t *testing.T, dir, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("the script did not write %s: %v", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func assertDead(t *testing.T, pid int, what string) {
	t.Helper()
	if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
		t.Errorf("%s (pid %d) still exists after Run returned: kill(pid, 0) = %v", what, pid, err)
	}
}

// A background writer that waits for a file the test creates after Run
// returned, then writes into the workspace (it must be dead by then).
const lateWriter = `DGMARK=$1 sh -c 'while [ ! -e go ]; do echo chatty >&2; sleep 0.02; done; echo late > late.txt' &
echo $! > writer
waitmark $1
`

func checkLateWriter(t *testing.T, res *proc.Result, dir string) {
	t.Helper()
	w := readPID(t, dir, "writer")
	assertDead(t, w, "the background writer")
	if _, ok := leftoverPIDs(res)[w]; !ok {
		t.Errorf("the background writer (pid %d) is not reported as a leftover: %+v", w, res.Leftovers)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestScriptKillsSupervisor: "kill -9 $PPID" must neither hang the gate (no
// timeout) nor let the script's background writer survive; the run reports
// the lost supervisor and the writer as a leftover.
func TestScriptKillsSupervisor(t *testing.T) { testScriptKillsSupervisor(t) }

func TestScriptKillsSupervisorAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testScriptKillsSupervisor(t)
}

func TestScriptKillsSupervisorSubreaper(t *testing.T) {
	proc.WithoutCgroup(t)
	testScriptKillsSupervisor(t)
}

func testScriptKillsSupervisor(t *testing.T) {
	res, tok, dir, elapsed := runBounded(t, lateWriter+"kill -9 $PPID\nsleep 300\n")
	t.Logf("mechanism %s, Run returned after %v, leftovers %+v", res.Mechanism, elapsed, res.Leftovers)
	if res.SupervisorLost != "killed" {
		t.Errorf("SupervisorLost = %q, want killed (result %+v)", res.SupervisorLost, res)
	}
	checkLateWriter(t, res, dir)
	assertAllGone(t, res, tok, true)
}

// TestScriptStopsSupervisor: "kill -STOP $PPID" with no timeout must not
// hang the gate: the gate notices the stopped supervisor, kills it and the
// whole tree, and reports it.
func TestScriptStopsSupervisor(t *testing.T) { testScriptStopsSupervisor(t) }

func TestScriptStopsSupervisorAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testScriptStopsSupervisor(t)
}

func TestScriptStopsSupervisorSubreaper(t *testing.T) {
	proc.WithoutCgroup(t)
	testScriptStopsSupervisor(t)
}

func testScriptStopsSupervisor(t *testing.T) {
	res, tok, dir, elapsed := runBounded(t, lateWriter+"echo $$ > main\nkill -STOP $PPID\nsleep 300\n")
	t.Logf("mechanism %s, Run returned after %v, leftovers %+v", res.Mechanism, elapsed, res.Leftovers)
	if res.SupervisorLost != "stopped" {
		t.Errorf("SupervisorLost = %q, want stopped (result %+v)", res.SupervisorLost, res)
	}
	assertDead(t, readPID(t, dir, "main"), "the script's main process")
	checkLateWriter(t, res, dir)
	assertAllGone(t, res, tok, true)
}

// TestEscapedChattyWriterDoesNotHoldTheGate: a process outside the script's
// tree (here one the test starts, which opens the script's stderr pipe
// through /proc) writes on and on. Run must still return within a bounded
// time after the script ended, and close its end of the pipe.
func TestEscapedChattyWriterDoesNotHoldTheGate(t *testing.T) {
	t.Parallel()
	dir, path := writeScript(t, "#!/bin/sh\necho $$ > pid\n"+`i=0
until [ -e attached ]; do i=$((i+1)); [ $i -gt 3000 ] && exit 9; sleep 0.01; done
`, 0o755)
	var outside *exec.Cmd
	t.Cleanup(func() {
		if outside != nil && outside.Process != nil {
			_ = outside.Process.Kill()
			_ = outside.Wait()
		}
	})
	attach := make(chan error, 1)
	go func() {
		// Wait for the script's pid file, then attach an outside writer.
		for i := 0; i < 6000; i++ {
			b, err := os.ReadFile(filepath.Join(dir, "pid"))
			if err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
				pid := strings.TrimSpace(string(b))
				outside = exec.Command("sh", "-c", `exec 3>/proc/`+pid+`/fd/2 && touch attached && while :; do echo chatty >&3 || exit 0; sleep 0.02; done`)
				outside.Dir = dir
				attach <- outside.Start()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		attach <- errors.New("the script never wrote its pid")
	}()
	c := make(chan *proc.Result, 1)
	var scriptEnd time.Time
	go func() {
		res, err := proc.Run(context.Background(), proc.Spec{Dir: dir, Path: path, Output: func(s proc.Stream, p []byte) {}})
		if err != nil {
			t.Error(err)
		}
		c <- res
	}()
	if err := <-attach; err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-c:
		if res == nil {
			return
		}
		scriptEnd = res.Finished
		if res.ExitCode != 0 {
			t.Fatalf("exit %d stderr %q", res.ExitCode, res.Stderr.Head)
		}
		if !strings.Contains(string(res.Stderr.Head), "chatty") {
			t.Errorf("the writer's output was not read at all: %q", res.Stderr.Head)
		}
		t.Logf("Run returned %v after the script started", scriptEnd.Sub(res.Started))
	case <-time.After(safetyNet):
		t.Fatalf("Run did not return within %v while an escaped process kept writing to its stderr", safetyNet)
	}
	// The gate closed its end: the writer gets EPIPE and exits.
	done := make(chan error, 1)
	go func() { done <- outside.Wait() }()
	select {
	case <-done:
		outside = nil
	case <-time.After(safetyNet):
		t.Fatal("the outside writer still has a reader: the gate did not close its pipe")
	}
}

// TestSupervisorOwnOutputIsNotTheScripts: what the supervisor process prints
// itself (here from TestMain, before Supervise, as GTK's locale warning does
// in the desktop app) is kept apart as Diagnostics, never in the script's
// streams.
func TestSupervisorOwnOutputIsNotTheScripts(t *testing.T) {
	t.Setenv("DGTEST_SUPERVISOR_NOISE", "1")
	res := runScript(t, "echo script-out\necho script-err >&2\n", nil)
	if string(res.Stdout.Head) != "script-out\n" || string(res.Stderr.Head) != "script-err\n" {
		t.Fatalf("the script's streams carry more than the script's output: stdout %q stderr %q", res.Stdout.Head, res.Stderr.Head)
	}
	if !strings.Contains(res.Diagnostics, "noise printed by the supervisor's own initialisation") || !strings.Contains(res.Diagnostics, "more noise") {
		t.Fatalf("Diagnostics = %q", res.Diagnostics)
	}
}
