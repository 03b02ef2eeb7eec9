package proc_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/core/proc"
)

var tokenSeq atomic.Int64

// waitMark is a shell function that waits until a process started with
// DGMARK=$1 in its environment has been exec'd (so its command line is final).
const waitMark = `waitmark() {
  i=0
  until grep -qsa "DGMARK=$1" /proc/[0-9]*/environ; do
    i=$((i+1)); [ $i -gt 1000 ] && { echo "mark $1 never seen" >&2; exit 9; }
    sleep 0.01
  done
}
`

// runTagged runs a script whose whole tree carries a unique token in its
// environment, so that escaped processes can be found afterwards.
func runTagged(t *testing.T, body string, edit func(*proc.Spec)) (*proc.Result, string, string) {
	t.Helper()
	tok := fmt.Sprintf("%d-%d-%d", os.Getpid(), tokenSeq.Add(1), time.Now().UnixNano())
	dir, path := writeScript(t, "#!/bin/sh\n"+waitMark+body, 0o755)
	spec := proc.Spec{
		Dir: dir, Path: path, Args: []string{tok},
		Env:     append(os.Environ(), "DGTEST_TOKEN="+tok),
		Timeout: 20 * time.Second,
	}
	if edit != nil {
		edit(&spec)
	}
	res, err := proc.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() { killTagged(tok) })
	return res, tok, dir
}

