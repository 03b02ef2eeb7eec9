package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The flags in -h are written as the usage lines write them.
func TestHelpMatchesUsage(t *testing.T) {
	_, out, _ := cliRun(t, "history", "export", "-h")
	if !strings.Contains(out, "\n  -o FILE ") || strings.Contains(out, "--o ") {
		t.Errorf("history export -h:\n%s\nwant -o FILE as the usage line writes it", out)
	}
	_, out, _ = cliRun(t, "allowlist", "approve", "-h")
	if !strings.Contains(out, "--note TEXT") || strings.Contains(out, "--note string") {
		t.Errorf("allowlist approve -h:\n%s\nwant --note TEXT", out)
	}
}

// --allowlist - reads the entries from standard input; counts are plural
// only when they are not one.
func TestAllowlistStdinAndPlurals(t *testing.T) {
	old := stdin
	t.Cleanup(func() { stdin = old })

	ws, sh := fixture(t, "echo x > new; echo y > other")
	stdin = strings.NewReader("# entries\nnew\n")
	code, out, errs := cliRun(t, "run", "--no-history", "--workspace", ws, "--allowlist", "-", "--", sh)
	if code != 1 || out != "ADDED other\n" {
		t.Fatalf("run --allowlist -: exit %d stdout %q stderr %q; want only other unexpected", code, out, errs)
	}

	db := filepath.Join(t.TempDir(), "h.db")
	stdin = strings.NewReader("logs/\n")
	code, out, errs = cliRun(t, "allowlist", "approve", "--workspace", ws, "--allowlist", "-", "--note", "one", "--db", db)
	if code != 0 || !strings.Contains(out, ": 1 entry (1 added, 0 removed)\n") {
		t.Fatalf("approve: exit %d stdout %q stderr %q; want \"1 entry\"", code, out, errs)
	}
	code, out, errs = cliRun(t, "history", "verify", "--db", db)
	if code != 0 || strings.Contains(out, "1 runs") {
		t.Fatalf("verify: exit %d stdout %q stderr %q", code, out, errs)
	}
}

// --allowlist-from-history names the approved version it used, on stderr
// and in the JSON report.
func TestAllowlistFromHistoryNamesVersion(t *testing.T) {
	ws, sh := fixture(t, "echo x > new")
	db := filepath.Join(t.TempDir(), "h.db")
	for i, list := range []string{"logs/", "new"} {
		if code, out, errs := cliRun(t, "allowlist", "approve", "--workspace", ws, "--allow", list, "--note", "ok by review "+list, "--db", db); code != 0 {
			t.Fatalf("approve %d: exit %d %q %q", i+1, code, out, errs)
		}
	}
	rep := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--allowlist-from-history", "--report", rep, "--", sh)
	if code != 0 || out != "" {
		t.Fatalf("run: exit %d stdout %q stderr %q", code, out, errs)
	}
	if !strings.Contains(errs, "\nallowlist: version 2, approved ") && !strings.HasPrefix(errs, "allowlist: version 2, approved ") {
		t.Fatalf("stderr %q: want the line naming version 2", errs)
	}
	if !strings.Contains(errs, "(ok by review new)\n") {
		t.Fatalf("stderr %q: want the approval's note", errs)
	}
	r := readReport(t, rep)
	if a := r.AllowlistApproved; a == nil || a.Version != 2 || a.ApprovedAt == nil || a.Note != "ok by review new" {
		t.Fatalf("report allowlist_approved %+v, want version 2 with its time and note", a)
	}
	// A run without it has none.
	code, _, errs = cliRun(t, "run", "--workspace", ws, "--db", db, "--allow", "new", "--report", rep, "--", sh)
	if r := readReport(t, rep); code != 0 || r.AllowlistApproved != nil || strings.Contains(errs, "allowlist: version") {
		t.Fatalf("run with --allow: exit %d, allowlist_approved %+v, stderr %q", code, r.AllowlistApproved, errs)
	}
	// history export keeps the version.
	exp := filepath.Join(t.TempDir(), "e.json")
	if code, out, errs := cliRun(t, "history", "export", "1", "-o", exp, "--db", db); code != 0 {
		t.Fatalf("export: %d %q %q", code, out, errs)
	}
	if a := readReport(t, exp).AllowlistApproved; a == nil || a.Version != 2 {
		t.Fatalf("exported allowlist_approved %+v, want version 2", a)
	}
}

