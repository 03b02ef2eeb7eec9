package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/testenv"
)

// histCLI runs the CLI in-process: exit code, stdout, stderr.
func histCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func histSHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// histReport is a recorded run's report: verdict fail unless pass is set.
func histReport(ws string, pass bool) *report.Report {
	e := func(p, content string, perm uint32) *snapshot.Entry {
		return &snapshot.Entry{Path: p, Type: snapshot.File, Perm: perm, Size: int64(len(content)), UID: -1, GID: -1, SHA256: histSHA(content)}
	}
	r := &report.Report{Schema: report.Schema, Workspace: ws,
		Script:    report.Script{Path: "/scripts/gen.sh", SHA256: histSHA("echo"), Args: []string{"a b"}},
		Allowlist: []string{"logs/"},
		StartedAt: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 3, 1, 10, 0, 1, 0, time.UTC)}
	r.Changes = []diff.Change{
		{Path: "logs/a.log", Kind: diff.Added, Aspects: []diff.Aspect{}, After: e("logs/a.log", "log\n", 0o644), Allowed: true, Rule: "logs/"},
	}
	if !pass {
		r.Changes = append(r.Changes,
			diff.Change{Path: "new\nline", Kind: diff.Added, Aspects: []diff.Aspect{}, After: e("new\nline", "x", 0o644)},
			diff.Change{Path: "run.sh", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Mode},
				Before: e("run.sh", "echo", 0o644), After: e("run.sh", "echo", 0o755)})
		r.Process.ExitCode = 3
	}
	r.Evaluate()
	return r
}

// histDB makes a database with runs: ws1 fail, ws1 pass, ws2 fail.
func histDB(t *testing.T) (path, ws1, ws2 string) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "h", "history.db")
	ws1, ws2 = filepath.Join(dir, "ws1"), filepath.Join(dir, "ws2")
	os.Mkdir(ws1, 0o755)
	os.Mkdir(ws2, 0o755)
	db, err := history.Open(path, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, r := range []*report.Report{histReport(ws1, false), histReport(ws1, true), histReport(ws2, false)} {
		if _, err := db.Record(context.Background(), &history.Run{Report: r}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	return path, ws1, ws2
}

func TestHistoryList(t *testing.T) {
	path, ws1, ws2 := histDB(t)
	code, out, errs := histCLI(t, "history", "--db", path)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("output:\n%s", out)
	}
	header := regexp.MustCompile(`^ID +STARTED +VERDICT +CONTAINED +ADDED +REMOVED +CHANGED +VIOLATIONS +BLOCKED +OUTSIDE +STAGE +WORKSPACE +SCRIPT$`)
	if !header.MatchString(lines[0]) {
		t.Errorf("header %q", lines[0])
	}
	row := regexp.MustCompile(`^3 +2026-03-01 \d\d:\d\d:00 +fail +- +2 +0 +1 +2 +0 +0 +- +` + regexp.QuoteMeta(ws2) + ` +/scripts/gen.sh$`)
	if !row.MatchString(lines[1]) {
		t.Errorf("row %q", lines[1])
	}
	// Columns are aligned: every line has VERDICT at the same offset.
	col := strings.Index(lines[0], "VERDICT")
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l[col:], "fail") && !strings.HasPrefix(l[col:], "pass") {
			t.Errorf("misaligned %q", l)
		}
	}
	// Filters; DIFFGATE_DB instead of --db.
	t.Setenv(history.EnvDB, path)
	for _, c := range []struct {
		args []string
		ids  []string
	}{
		{[]string{"--workspace", ws1}, []string{"2", "1"}},
		{[]string{"--verdict", "fail"}, []string{"3", "1"}},
		{[]string{"--workspace", ws1, "--verdict", "pass"}, []string{"2"}},
		{[]string{"--limit", "1"}, []string{"3"}},
		{[]string{"--limit", "0"}, []string{"3", "2", "1"}},
		{[]string{"--workspace", filepath.Join(ws1, "..", "ws1")}, []string{"2", "1"}},
	} {
		code, out, errs := histCLI(t, append([]string{"history"}, c.args...)...)
		var ids []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			ids = append(ids, strings.Fields(l)[0])
		}
		if code != 0 || strings.Join(ids, ",") != strings.Join(c.ids, ",") {
			t.Errorf("%v: exit %d ids %v (stderr %q), want %v", c.args, code, ids, errs, c.ids)
		}
	}
	code, out, errs = histCLI(t, "history", "--workspace", "/nowhere")
	if code != 0 || out != "" || !strings.Contains(errs, "no runs") {
		t.Errorf("no runs: %d %q %q", code, out, errs)
	}
	for _, bad := range [][]string{{"--verdict", "maybe"}, {"--limit", "-1"}, {"extra"}, {"--bogus"}, {"list", "x"}} {
		code, out, errs := histCLI(t, append([]string{"history"}, bad...)...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "diffgate: ") {
			t.Errorf("%v: exit %d %q %q", bad, code, out, errs)
		}
	}
}