// tagged returns "pid cmdline" of every living process carrying tok.
func tagged(tok string) []string {
	var out []string
	want := []byte("DGTEST_TOKEN=" + tok + "\x00")
	names, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, n := range names {
		env, err := os.ReadFile(n)
		if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, want...)) {
			continue
		}
		d := filepath.Dir(n)
		if !threadGroupAlive(d) {
			continue
		}
		cmd, _ := os.ReadFile(d + "/cmdline")
		out = append(out, filepath.Base(d)+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

// threadGroupAlive reports whether any thread of the process /proc/PID (dir)
// is alive (a process whose main thread exited shows as a zombie while its
// other threads run).
func threadGroupAlive(dir string) bool {
	stats, _ := filepath.Glob(dir + "/task/*/stat")
	for _, s := range stats {
		st, err := os.ReadFile(s)
		if i := bytes.LastIndexByte(st, ')'); err == nil && i > 0 && len(st) > i+2 && st[i+2] != 'Z' && st[i+2] != 'X' {
			return true
		}
	}
	return false
}

// killTagged kills whatever escaped, so a failing test leaves nothing behind.
func killTagged(tok string) {
	for i := 0; i < 200; i++ {
		alive := tagged(tok)
		if len(alive) == 0 {
			return
		}
		for _, sig := range []unix.Signal{unix.SIGSTOP, unix.SIGKILL} {
			for _, p := range alive {
				if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
					_ = unix.Kill(pid, sig)
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertAllGone checks that every leftover is dead and nothing tagged survives.
func assertAllGone(t *testing.T, res *proc.Result, tok string, checkPIDs bool) {
	t.Helper()
	if checkPIDs {
		for _, l := range res.Leftovers {
			if err := unix.Kill(l.PID, 0); !errors.Is(err, unix.ESRCH) {
				t.Errorf("leftover %d (%s) still exists after Run returned: kill(pid, 0) = %v", l.PID, l.Cmd, err)
			}
		}
	}
	if alive := tagged(tok); len(alive) > 0 {
		t.Errorf("processes of the script still alive after Run returned: %q", alive)
	}
}

func hasLeftover(res *proc.Result, sub string) bool {
	for _, l := range res.Leftovers {
		if strings.Contains(l.Cmd, sub) {
			return true
		}
	}
	return false
}

func TestLeftoversCaughtAndKilled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body string }{
		{"background", "DGMARK=$1 sleep 300 &\nwaitmark $1\n"},
		{"setsid", "DGMARK=$1 setsid sleep 300 &\nwaitmark $1\n"},
		{"double fork", "(DGMARK=$1 sleep 300 &) &\nwaitmark $1\n"},
		{"nohup", "DGMARK=$1 nohup sleep 300 >/dev/null 2>&1 &\nwaitmark $1\n"},
		{"setsid double fork", "( (DGMARK=$1 setsid sleep 300 &) & ) &\nwaitmark $1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, tok, _ := runTagged(t, tc.body, nil)
			if res.ExitCode != 0 {
				t.Fatalf("exit %d, stderr %q", res.ExitCode, res.Stderr.Head)
			}
			if !hasLeftover(res, "sleep 300") {
				t.Errorf("no leftover with %q: %+v", "sleep 300", res.Leftovers)
			}
			assertAllGone(t, res, tok, true)
		})
	}
}

func TestDaemonCannotWriteLater(t *testing.T) {
	t.Parallel()
	res, tok, dir := runTagged(t, "(sleep 2; echo x > late.txt) &\n", nil)
	if res.ExitCode != 0 || len(res.Leftovers) == 0 {
		t.Fatalf("exit %d leftovers %+v", res.ExitCode, res.Leftovers)
	}
	assertAllGone(t, res, tok, true)
	time.Sleep(3 * time.Second)
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a process wrote into the workspace after Run returned (stat: %v)", err)
	}
}

func TestForkingLeftoversDoNotEscape(t *testing.T) {
	t.Parallel()
	res, tok, _ := runTagged(t, "(while :; do sleep 300 & done) &\nsleep 0.3\n", nil)
	if res.ExitCode != 0 || len(res.Leftovers) == 0 {
		t.Fatalf("exit %d leftovers %d", res.ExitCode, len(res.Leftovers))
	}
	assertAllGone(t, res, tok, false)
	t.Logf("%d leftovers", len(res.Leftovers))
}

func TestTimeoutWithTermIgnored(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	res, tok, _ := runTagged(t, "trap '' TERM\nDGMARK=$1 sleep 300 &\nwaitmark $1\necho ready\nsleep 300\n", func(s *proc.Spec) {
		s.Timeout = 1500 * time.Millisecond
		s.Grace = 500 * time.Millisecond
	})
	if d := time.Since(begin); d > 6*time.Second {
		t.Fatalf("took %v", d)
	}
	assertAllGone(t, res, tok, true)
	if string(res.Stdout.Head) != "ready\n" {
		// The script was not even past its trap when the timeout hit.
		t.Skipf("machine too slow: script not ready within the timeout (%+v)", res)
	}
	if !res.TimedOut || res.ExitCode != -1 || res.Signal != "killed" {
		t.Fatalf("unexpected result %+v", res)
	}
	if !hasLeftover(res, "sleep 300") {
		t.Errorf("the processes that survived SIGTERM are not reported: %+v", res.Leftovers)
	}
}

func TestNoLeftoversWhenAllDone(t *testing.T) {
	t.Parallel()
	res, tok, _ := runTagged(t, "sleep 0.1 &\nwait\n", nil)
	if res.ExitCode != 0 || len(res.Leftovers) != 0 {
		t.Fatalf("exit %d leftovers %+v", res.ExitCode, res.Leftovers)
	}
	assertAllGone(t, res, tok, true)
}

// TestGateDeathKillsTree kills a process that is inside Run (a copy of this
// test binary running TestHelperGate) and checks that the supervisor then
// tears the script's tree down.
func TestGateDeathKillsTree(t *testing.T) {
	t.Parallel()
	tok := fmt.Sprintf("gate-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { killTagged(tok) })
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperGate$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DGTEST_HELPER_TOKEN="+tok)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case <-ready:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("helper never got ready")
	}
	if len(tagged(tok)) < 3 {
		t.Fatalf("expected the script and two sleeps, found %q", tagged(tok))
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for len(tagged(tok)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive := tagged(tok); len(alive) > 0 {
		t.Fatalf("processes survived the death of the gate: %q", alive)
	}
}

// TestHelperGate is run by TestGateDeathKillsTree in a separate process.
func TestHelperGate(t *testing.T) {
	tok := os.Getenv("DGTEST_HELPER_TOKEN")
	if tok == "" {
		t.Skip("helper for TestGateDeathKillsTree")
	}
	dir, path := writeScript(t, "#!/bin/sh\n"+waitMark+`DGMARK=$1 sleep 300 &
DGMARK=$1-s setsid sleep 300 &
waitmark $1; waitmark $1-s
echo ready
sleep 300
`, 0o755)
	_, _ = proc.Run(context.Background(), proc.Spec{
		Dir: dir, Path: path, Args: []string{tok}, Grace: 500 * time.Millisecond,
		Env: append(os.Environ(), "DGTEST_TOKEN="+tok),
		Output: func(s proc.Stream, p []byte) {
			if s == proc.Stdout {
				_, _ = os.Stdout.Write(p)
			}
		},
	})
	t.Fatal("Run returned although the gate should have been killed")
}

// TestLeftoverCommandIsTheExecdOne: leftovers are reported as the command
// they run ("sleep 300"), read once they are frozen. The script waits until
// every background command has been exec'd (an event it can observe), so
// that is what the supervisor must report, on any machine.
func TestLeftoverCommandIsTheExecdOne(t *testing.T) {
	t.Parallel()
	res, tok, _ := runTagged(t, `for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do DGMARK=$1-$i sleep 300 & done
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do waitmark $1-$i; done
exit 0
`, nil)
	if res.ExitCode != 0 || len(res.Leftovers) != 15 {
		t.Fatalf("exit %d, %d leftovers %+v", res.ExitCode, len(res.Leftovers), res.Leftovers)
	}
	for _, l := range res.Leftovers {
		if l.Cmd != "sleep 300" {
			t.Errorf("leftover %d command %q, want %q", l.PID, l.Cmd, "sleep 300")
		}
	}
	assertAllGone(t, res, tok, true)
}

// TestLeftoversCaughtBetweenForkAndExec: a script that starts background
// commands and exits at once leaves children that may still be between fork
// and exec when it ends. The supervisor gives them a bounded moment to exec;
// on a loaded machine some may not, and then they can only be reported as
// what they are when frozen, the pre-exec copy of the shell. What is known
// either way: every one is reported, as one of those two commands, and
// killed.
func TestLeftoversCaughtBetweenForkAndExec(t *testing.T) {
	t.Parallel()
	preExec := 0
	for i := 0; i < 4; i++ {
		res, tok, _ := runTagged(t, "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do sleep 300 & done\nexit 0\n", nil)
		if res.ExitCode != 0 || len(res.Leftovers) != 15 {
			t.Fatalf("run %d: exit %d, %d leftovers %+v", i, res.ExitCode, len(res.Leftovers), res.Leftovers)
		}
		for _, l := range res.Leftovers {
			switch {
			case l.Cmd == "sleep 300":
			case strings.HasPrefix(l.Cmd, "/bin/sh ") && strings.Contains(l.Cmd, "script.sh "+tok):
				preExec++
			default:
				t.Errorf("run %d: leftover %d command %q, want %q or the script's shell", i, l.PID, l.Cmd, "sleep 300")
			}
		}
		assertAllGone(t, res, tok, true)
	}
	t.Logf("%d of 60 leftovers were caught before their exec", preExec)
}

// TestThreadOutlivingMainThreadIsALeftover: a background process whose main
// thread called pthread_exit is a zombie in /proc/PID/stat while its other
// thread runs on. It is a leftover: reported, killed, and gone (its thread
// group reaped) when Run returns, so it can never write into the workspace.
func TestThreadOutlivingMainThreadIsALeftover(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	res, tok, dir := runTagged(t, `python3 -c '
import ctypes, os, threading, time
def later():
    while not os.path.exists("go"):
        time.sleep(0.01)
    open("late.txt", "w").write("written after the verdict")
threading.Thread(target=later).start()
ctypes.CDLL(None).pthread_exit(None)
' &
pid=$!
echo $pid > bgpid
# Exit only once the main thread is gone and the process shows as a zombie.
i=0
until [ "$(sed 's/.*) //' /proc/$pid/stat | cut -c1)" = Z ]; do
  i=$((i+1)); [ $i -gt 2000 ] && exit 9; sleep 0.01
done
`, nil)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d, stderr %q", res.ExitCode, res.Stderr.Head)
	}
	b, err := os.ReadFile(filepath.Join(dir, "bgpid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
		t.Errorf("the process whose thread outlived its main thread (pid %d) still exists after Run returned: kill(pid, 0) = %v", pid, err)
	}
	found := false
	for _, l := range res.Leftovers {
		found = found || l.PID == pid && strings.Contains(l.Cmd, "python3")
	}
	if !found {
		t.Errorf("pid %d (python3) not reported as a leftover: %+v", pid, res.Leftovers)
	}
	// Were the thread still running, it would now write late.txt.
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	assertAllGone(t, res, tok, true)
}
