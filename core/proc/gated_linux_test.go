package proc_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/internal/testenv"
)

// TestHelperInGatedRun is run by the scripts of TestInGatedRun: it writes
// what InGatedRun says into the file named by its argument.
func TestHelperInGatedRun(t *testing.T) {
	args := flag.Args()
	if len(args) != 2 || args[0] != "ingated" {
		t.Skip("helper for TestInGatedRun")
	}
	if err := os.WriteFile(args[1], []byte(fmt.Sprint(proc.InGatedRun())), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInGatedRun(t *testing.T) { testInGatedRun(t) }

func TestInGatedRunAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testInGatedRun(t)
}

func testInGatedRun(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if proc.InGatedRun() {
		t.Fatal("InGatedRun() = true in the test process itself")
	}
	helper := fmt.Sprintf("%q -test.run='^TestHelperInGatedRun$' -- ingated", bin)
	// Each way of starting the helper writes "true" or "false" into out; the
	// script waits until the file is there (the helper may be a daemon).
	for _, tc := range []struct{ name, start string }{
		{"child", helper + " out"},
		{"env cleared", "env -i " + helper + " out"},
		{"setsid double fork", "( (env -i setsid " + helper + " out.tmp && mv out.tmp out) & ) &"},
		{"nohup background", "nohup " + helper + " out.tmp >/dev/null 2>&1 && mv out.tmp out &"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := writeScript(t, "#!/bin/sh\n"+tc.start+`
i=0
until [ -e out ]; do i=$((i+1)); [ $i -gt 2000 ] && exit 9; sleep 0.01; done
`, 0o755)
			res, err := proc.Run(context.Background(), proc.Spec{Dir: dir, Path: path, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(dir, "out"))
			if res.ExitCode != 0 || string(got) != "true" {
				t.Fatalf("exit %d, InGatedRun wrote %q, want true (stderr %q)", res.ExitCode, got, res.Stderr.Head)
			}
		})
	}
	// Outside a run: the helper started directly by the test.
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "-test.run=^TestHelperInGatedRun$", "--", "ingated", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, []byte("false")) {
		t.Fatalf("outside a run InGatedRun wrote %q, want false", got)
	}
}