// A script without execute permission is refused as a shell would: exit
// 126, one line, nothing run, no run recorded and no stage left.
func TestNonExecutableScript(t *testing.T) {
	ws, sh := fixture(t, "echo x > new")
	if err := os.Chmod(sh, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "h.db")
	for _, flags := range [][]string{{"--no-history"}, {"--db", db}, {"--db", db, "--stage"}} {
		args := append(append([]string{"run", "--workspace", ws}, flags...), "--", sh)
		code, out, errs := cliRun(t, args...)
		if code != 126 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "not executable") {
			t.Errorf("%v: exit %d stdout %q stderr %q; want 126 and one line", flags, code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(ws, "new")); err == nil {
			t.Fatalf("%v: the script ran", flags)
		}
	}
	if code, out, _ := cliRun(t, "history", "list", "--db", db); code != 0 || out != "" {
		t.Errorf("history list: exit %d %q; want no run", code, out)
	}
}

// **/__pycache__/ allows the folder and what is below it, in run, diff and
// an approved allowlist alike.
func TestGlobTrailingSlashCLI(t *testing.T) {
	ws, sh := fixture(t, "mkdir -p pkg/__pycache__ && echo x > pkg/__pycache__/m.pyc && echo y > other")
	before := filepath.Join(t.TempDir(), "b.json")
	if code, _, errs := cliRun(t, "snapshot", ws, "-o", before); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := cliRun(t, "run", "--no-history", "--workspace", ws, "--allow", "**/__pycache__/", "--", sh)
	if code != 1 || out != "ADDED other\n" {
		t.Fatalf("run: exit %d stdout %q stderr %q; want only other unexpected", code, out, errs)
	}
	after := filepath.Join(t.TempDir(), "a.json")
	if code, _, errs := cliRun(t, "snapshot", ws, "-o", after); code != 0 {
		t.Fatal(errs)
	}
	if code, out, errs := cliRun(t, "diff", "--allow", "**/__pycache__/", before, after); code != 1 || out != "ADDED other\n" {
		t.Fatalf("diff: exit %d stdout %q stderr %q; want only other unexpected", code, out, errs)
	}

	ws2, sh2 := fixture(t, "mkdir -p a/b/__pycache__ && echo x > a/b/__pycache__/m.pyc")
	db := filepath.Join(t.TempDir(), "h.db")
	if code, out, errs := cliRun(t, "allowlist", "approve", "--workspace", ws2, "--allow", "**/__pycache__/", "--note", "bytecode", "--db", db); code != 0 {
		t.Fatalf("approve: %d %q %q", code, out, errs)
	}
	if code, out, errs := cliRun(t, "run", "--db", db, "--workspace", ws2, "--allowlist-from-history", "--", sh2); code != 0 || out != "" {
		t.Fatalf("run --allowlist-from-history: exit %d stdout %q stderr %q", code, out, errs)
	}
}

// With GITHUB_STEP_SUMMARY set, a run appends its Markdown report to it
// (what was there stays); a summary that cannot be written is one line and
// the verdict stands.
func TestStepSummary(t *testing.T) {
	ws, sh := fixture(t, "echo x > new")
	sum := filepath.Join(t.TempDir(), "summary.md")
	os.WriteFile(sum, []byte("earlier step\n"), 0o644)
	t.Setenv("GITHUB_STEP_SUMMARY", sum)
	code, out, errs := cliRun(t, "run", "--no-history", "--workspace", ws, "--", sh)
	if code != 1 || out != "ADDED new\n" {
		t.Fatalf("run: exit %d stdout %q stderr %q", code, out, errs)
	}
	data, _ := os.ReadFile(sum)
	if !strings.HasPrefix(string(data), "earlier step\n") || !strings.Contains(string(data), "new") || !strings.Contains(string(data), "FAIL") {
		t.Fatalf("step summary:\n%s\nwant the earlier text, then the run's Markdown report", data)
	}

	t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(t.TempDir(), "no", "such", "dir"))
	code, out, errs = cliRun(t, "run", "--no-history", "--workspace", ws, "--allow", "new", "--", sh)
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if code != 0 || out != "" || !strings.Contains(errs, "GITHUB_STEP_SUMMARY") || !strings.HasPrefix(lines[len(lines)-1], "PASS") {
		t.Fatalf("unwritable summary: exit %d stdout %q stderr %q; want 0, one line naming it, the summary last", code, out, errs)
	}
}

