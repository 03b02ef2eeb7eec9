//go:build !js

package ui

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
)

// sameWorkspace makes a workspace with the files every front end's run of
// the cross-front-end scenario starts from.
func sameWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	big := strings.Repeat("a line of a big text file\n", 12000) // > 256 KiB
	bin := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	for name, body := range map[string]string{
		"settings.ini": "[main]\ndebug = false\nlevel = 1\n",
		"notes.txt":    "keep me\n",
		"logo.png":     bin,
		"big.log":      big,
		"old.txt":      "to be removed\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, err := history.WorkspaceKey(ws)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// cliRun runs the CLI binary's run verb with history in db and returns its
// JSON report.
func cliRun(t *testing.T, cli, db, ws, script string, allow string) *report.Report {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(cli, "run", "--workspace", ws, "--db", db, "--allow", allow, "--report", out, "--", script)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("diffgate run: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no report: %v\n%s", err, b)
	}
	r, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// outcome is what must not depend on the front end: verdict, reasons and
// each change with its text diff (and why it has none).
func outcome(r *report.Report) []string {
	out := []string{"verdict " + r.Verdict, "reasons " + strings.Join(r.Reasons, "; ")}
	for _, c := range r.Changes {
		as := make([]string, len(c.Aspects))
		for i, a := range c.Aspects {
			as[i] = string(a)
		}
		out = append(out, string(c.Kind)+" "+c.Path+" ["+strings.Join(as, ",")+"] allowed="+
			map[bool]string{true: "yes", false: "no"}[c.Allowed]+" rule="+c.Rule+" risk="+string(c.Risk)+
			" note="+c.DiffNote+"\n"+c.TextDiff)
	}
	return out
}

// TestCLIAndAppRunTheSamePipeline runs one scenario, twice on the same
// workspace, through the CLI binary and through the app's Run tab (each
// with its own history database) and gets the same reports. The second run
// reuses the first run's hashes, so its text diff of settings.ini needs the
// before-content from the history: the app used to show none.
func TestCLIAndAppRunTheSamePipeline(t *testing.T) {
	cli := testenv.CLI(t)
	scripts := t.TempDir()
	// The snapshots assume a fine timestamp granularity (the default is
	// 2 s), so that the second run reuses the hash of settings.ini, just
	// edited by the first.
	const granularity = time.Nanosecond
	t.Setenv("DIFFGATE_TEST_GRANULARITY", granularity.String())
	first := writeScriptNamed(t, scripts, "first.sh", "sed -i 's/level = 1/level = 2/' settings.ini\n")
	second := writeScriptNamed(t, scripts, "second.sh",
		"sed -i 's/debug = false/debug = true/' settings.ini\nprintf 'x\\000y' > logo.png\necho more >> big.log\necho new > added.txt\nrm old.txt\n")

	wsCLI, wsApp := sameWorkspace(t), sameWorkspace(t)
	dbCLI := filepath.Join(t.TempDir(), "cli.db")
	var cliReports []*report.Report
	for _, s := range []string{first, second} {
		cliReports = append(cliReports, cliRun(t, cli, dbCLI, wsCLI, s, "added.txt"))
	}

	u, l, _ := newTestUI(t, Options{DBPath: filepath.Join(t.TempDir(), "app.db"), Granularity: granularity})
	u.run.stage.SetChecked(false) // direct runs, as the CLI's default
	var appReports []*report.Report
	for _, s := range []string{first, second} {
		u.run.setInputs(wsApp, s, []string{"added.txt"})
		appReports = append(appReports, runInputs(t, u, l))
	}

	for i := range cliReports {
		c, a := outcome(cliReports[i]), outcome(appReports[i])
		if !slices.Equal(c, a) {
			t.Errorf("run %d differs:\nCLI: %q\napp: %q", i+1, c, a)
		}
	}
	// Both carry the second run's diff of settings.ini.
	for name, r := range map[string]*report.Report{"CLI": cliReports[1], "app": appReports[1]} {
		c := changeOf(r, "settings.ini")
		if c == nil || !strings.Contains(c.TextDiff, "-debug = false\n+debug = true") {
			t.Errorf("%s: run 2's settings.ini has no diff: %+v", name, c)
		}
		if c := changeOf(r, "added.txt"); c == nil || !c.Allowed || c.Kind != diff.Added {
			t.Errorf("%s: added.txt %+v", name, c)
		}
	}
}

func changeOf(r *report.Report, path string) *diff.Change {
	for i := range r.Changes {
		if r.Changes[i].Path == path {
			return &r.Changes[i]
		}
	}
	return nil
}

func writeScriptNamed(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRepeatedRunKeepsTheDiff: run 1 is a no-op, run 2 edits settings.ini
// with sed. Run 2 reuses settings.ini's hash, so the gate never reads its
// before-content: the history's text store, filled by run 1, supplies it.
// The CLI and the app both show the diff, and a change without one says
// why (binary, too-large).
func TestRepeatedRunKeepsTheDiff(t *testing.T) {
	cli := testenv.CLI(t)
	scripts := t.TempDir()
	noop := writeScriptNamed(t, scripts, "noop.sh", "true\n")
	edit := writeScriptNamed(t, scripts, "edit.sh",
		"sed -i 's/debug = false/debug = true/' settings.ini\nprintf 'x\\000y' > logo.png\necho more >> big.log\nrm old.txt\n")
	wsCLI, wsApp := sameWorkspace(t), sameWorkspace(t)
	// Run 2 reuses run 1's hashes at once: the snapshots assume a fine
	// timestamp granularity (files a user runs a script on are usually
	// older than the default 2 s).
	const granularity = time.Nanosecond
	t.Setenv("DIFFGATE_TEST_GRANULARITY", granularity.String())

	dbCLI := filepath.Join(t.TempDir(), "cli.db")
	cliRun(t, cli, dbCLI, wsCLI, noop, "")
	cliRep := cliRun(t, cli, dbCLI, wsCLI, edit, "")

	u, l, _ := newTestUI(t, Options{DBPath: filepath.Join(t.TempDir(), "app.db"), Granularity: granularity})
	// Direct, as the CLI's: a staged run also diffs big.log, from the
	// untouched workspace (TestLoadFullDiffInTheApp).
	u.run.stage.SetChecked(false)
	for _, s := range []string{noop, edit} {
		u.run.setInputs(wsApp, s, []string{})
		runInputs(t, u, l)
	}
	appRep := u.Review().Report()

	if c, a := outcome(cliRep), outcome(appRep); !slices.Equal(c, a) {
		t.Errorf("run 2 differs:\nCLI: %q\napp: %q", c, a)
	}
	for name, r := range map[string]*report.Report{"CLI": cliRep, "app": appRep} {
		if c := changeOf(r, "settings.ini"); c == nil || !strings.Contains(c.TextDiff, "-debug = false\n+debug = true") {
			t.Errorf("%s: run 2's settings.ini has no diff: %+v", name, c)
		}
		if c := changeOf(r, "old.txt"); c == nil || !strings.Contains(c.TextDiff, "-to be removed") {
			t.Errorf("%s: removed old.txt has no diff: %+v", name, c)
		}
		for path, note := range map[string]string{"logo.png": diff.NoteBinary, "big.log": diff.NoteTooLarge} {
			if c := changeOf(r, path); c == nil || c.TextDiff != "" || c.DiffNote != note {
				t.Errorf("%s: %s: want diff_note %q, got %+v", name, path, note, c)
			}
		}
	}
}
