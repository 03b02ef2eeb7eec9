package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
)

// testRunForeignABI: a gated script whose system calls go through the i386
// entry (INT $0x80) and x32 reaches nothing (no datagram to a listener on
// 127.0.0.1, no connection to a unix socket outside the workspace, no
// hook planted where .git/hooks did not exist, no chmod outside), and the
// gate fails with one BLOCKED syscall-abi line per call, in stdout, every
// report format and the history.
func testRunForeignABI(t *testing.T, helper string) {
	base, err := os.MkdirTemp("/tmp", "dg-abi-cli-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws, outside, sock := filepath.Join(base, "ws"), filepath.Join(base, "outside.txt"), filepath.Join(base, "engine.sock")
	os.MkdirAll(filepath.Join(ws, ".git", "objects"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644)
	os.WriteFile(outside, []byte("x\n"), 0o644)
	port, udpStop := testenv.ListenUDP(t)
	unixStop := testenv.ListenUnix(t, sock)
	os.Chmod(sock, 0o777)
	sh := filepath.Join(base, "s.sh")
	os.WriteFile(sh, []byte(fmt.Sprintf("#!/bin/sh\n%s udp %d unix %s userfaultfd io_uring keyctl hook .git/hooks write .git/config chmod %s x32\n",
		helper, port, sock, outside)), 0o755)
	js, md, html, db := filepath.Join(base, "r.json"), filepath.Join(base, "r.md"), filepath.Join(base, "r.html"), filepath.Join(base, "h.db")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--report", js, "--report", md, "--report", html, "--", sh)
	if n := udpStop(); n != 0 {
		t.Errorf("the UDP listener received %d datagrams", n)
	}
	if n := unixStop(); n != 0 {
		t.Errorf("the unix socket listener accepted %d connections", n)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git", "hooks")); err == nil {
		t.Error(".git/hooks was created")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config = %q", b)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode() != 0o644 {
		t.Errorf("%s: mode %v %v", outside, fi.Mode(), err)
	}
	want := []string{"i386 socket (359) (2 times)", "i386 userfaultfd (374)", "i386 io_uring_setup (425)", "i386 keyctl (288)",
		"i386 mkdir (39)", "i386 open (5) (2 times)", "i386 chmod (15)", "x32 socket (41)"}
	if code != 1 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	for _, w := range want {
		if !strings.Contains(out, "BLOCKED syscall-abi "+w+"\n") {
			t.Errorf("stdout lacks BLOCKED syscall-abi %s:\n%s", w, out)
		}
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range rep.Blocked {
		if b.Kind == "syscall-abi" && b.PID > 0 && b.Op != "" {
			n++
		}
	}
	if rep.Verdict != "fail" || n != len(want) {
		t.Errorf("report: verdict %s, %d syscall-abi of %+v", rep.Verdict, n, rep.Blocked)
	}
	for _, f := range []string{md, html} {
		b, _ := os.ReadFile(f)
		if !strings.Contains(string(b), "syscall-abi") || !strings.Contains(string(b), "i386 keyctl (288)") {
			t.Errorf("%s lacks the syscall-abi findings", filepath.Base(f))
		}
	}
	if code, show, errs := cliRun(t, "history", "show", "last", "--violations", "--db", db); code != 1 || !strings.Contains(show, "BLOCKED syscall-abi i386 keyctl (288)\n") {
		t.Errorf("history show: exit %d\n%s\n%s", code, show, errs)
	}
}

func TestRunForeignABI(t *testing.T) { testRunForeignABI(t, testenv.Int80(t)) }

func TestRunForeignABIAsUser(t *testing.T) {
	helper := testenv.Int80(t)
	if testenv.AsUser(t) {
		return
	}
	testRunForeignABI(t, helper)
}