// A HOME where the stage directory cannot be made: one line naming
// ~/.cache/diffgate/stages and XDG_CACHE_HOME, exit 2, the workspace
// untouched; XDG_CACHE_HOME then moves it.
func TestStageUnwritableHome(t *testing.T) {
	ws, sh := fixture(t, "echo x > new")
	db := filepath.Join(t.TempDir(), "h.db")
	// Below a regular file: not a directory, even for root.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	t.Setenv("HOME", filepath.Join(file, "home"))
	t.Setenv("XDG_CACHE_HOME", "")
	code, out, errs := cliRun(t, "run", "--stage", "--db", db, "--workspace", ws, "--", sh)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "~/.cache/diffgate/stages") || !strings.Contains(errs, "XDG_CACHE_HOME") {
		t.Fatalf("exit %d stdout %q stderr %q; want 2 and one line naming ~/.cache/diffgate/stages and XDG_CACHE_HOME", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, "new")); err == nil {
		t.Fatal("the script ran")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if code, _, errs := cliRun(t, "run", "--stage", "--db", db, "--workspace", ws, "--allow", "new", "--", sh); code != 0 {
		t.Fatalf("with XDG_CACHE_HOME: exit %d stderr %q", code, errs)
	}
}

// Inline code is named as the command line that ran it, sh -c '…' (cut to
// 200 characters), in the history list and the Markdown report.
func TestInlineScriptNamed(t *testing.T) {
	ws, _ := fixture(t, "")
	db := filepath.Join(t.TempDir(), "h.db")
	md := filepath.Join(t.TempDir(), "r.md")
	code, out, errs := cliRun(t, "run", "--db", db, "--workspace", ws, "--allow", "new", "--report", md, "--", "sh", "-c", "echo 'it' > new")
	if code != 0 || out != "" {
		t.Fatalf("run: exit %d stdout %q stderr %q", code, out, errs)
	}
	want := `sh -c 'echo '\''it'\'' > new'`
	if code, out, _ := cliRun(t, "history", "list", "--db", db); code != 0 || !strings.Contains(out, want) || strings.Contains(out, "/usr/bin/sh") {
		t.Errorf("history list:\n%s\nwant the script column %s", out, want)
	}
	if data, _ := os.ReadFile(md); !strings.Contains(string(data), want) {
		t.Errorf("Markdown:\n%s\nwant the script %s", data, want)
	}
	long := "echo " + strings.Repeat("a", 300) + " > new"
	if code, _, errs := cliRun(t, "run", "--db", db, "--workspace", ws, "--allow", "new", "--", "sh", "-c", long); code != 0 {
		t.Fatalf("run: exit %d stderr %q", code, errs)
	}
	_, out, _ = cliRun(t, "history", "list", "--db", db, "--limit", "1")
	line := strings.Split(strings.TrimSpace(out), "\n")[1]
	col := line[strings.Index(line, "sh -c '"):]
	if n := len([]rune(col)); n != 200 || !strings.HasSuffix(col, "…") {
		t.Errorf("long inline script: column %q (%d characters), want 200 ending in …", col, n)
	}
	// A script file stays its path.
	_, sh := fixture(t, "true")
	cliRun(t, "run", "--db", db, "--workspace", ws, "--", sh)
	if _, out, _ = cliRun(t, "history", "list", "--db", db, "--limit", "1"); !strings.Contains(out, sh) {
		t.Errorf("history list:\n%s\nwant %s", out, sh)
	}
}
