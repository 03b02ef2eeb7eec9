//go:build unix

package proc_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/proc"
)

// writeScript writes body to a script outside the workspace and returns the
// workspace and the script path.
func writeScript(t *testing.T, body string, mode os.FileMode) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// runScript runs a "#!/bin/sh" script with a safety timeout.
func runScript(t *testing.T, body string, edit func(*proc.Spec)) *proc.Result {
	t.Helper()
	dir, path := writeScript(t, "#!/bin/sh\n"+body, 0o755)
	spec := proc.Spec{Dir: dir, Path: path, Timeout: 20 * time.Second}
	if edit != nil {
		edit(&spec)
	}
	res, err := proc.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestExitZero(t *testing.T) {
	t.Parallel()
	res := runScript(t, "exit 0\n", nil)
	if res.ExitCode != 0 || res.Signal != "" || res.TimedOut || res.Cancelled || len(res.Leftovers) != 0 {
		t.Fatalf("unexpected result %+v", res)
	}
	if res.Started.IsZero() || res.Finished.Before(res.Started) {
		t.Fatalf("bad times %v %v", res.Started, res.Finished)
	}
}

func TestExitCode3(t *testing.T) {
	t.Parallel()
	res := runScript(t, "echo failing >&2\nexit 3\n", nil)
	if res.ExitCode != 3 || res.Signal != "" {
		t.Fatalf("exit %d signal %q, want 3", res.ExitCode, res.Signal)
	}
	if got := string(res.Stderr.Head); got != "failing\n" {
		t.Fatalf("stderr %q", got)
	}
}

func TestKilledBySignal(t *testing.T) {
	t.Parallel()
	res := runScript(t, "kill -KILL $$\n", nil)
	if res.ExitCode != -1 || res.Signal != "killed" {
		t.Fatalf("exit %d signal %q, want -1 killed", res.ExitCode, res.Signal)
	}
}

func TestOutputCapturedInOrder(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[proc.Stream]*bytes.Buffer{proc.Stdout: {}, proc.Stderr: {}}
	res := runScript(t, `i=1
while [ $i -le 300 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done
`, func(s *proc.Spec) {
		s.Output = func(st proc.Stream, p []byte) {
			mu.Lock()
			got[st].Write(p)
			mu.Unlock()
		}
	})
	var wantOut, wantErr strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&wantOut, "out %d\n", i)
		fmt.Fprintf(&wantErr, "err %d\n", i)
	}
	if got[proc.Stdout].String() != wantOut.String() {
		t.Errorf("streamed stdout differs:\n%s", got[proc.Stdout])
	}
	if got[proc.Stderr].String() != wantErr.String() {
		t.Errorf("streamed stderr differs:\n%s", got[proc.Stderr])
	}
	if string(res.Stdout.Head) != wantOut.String() || res.Stdout.Tail != nil || res.Stdout.Total != int64(wantOut.Len()) {
		t.Errorf("captured stdout differs: total %d", res.Stdout.Total)
	}
	if string(res.Stderr.Head) != wantErr.String() || res.Stderr.Total != int64(wantErr.Len()) {
		t.Errorf("captured stderr differs: total %d", res.Stderr.Total)
	}
}