func TestHistoryShow(t *testing.T) {
	path, ws1, _ := histDB(t)
	code, out, errs := histCLI(t, "history", "show", "1", "--db", path)
	want := "ADDED logs/a.log (allowed by logs/)\nADDED \"new\\nline\"\nCHANGED run.sh (mode 0644 -> 0755)\nEXIT 3\n"
	if code != 1 || out != want {
		t.Errorf("show 1: exit %d stdout %q, want 1 %q", code, out, want)
	}
	// --violations prints what the run printed.
	if code, out, _ := histCLI(t, "history", "show", "1", "--violations", "--db", path); code != 1 ||
		out != "ADDED \"new\\nline\"\nCHANGED run.sh (mode 0644 -> 0755)\nEXIT 3\n" {
		t.Errorf("show --violations 1: exit %d stdout %q", code, out)
	}
	if !strings.Contains(errs, "run 1: fail (2 unexpected changes, script exited 3)") ||
		!strings.Contains(errs, "workspace "+ws1+", script /scripts/gen.sh \"a b\"") {
		t.Errorf("header %q", errs)
	}
	code, out, errs = histCLI(t, "history", "show", "--db", path, "2")
	if code != 0 || out != "ADDED logs/a.log (allowed by logs/)\n" || !strings.Contains(errs, "run 2: pass") {
		t.Errorf("show 2: %d %q %q", code, out, errs)
	}
	code, _, errs = histCLI(t, "history", "show", "last", "--db", path)
	if code != 1 || !strings.Contains(errs, "run 3:") {
		t.Errorf("show last: %d %q", code, errs)
	}
	// A decision shows in the header.
	db, err := history.Open(path, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	db.Decide(context.Background(), 1, history.Reject, "touches run.sh")
	db.Close()
	if _, _, errs := histCLI(t, "history", "show", "1", "--db", path); !strings.Contains(errs, "decision: reject (touches run.sh)") {
		t.Errorf("decision header %q", errs)
	}
	for _, bad := range [][]string{{"99"}, {"x"}, {"0"}, {}, {"1", "2"}} {
		code, out, errs := histCLI(t, append([]string{"history", "show", "--db", path}, bad...)...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
			t.Errorf("show %v: %d %q %q", bad, code, out, errs)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.db")
	if code, _, errs := histCLI(t, "history", "show", "last", "--db", empty); code != 2 || !strings.Contains(errs, "no runs") {
		t.Errorf("show last on an empty database: %d %q", code, errs)
	}
}

// TestHistoryShowMatchesRun runs a real gated run with history and checks
// that history show prints what run printed.
func TestHistoryShowMatchesRun(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "run.sh"), []byte("echo\n"), 0o644)
	sh := filepath.Join(t.TempDir(), "gen.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\nchmod 755 run.sh\ntouch \"$(printf 'a\\nb')\" x\\\xff\nexit 4\n"), 0o755)
	db := filepath.Join(t.TempDir(), "history.db")
	code, runOut, errs := histCLI(t, "run", "--workspace", ws, "--db", db, "--", sh)
	if code != 1 || runOut == "" {
		t.Fatalf("run: exit %d stdout %q stderr %q", code, runOut, errs)
	}
	code, out, errs := histCLI(t, "history", "show", "last", "--violations", "--db", db)
	if code != 1 || out != runOut {
		t.Errorf("history show: exit %d\n%q\nwant\n%q\n(stderr %q)", code, out, runOut, errs)
	}
	// The JSON export equals the report the run wrote.
	rep := filepath.Join(t.TempDir(), "run.json")
	if code, _, errs := histCLI(t, "run", "--workspace", ws, "--db", db, "--report", rep, "--", sh); code != 1 {
		t.Fatalf("second run: %d %q", code, errs)
	}
	exp := filepath.Join(t.TempDir(), "export.json")
	if code, _, errs := histCLI(t, "history", "export", "last", "-o", exp, "--db", db); code != 0 {
		t.Fatalf("export: %d %q", code, errs)
	}
	a, _ := os.ReadFile(rep)
	b, _ := os.ReadFile(exp)
	if !bytes.Equal(a, b) {
		t.Errorf("export differs from the run's report:\n%s\n%s", a, b)
	}
	if code, out, _ := histCLI(t, "history", "verify", "--db", db); code != 0 || out != "ok: 2 runs, chain intact\n" {
		t.Errorf("verify: %d %q", code, out)
	}
}

