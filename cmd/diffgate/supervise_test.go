package main

// Pins the gate's handling of its supervisor as seen from the CLI: a script
// that kills or stops its supervisor fails the run with a reason (never a
// pass; uncontained: contained, the script cannot signal it), and DIFFGATE_SUPERVISOR in the user's environment changes nothing.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
)

func TestRunSupervisorKilledOrStoppedFails(t *testing.T) {
	for _, sig := range []string{"KILL", "STOP"} {
		t.Run(sig, func(t *testing.T) {
			// The writer is started and running before the supervisor goes.
			ws, sh := fixture(t, "sh -c 'while :; do sleep 1; done' &\nuntil [ -n \"$(pgrep -P $! sleep)\" ]; do :; done\nkill -"+sig+" $PPID\nsleep 300")
			js := filepath.Join(t.TempDir(), "r.json")
			code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--timeout", "0", "--report", js, "--contain=off", "--", sh)
			if code != 1 || !strings.Contains(out, "LEFTOVER pid ") || !strings.Contains(out, "while :; do sleep 1; done") {
				t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
			}
			data, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			r, err := report.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"KILL": "killed", "STOP": "stopped"}[sig]
			if r.Verdict != "fail" || r.Process.Supervisor != want || !strings.Contains(strings.Join(r.Reasons, ";"), "supervisor "+want) {
				t.Fatalf("verdict %s supervisor %q reasons %q", r.Verdict, r.Process.Supervisor, r.Reasons)
			}
			if !bytes.Contains(data, []byte(`"supervisor": "`+want+`"`)) {
				t.Errorf("report JSON lacks \"supervisor\": %q", want)
			}
		})
	}
}

// TestRunIgnoresSupervisorVariable runs the CLI binary with and without
// DIFFGATE_SUPERVISOR=1: same exit code, same stdout, and the script sees
// the variable like any other.
func TestRunIgnoresSupervisorVariable(t *testing.T) {
	bin := testenv.CLI(t)
	ws, sh := fixture(t, "echo \"var=$DIFFGATE_SUPERVISOR\" >&2\necho x > new")
	run := func(env ...string) (int, string, string) {
		cmd := exec.Command(bin, "run", "--workspace", ws, "--no-history", "--env", "DIFFGATE_SUPERVISOR", "--", sh)
		cmd.Env = append(os.Environ(), env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(ws, "new"))
		return code, out.String(), errb.String()
	}
	code0, out0, _ := run()
	code1, out1, err1 := run("DIFFGATE_SUPERVISOR=1")
	if code0 != 1 || out0 != "ADDED new\n" || code1 != code0 || out1 != out0 || !strings.Contains(err1, "var=1") {
		t.Fatalf("without the variable: exit %d stdout %q; with it: exit %d stdout %q stderr %q", code0, out0, code1, out1, err1)
	}
}