// TestOutputStreamedLive checks that output reaches Output while the script
// is still running: the script waits for a file that the callback creates
// when it sees the script's first line.
func TestOutputStreamedLive(t *testing.T) {
	t.Parallel()
	dir, path := writeScript(t, `#!/bin/sh
echo ping
i=0
while [ ! -e go ]; do
  i=$((i+1)); [ $i -gt 400 ] && exit 7
  sleep 0.025
done
echo pong
`, 0o755)
	var once sync.Once
	var mu sync.Mutex
	var out bytes.Buffer
	begin := time.Now()
	res, err := proc.Run(context.Background(), proc.Spec{
		Dir: dir, Path: path, Timeout: 20 * time.Second,
		Output: func(s proc.Stream, p []byte) {
			mu.Lock()
			out.Write(p)
			seen := strings.Contains(out.String(), "ping\n")
			mu.Unlock()
			if seen {
				once.Do(func() { _ = os.WriteFile(filepath.Join(dir, "go"), nil, 0o644) })
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || string(res.Stdout.Head) != "ping\npong\n" {
		t.Fatalf("exit %d stdout %q: output was not streamed while the script ran", res.ExitCode, res.Stdout.Head)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	res := runScript(t, "i=0; while [ $i -lt 1000 ]; do printf '%04d' $i; i=$((i+1)); done\n", func(s *proc.Spec) { s.KeepBytes = 12 })
	if res.Stdout.Total != 4000 || string(res.Stdout.Head) != "000000010002" || string(res.Stdout.Tail) != "099709980999" {
		t.Fatalf("got head %q tail %q total %d", res.Stdout.Head, res.Stdout.Tail, res.Stdout.Total)
	}
	if !res.Stdout.Truncated() {
		t.Fatal("Truncated() = false")
	}
}

func TestStdinIsDevNull(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	res := runScript(t, "cat\nread line || echo eof\n", nil)
	if d := time.Since(begin); d > 5*time.Second {
		t.Fatalf("reading stdin took %v", d)
	}
	if res.ExitCode != 0 || res.TimedOut || string(res.Stdout.Head) != "eof\n" {
		t.Fatalf("unexpected result %+v stdout %q", res, res.Stdout.Head)
	}
}

func TestDirArgsEnv(t *testing.T) {
	t.Parallel()
	dir, path := writeScript(t, `#!/bin/sh
pwd -P
printf '<%s>\n' "$@"
echo "FOO=$FOO"
env | grep -c '^DIFFGATE_SUPERVISOR=' || true
`, 0o755)
	res, err := proc.Run(context.Background(), proc.Spec{
		Dir: dir, Path: path, Args: []string{"a b", "", "c"},
		Env:     []string{"FOO=bar", "PATH=" + os.Getenv("PATH"), "DIFFGATE_SUPERVISOR=1"},
		Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	// DIFFGATE_SUPERVISOR means nothing to the gate: it reaches the script
	// like any other variable.
	want := real + "\n<a b>\n<>\n<c>\nFOO=bar\n1\n"
	if got := string(res.Stdout.Head); got != want {
		t.Fatalf("got %q, want %q (stderr %q)", got, want, res.Stderr.Head)
	}
}

func TestTimeoutKillsTree(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	res := runScript(t, "sleep 300 &\nsleep 300\n", func(s *proc.Spec) {
		s.Timeout = time.Second
		s.Grace = time.Second
	})
	if d := time.Since(begin); d > 5*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	if !res.TimedOut || res.Cancelled || res.ExitCode != -1 || res.Signal != "terminated" {
		t.Fatalf("unexpected result %+v", res)
	}
	if len(res.Leftovers) != 0 {
		t.Fatalf("processes that died from SIGTERM reported as leftovers: %+v", res.Leftovers)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	dir, path := writeScript(t, "#!/bin/sh\nsleep 300\n", 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	begin := time.Now()
	res, err := proc.Run(ctx, proc.Spec{Dir: dir, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Fatalf("cancellation took %v", d)
	}
	if !res.Cancelled || res.TimedOut || res.ExitCode != -1 || res.Signal != "terminated" {
		t.Fatalf("unexpected result %+v", res)
	}
}

func TestBigOutputBoundedMemory(t *testing.T) {
	const total = 200_000_000
	var streamed int64
	var maxHeap uint64
	calls := 0
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		maxHeap = max(maxHeap, ms.HeapInuse)
	}
	res := runScript(t, "head -c 200000000 /dev/zero\necho done >&2\n", func(s *proc.Spec) {
		s.Output = func(st proc.Stream, p []byte) {
			if st == proc.Stdout {
				streamed += int64(len(p)) // stdout is delivered by one goroutine
				calls++
				if calls%256 == 0 {
					sample()
				}
			}
		}
	})
	sample()
	if res.ExitCode != 0 || res.Stdout.Total != total || streamed != total {
		t.Fatalf("exit %d total %d streamed %d, want %d", res.ExitCode, res.Stdout.Total, streamed, total)
	}
	if len(res.Stdout.Head) != proc.DefaultKeepBytes || len(res.Stdout.Tail) != proc.DefaultKeepBytes {
		t.Fatalf("head %d tail %d bytes", len(res.Stdout.Head), len(res.Stdout.Tail))
	}
	if bytes.ContainsFunc(res.Stdout.Head, func(r rune) bool { return r != 0 }) ||
		bytes.ContainsFunc(res.Stdout.Tail, func(r rune) bool { return r != 0 }) {
		t.Fatal("captured bytes are not the script's zeros")
	}
	if string(res.Stderr.Head) != "done\n" {
		t.Fatalf("stderr %q", res.Stderr.Head)
	}
	if maxHeap > 50<<20 {
		t.Fatalf("heap in use reached %d MB", maxHeap>>20)
	}
	t.Logf("max heap in use %.1f MB", float64(maxHeap)/(1<<20))
}

func TestMissingScript(t *testing.T) {
	t.Parallel()
	_, err := proc.Run(context.Background(), proc.Spec{Dir: t.TempDir(), Path: filepath.Join(t.TempDir(), "nope.sh")})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "nope.sh") {
		t.Fatalf("err = %v", err)
	}
	_, path := writeScript(t, "#!/bin/sh\n", 0o755)
	_, err = proc.Run(context.Background(), proc.Spec{Dir: filepath.Join(t.TempDir(), "missing"), Path: path})
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("missing workspace: err = %v", err)
	}
}

func TestBadInterpreter(t *testing.T) {
	t.Parallel()
	dir, path := writeScript(t, "#!/nonexistent/interp\necho hi\n", 0o755)
	_, err := proc.Run(context.Background(), proc.Spec{Dir: dir, Path: path})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "/nonexistent/interp") {
		t.Fatalf("err = %v", err)
	}
}

func TestNonExecutableScripts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
		exit       int
		out        string
	}{
		{"shebang", "#!/bin/sh\necho \"hi $1\"\n", 0o644, 0, "hi x\n"},
		{"shebang with argument", "#!/bin/sh -e\necho before\nfalse\necho after\n", 0o644, 1, "before\n"},
		{"no shebang", "echo plain $1\n", 0o644, 0, "plain x\n"},
		{"executable without shebang", "echo plain $1\n", 0o755, 0, "plain x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, path := writeScript(t, tc.body, tc.mode)
			res, err := proc.Run(context.Background(), proc.Spec{Dir: dir, Path: path, Args: []string{"x"}, Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tc.exit || string(res.Stdout.Head) != tc.out {
				t.Fatalf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Head, res.Stderr.Head)
			}
		})
	}
}