// TestHistoryShowListsAllowedChanges records a real run whose allowlist
// allows some of its changes: history show lists them all, the allowed
// ones marked with the entry that allowed them.
func TestHistoryShowListsAllowedChanges(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "run.sh"), []byte("echo\n"), 0o644)
	sh := filepath.Join(t.TempDir(), "gen.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\nmkdir logs\necho x > logs/run.log\nchmod 755 run.sh\necho y > out.o\n"), 0o755)
	db := filepath.Join(t.TempDir(), "history.db")
	code, runOut, errs := histCLI(t, "run", "--workspace", ws, "--db", db, "--allow", "logs/,added:*.o", "--", sh)
	if code != 1 || runOut != "CHANGED run.sh (mode 0644 -> 0755)\n" {
		t.Fatalf("run: exit %d stdout %q stderr %q", code, runOut, errs)
	}
	code, out, errs := histCLI(t, "history", "show", "last", "--db", db)
	want := "ADDED logs (allowed by logs/)\nADDED logs/run.log (allowed by logs/)\nADDED out.o (allowed by added:*.o)\nCHANGED run.sh (mode 0644 -> 0755)\n"
	if code != 1 || out != want {
		t.Errorf("history show: exit %d\n%q\nwant\n%q\n(stderr %q)", code, out, want, errs)
	}
}

func TestHistoryExport(t *testing.T) {
	path, _, _ := histDB(t)
	dir := t.TempDir()
	for _, ext := range []string{".json", ".html", ".md"} {
		out := filepath.Join(dir, "r1"+ext)
		code, stdout, errs := histCLI(t, "history", "export", "1", "-o", out, "--db", path)
		if code != 0 || stdout != "" || errs != "" {
			t.Fatalf("export %s: %d %q %q", ext, code, stdout, errs)
		}
		data, err := os.ReadFile(out)
		if err != nil || len(data) == 0 {
			t.Fatalf("export %s: %v", ext, err)
		}
		if ext == ".json" {
			r, err := report.Parse(data)
			if err != nil || r.Verdict != "fail" || len(r.Changes) != 3 || r.Changes[1].Path != "new\nline" {
				t.Errorf("exported JSON: %+v %v", r, err)
			}
		}
	}
	for _, bad := range [][]string{{"1", "-o", filepath.Join(dir, "r.txt")}, {"1"}, {"9", "-o", filepath.Join(dir, "r.json")},
		{"1", "-o", filepath.Join(dir, "missing", "r.json")}} {
		code, _, errs := histCLI(t, append([]string{"history", "export", "--db", path}, bad...)...)
		if code != 2 || strings.Count(errs, "\n") != 1 {
			t.Errorf("export %v: %d %q", bad, code, errs)
		}
	}
}

