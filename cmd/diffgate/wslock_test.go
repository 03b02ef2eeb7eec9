//go:build unix

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/diffgate/diffgate/internal/testenv"
)

// started is a diffgate process under test whose stderr is read line by line.
type started struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	lines  chan string // stderr lines; closed at EOF
	errs   strings.Builder
}

func startCLI(t *testing.T, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(testenv.CLI(t), args...), lines: make(chan string, 100)}
	s.cmd.Stdout = &s.stdout
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	return s
}

// waitLine reads stderr until a line contains want (a safety deadline only).
func (s *started) waitLine(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("stderr ended without %q: %q", want, s.errs.String())
			}
			s.errs.WriteString(l + "\n")
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q on stderr: %q", want, s.errs.String())
		}
	}
}

// wait drains stderr and returns the exit code.
func (s *started) wait(t *testing.T) int {
	t.Helper()
	for l := range s.lines {
		s.errs.WriteString(l + "\n")
	}
	err := s.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestTwoRunsOnOneWorkspace runs real diffgate processes at once on one
// workspace: while the first one's script runs, a second run on the
// workspace (or a directory inside it) exits 2 with one line naming the
// first's pid, and a second run with --lock-wait waits, then runs on its own.
func TestTwoRunsOnOneWorkspace(t *testing.T) { testTwoRuns(t) }

func TestTwoRunsOnOneWorkspaceAsUser(t *testing.T) {
	testenv.CLI(t) // built here, used by the child
	if testenv.AsUser(t) {
		return
	}
	testTwoRuns(t)
}

func testTwoRuns(t *testing.T) {
	ws := testenv.UserTempDir(t)
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "release")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "first.sh")
	os.WriteFile(first, []byte(fmt.Sprintf("#!/bin/sh\necho first >> a.log\necho first-holds >&2\ncat '%s' >/dev/null\n", fifo)), 0o755)
	second := filepath.Join(dir, "second.sh")
	os.WriteFile(second, []byte("#!/bin/sh\necho second >> b.log\n"), 0o755)

	a := startCLI(t, "run", "--workspace", ws, "--no-history", "--allow", "a.log", "--", first)
	a.waitLine(t, "first-holds")
	pid := fmt.Sprintf("pid %d", a.cmd.Process.Pid)

	for _, w := range []string{ws, filepath.Join(ws, "sub")} {
		code, out, errs := cliRun(t, "run", "--workspace", w, "--no-history", "--allow", "b.log", "--", second)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, pid) ||
			!strings.Contains(errs, "being gated by another diffgate run") || !strings.Contains(errs, "--lock-wait DUR") {
			t.Errorf("second run on %s while the first runs: exit %d stdout %q stderr %q; want 2 and one line naming %s", w, code, out, errs, pid)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "b.log")); err == nil {
		t.Error("the refused run ran its script")
	}

	b := startCLI(t, "run", "--workspace", ws, "--no-history", "--allow", "b.log", "--lock-wait", "10m", "--", second)
	b.waitLine(t, "waiting for another diffgate run")
	// Release the first script: open the FIFO for writing and close it.
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if code := a.wait(t); code != 0 || a.stdout.String() != "" {
		t.Errorf("first run: exit %d stdout %q stderr %q", code, a.stdout.String(), a.errs.String())
	}
	// Each run saw only its own write: the second ran after the first ended.
	if code := b.wait(t); code != 0 || b.stdout.String() != "" {
		t.Errorf("waiting run: exit %d stdout %q stderr %q", code, b.stdout.String(), b.errs.String())
	}
}
