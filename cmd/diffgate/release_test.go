package main

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

// TestReleaseBinaryHasNoTestHooks: the CLI built as it ships (no
// testhooks tag) holds none of the switches that turn containment off or
// kill an apply for a test, so no environment variable can reach them; the
// test build has them (the check would find them if they were there).
func TestReleaseBinaryHasNoTestHooks(t *testing.T) {
	hooks := []string{"DIFFGATE_TEST_", "DIFFGATE_TEST_NO_LANDLOCK", "DIFFGATE_TEST_NO_NOTIFY", "DIFFGATE_TEST_NO_MOUNTS",
		"DIFFGATE_NO_CGROUP", "DIFFGATE_TEST_APPLY_KILL_AFTER", "DIFFGATE_STAGE_MECHANISM"}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "diffgate")
	// As make package stamps the version in (VERSION_X in the Makefile).
	cmd := exec.Command("go", "build", "-o", bin, "-ldflags",
		"-X=github.com/diffgate/diffgate/internal/version.version=v9.8.7-1-gfedcba9 -X=github.com/diffgate/diffgate/internal/version.commit=fedcba9876543210fedcba9876543210fedcba98",
		"./cmd/diffgate")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/diffgate: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "--version").Output(); err != nil || string(out) != "diffgate v9.8.7-1-gfedcba9 (commit fedcba987654)\n" {
		t.Errorf("the release binary's --version: %q, %v", out, err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks {
		if bytes.Contains(data, []byte(h)) {
			t.Errorf("the release binary contains %s", h)
		}
	}
	test, err := os.ReadFile(testenv.CLI(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks[:4] {
		if !bytes.Contains(test, []byte(h)) {
			t.Errorf("the test build lacks %s: the check above proves nothing", h)
		}
	}
}

// TestStageMechanismFlag pins run --stage-mechanism: copy stages by copy
// (and implies --stage), the report's stage object records what was asked
// for ("requested"), plain --stage asks for auto, and a bad value is one
// usage line, before the script runs.
func TestStageMechanismFlag(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	db := filepath.Join(t.TempDir(), "h.db")
	for _, tc := range []struct {
		flag, mech, requested string
	}{
		{"--stage-mechanism=copy", "copy", "copy"},
		{"--stage", "", "auto"},
	} {
		ws, sh := fixture(t, "echo x > made")
		js := filepath.Join(t.TempDir(), "r.json")
		code, out, errs := cliRun(t, "run", tc.flag, "--db", db, "--workspace", ws, "--report", js, "--", sh)
		if code != 1 || out != "ADDED made\n" || !strings.Contains(errs, "staged as run") {
			t.Fatalf("%s: exit %d stdout %q stderr %q", tc.flag, code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(ws, "made")); err == nil {
			t.Fatalf("%s: the staged run wrote the workspace", tc.flag)
		}
		data, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		r, err := report.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stage == nil || r.Stage.Requested != tc.requested || (tc.mech != "" && r.Stage.Mechanism != tc.mech) {
			t.Fatalf("%s: stage %+v", tc.flag, r.Stage)
		}
	}
	ws, sh := fixture(t, "echo x > made")
	code, out, errs := cliRun(t, "run", "--stage-mechanism", "tmpfs", "--db", db, "--workspace", ws, "--", sh)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, `--stage-mechanism "tmpfs": want auto, overlay or copy`) {
		t.Fatalf("bad mechanism: exit %d stdout %q stderr %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err == nil {
		t.Fatal("the script ran")
	}
}