func TestHistoryVerify(t *testing.T) {
	path, _, _ := histDB(t)
	code, out, _ := histCLI(t, "history", "verify", "--db", path)
	if code != 0 || out != "ok: 3 runs, chain intact\n" {
		t.Fatalf("verify: %d %q", code, out)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("UPDATE runs SET verdict = 'pass', reasons = x'00' WHERE id = 3"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	code, out, _ = histCLI(t, "history", "verify", "--db", path)
	if code != 1 || !strings.HasPrefix(out, "broken at run 3: ") || strings.Count(out, "\n") != 1 {
		t.Errorf("verify after an edit: %d %q", code, out)
	}
}

func TestHistoryBadDatabase(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	junk := bytes.Repeat([]byte("not sqlite "), 400)
	os.WriteFile(garbage, junk, 0o600)
	for _, args := range [][]string{
		{"history", "--db", garbage},
		{"history", "verify", "--db", garbage},
		{"allowlist", "show", "--workspace", dir, "--db", garbage},
		{"history", "--db", dir},
	} {
		code, out, errs := histCLI(t, args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, args[len(args)-1]) {
			t.Errorf("%v: exit %d %q %q", args, code, out, errs)
		}
	}
	if data, _ := os.ReadFile(garbage); !bytes.Equal(data, junk) {
		t.Error("the garbage file was altered")
	}
}

func TestAllowlistVerbs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	os.Symlink(ws, filepath.Join(dir, "link"))
	file := filepath.Join(dir, "allow.txt")
	os.WriteFile(file, []byte("# from a file\nlogs/run.log\n"), 0o644)

	code, out, errs := histCLI(t, "allowlist", "show", "--workspace", ws, "--db", db)
	if code != 2 || out != "" || !strings.Contains(errs, "no approved allowlist") {
		t.Errorf("show before approval: %d %q %q", code, out, errs)
	}
	code, out, errs = histCLI(t, "allowlist", "approve", "--workspace", ws, "--allow", ".cache/,added:out/*.o", "--allowlist", file, "--note", "first", "--db", db)
	if code != 0 || out != "approved allowlist version 1 for "+ws+": 3 entries (3 added, 0 removed)\n" {
		t.Fatalf("approve 1: %d %q %q", code, out, errs)
	}
	// Through a symlink, the same workspace.
	code, out, errs = histCLI(t, "allowlist", "approve", "--workspace", filepath.Join(dir, "link"), "--allow", ".cache/", "--allow", "logs/", "--note", "second", "--db", db)
	if code != 0 || !strings.HasPrefix(out, "approved allowlist version 2 for "+ws+": 2 entries (1 added, 2 removed)") {
		t.Fatalf("approve 2: %d %q %q", code, out, errs)
	}
	code, out, errs = histCLI(t, "allowlist", "show", "--workspace", ws, "--db", db)
	if code != 0 || out != ".cache/\nlogs/\n" || !strings.Contains(errs, "version 2") || !strings.Contains(errs, "second") {
		t.Errorf("show latest: %d %q %q", code, out, errs)
	}
	code, out, _ = histCLI(t, "allowlist", "show", "--workspace", ws, "--version", "1", "--db", db)
	if code != 0 || out != ".cache/\nadded:out/*.o\nlogs/run.log\n" {
		t.Errorf("show 1: %d %q", code, out)
	}
	code, out, _ = histCLI(t, "allowlist", "diff", "--workspace", ws, "1", "2", "--db", db)
	if code != 0 || out != "-added:out/*.o\n-logs/run.log\n+logs/\n" {
		t.Errorf("diff 1 2: %d %q", code, out)
	}
	code, out, _ = histCLI(t, "allowlist", "list", "--workspace", ws, "--db", db)
	if code != 0 || !regexp.MustCompile(`^VERSION +APPROVED +ENTRIES +NOTE\n1 +\S+ \S+ +3 +first\n2 +\S+ \S+ +2 +second\n$`).MatchString(out) {
		t.Errorf("list: %d %q", code, out)
	}
	// An empty allowlist can be approved explicitly.
	code, out, errs = histCLI(t, "allowlist", "approve", "--workspace", ws, "--allow", "", "--note", "nothing", "--db", db)
	if code != 0 || !strings.Contains(out, "version 3") || !strings.Contains(out, "0 entries") {
		t.Errorf("approve empty: %d %q %q", code, out, errs)
	}
	// The run verb uses the approved allowlist.
	t.Setenv(history.EnvDB, db)
	code, _, _ = histCLI(t, "allowlist", "approve", "--workspace", ws, "--allow", "made", "--note", "for run")
	if code != 0 {
		t.Fatal("approve 4")
	}
	sh := filepath.Join(dir, "gen.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\necho > made\n"), 0o755)
	code, out, errs = histCLI(t, "run", "--workspace", ws, "--allowlist-from-history", "--", sh)
	if code != 0 {
		t.Errorf("run with the approved allowlist: %d %q %q", code, out, errs)
	}
	if h, err := history.Open(db, zerolog.Nop()); err == nil {
		if r, err := h.Get(context.Background(), 1); err != nil || r.AllowlistVersion != 4 {
			t.Errorf("the run recorded allowlist version %v (%v)", r, err)
		}
		h.Close()
	}

	for _, bad := range [][]string{
		{},
		{"frobnicate"},
		{"show"},
		{"show", "--workspace", ws, "--version", "9"},
		{"show", "--workspace", ws, "--version", "-1"},
		{"approve", "--workspace", ws, "--note", "x"},
		{"approve", "--workspace", ws, "--allow", "a"},
		{"approve", "--workspace", filepath.Join(dir, "missing"), "--allow", "a", "--note", "x"},
		{"approve", "--workspace", ws, "--allowlist", filepath.Join(dir, "missing.txt"), "--note", "x"},
		{"approve", "--workspace", ws, "--allow", "added:", "--note", "x"},
		{"diff", "--workspace", ws, "1"},
		{"diff", "--workspace", ws, "1", "x"},
		{"diff", "--workspace", ws, "1", "9"},
	} {
		code, out, errs := histCLI(t, append([]string{"allowlist"}, bad...)...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "diffgate: ") {
			t.Errorf("allowlist %v: exit %d %q %q", bad, code, out, errs)
		}
	}
}

// TestGatedScriptCannotApproveItsAllowlist: a gated script that finds the
// history database runs the real CLI to approve '**' for its workspace and
// to record a run of its own. Both are refused; the next run with
// --allowlist-from-history still fails the forbidden change; history verify
// stays intact, and catches an allowlist edited directly in SQLite, which
// the gate then refuses to use.
func TestGatedScriptCannotApproveItsAllowlist(t *testing.T) {
	bin := testenv.CLI(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "config.json"), []byte("{}\n"), 0o644)
	out := t.TempDir()
	db := filepath.Join(t.TempDir(), "history.db")
	if code, _, errs := histCLI(t, "allowlist", "approve", "--workspace", ws, "--db", db, "--allow", "logs/", "--note", "reviewed"); code != 0 {
		t.Fatalf("approve: %d %q", code, errs)
	}
	script := func(content string) string {
		sh := filepath.Join(t.TempDir(), "gen.sh")
		text := fmt.Sprintf(`#!/bin/sh
BIN='%s' DB='%s' OUT='%s'
"$BIN" allowlist approve --workspace "$PWD" --db "$DB" --allow '**' --note mine 2>"$OUT/approve.err"
echo $? > "$OUT/approve.code"
"$BIN" run --workspace "$PWD" --db "$DB" -- /bin/true 2>"$OUT/run.err"
echo $? > "$OUT/run.code"
echo '%s' > config.json
`, bin, db, out, content)
		os.WriteFile(sh, []byte(text), 0o755)
		return sh
	}
	gate := func(sh string) (int, string, string) {
		// --writable: the script records its attempts outside the workspace.
		cmd := exec.Command(bin, "run", "--workspace", ws, "--db", db, "--allowlist-from-history", "--writable", out, "--", sh)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
	for i, content := range []string{`{"a": 1}`, `{"a": 2}`} {
		code, stdout, stderr := gate(script(content))
		if code != 1 || stdout != "CHANGED config.json\n" {
			t.Fatalf("gated run %d: exit %d stdout %q stderr %q", i+1, code, stdout, stderr)
		}
		for _, what := range []string{"approve", "run"} {
			rc, _ := os.ReadFile(filepath.Join(out, what+".code"))
			msg, _ := os.ReadFile(filepath.Join(out, what+".err"))
			if strings.TrimSpace(string(rc)) != "2" || !strings.Contains(string(msg), "refused inside a gated run") ||
				strings.Count(string(msg), "\n") != 1 {
				t.Errorf("run %d: %s from inside the gate: exit %q, stderr %q", i+1, what, rc, msg)
			}
		}
	}
	code, stdout, _ := histCLI(t, "allowlist", "show", "--workspace", ws, "--db", db)
	if code != 0 || stdout != "logs/\n" {
		t.Errorf("allowlist after the runs: %d %q", code, stdout)
	}
	if code, stdout, _ := histCLI(t, "history", "verify", "--db", db); code != 0 || stdout != "ok: 2 runs, chain intact\n" {
		t.Errorf("verify: %d %q", code, stdout)
	}
	// The same script with SQLite at hand: edit the approved entries.
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("UPDATE allowlists SET entries = x'01022a2a'"); err != nil { // ["**"]
		t.Fatal(err)
	}
	raw.Close()
	code, stdout, _ = histCLI(t, "history", "verify", "--db", db)
	real, _ := filepath.EvalSymlinks(ws)
	if want := "broken at allowlist version 1 of " + real + ": "; code != 1 || !strings.HasPrefix(stdout, want) || strings.Count(stdout, "\n") != 1 {
		t.Errorf("verify after the edit: %d %q, want 1 %q...", code, stdout, want)
	}
	code, stdout, stderr := gate(script(`{"a": 3}`))
	if code != 2 || stdout != "" || !strings.Contains(stderr, "hash chain") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("run with the edited allowlist: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

// TestReadOnlyHistoryCLI: as a normal user, a database in a read-only
// directory, itself 0444, is listed, shown and verified; a run that would
// record into it and an approval exit 2 with one line, before the script runs.
func TestReadOnlyHistoryCLI(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	path, ws, _ := histDB(t)
	os.Chmod(path, 0o444)
	os.Chmod(filepath.Dir(path), 0o555)
	t.Cleanup(func() { os.Chmod(filepath.Dir(path), 0o755) })
	if code, out, errs := histCLI(t, "history", "--db", path); code != 0 || strings.Count(out, "\n") != 4 {
		t.Errorf("list: %d %q %q", code, out, errs)
	}
	if code, out, errs := histCLI(t, "history", "show", "2", "--db", path); code != 0 || out == "" {
		t.Errorf("show: %d %q %q", code, out, errs)
	}
	if code, out, errs := histCLI(t, "history", "verify", "--db", path); code != 0 || out != "ok: 3 runs, chain intact\n" {
		t.Errorf("verify: %d %q %q", code, out, errs)
	}
	sh := filepath.Join(t.TempDir(), "gen.sh")
	marker := filepath.Join(t.TempDir(), "ran")
	os.WriteFile(sh, []byte("#!/bin/sh\ntouch '"+marker+"'\n"), 0o755)
	code, out, errs := histCLI(t, "run", "--workspace", ws, "--db", path, "--", sh)
	if code != 2 || out != "" || !strings.Contains(errs, "read-only") || strings.Count(errs, "\n") != 1 {
		t.Errorf("run into a read-only database: %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the script ran though the run could not be recorded")
	}
	code, out, errs = histCLI(t, "allowlist", "approve", "--workspace", ws, "--db", path, "--allow", "x", "--note", "n")
	if code != 2 || out != "" || !strings.Contains(errs, "read-only") || strings.Count(errs, "\n") != 1 {
		t.Errorf("approve into a read-only database: %d %q %q", code, out, errs)
	}
}

// TestHardLinkedHistoryRefused: a run whose database has a hard link inside
// the workspace is refused before the script runs.
func TestHardLinkedHistoryRefused(t *testing.T) {
	ws := t.TempDir()
	db := filepath.Join(t.TempDir(), "history.db")
	sh := filepath.Join(t.TempDir(), "gen.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\necho x > out\n"), 0o755)
	if code, _, errs := histCLI(t, "run", "--workspace", ws, "--db", db, "--allow", "out", "--", sh); code != 0 {
		t.Fatalf("first run: %d %q", code, errs)
	}
	if err := os.Link(db, filepath.Join(ws, "notes.txt")); err != nil {
		t.Skipf("hard link: %v", err)
	}
	code, out, errs := histCLI(t, "run", "--workspace", ws, "--db", db, "--allow", "out", "--", sh)
	if code != 2 || out != "" || !strings.Contains(errs, "hard links") || strings.Count(errs, "\n") != 1 {
		t.Errorf("run with the database hard-linked into the workspace: %d %q %q", code, out, errs)
	}
}

// TestHistoryShowKeepsExtensions: what a run's report holds beyond the
// first schema (unreadable entries, the supervisor's fate, the interpreter)
// is recorded, shown and exported.
func TestHistoryShowKeepsExtensions(t *testing.T) {
	ws := t.TempDir()
	rep := histReport(ws, false)
	rep.Unreadable = []diff.Unknown{{Path: "locked", When: "after", Reason: "permission denied"}}
	rep.Process.Supervisor = "killed"
	rep.Script.Command = "/bin/sh"
	rep.Evaluate()
	path := filepath.Join(t.TempDir(), "history.db")
	db, err := history.Open(path, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Record(context.Background(), &history.Run{Report: rep}, nil, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	want := strings.Join(rep.Lines(), "\n") + "\n"
	code, out, errs := histCLI(t, "history", "show", "last", "--violations", "--db", path)
	if code != 1 || out != want || !strings.Contains(out, "UNREADABLE locked") {
		t.Errorf("show --violations: %d %q (stderr %q), want %q", code, out, errs, want)
	}
	if code, out, _ := histCLI(t, "history", "show", "last", "--db", path); code != 1 || !strings.Contains(out, "UNREADABLE locked") {
		t.Errorf("show: %d %q", code, out)
	}
	exp := filepath.Join(t.TempDir(), "r.json")
	if code, _, errs := histCLI(t, "history", "export", "last", "-o", exp, "--db", path); code != 0 {
		t.Fatalf("export: %d %q", code, errs)
	}
	data, _ := os.ReadFile(exp)
	for _, s := range []string{`"supervisor": "killed"`, `"command": "/bin/sh"`, `"unreadable"`} {
		if !strings.Contains(string(data), s) {
			t.Errorf("export lacks %s", s)
		}
	}
}
