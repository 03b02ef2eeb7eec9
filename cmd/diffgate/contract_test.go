package main

// These tests pin docs/contract.md (the shared contract, copied whole, and
// the repository's marked extensions): verbs, flags, output lines, exit
// codes. contractdoc_test.go holds the document itself to the code.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/testenv"
)

func TestMain(m *testing.M) {
	pipeline.Supervise()
	os.Exit(m.Run())
}

// cliRun runs the CLI in-process and returns exit code, stdout, stderr.
func cliRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// fixture makes a workspace and a script outside it.
func fixture(t *testing.T, script string) (ws, sh string) {
	t.Helper()
	ws = t.TempDir()
	os.MkdirAll(filepath.Join(ws, "logs"), 0o755)
	os.WriteFile(filepath.Join(ws, "config.json"), []byte("{\"a\": 1}\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "run.sh"), []byte("echo\n"), 0o644)
	sh = filepath.Join(t.TempDir(), "gen.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\n"+script+"\n"), 0o755)
	return ws, sh
}

func TestRunContract(t *testing.T) {
	cases := []struct {
		name, script string
		flags        []string
		code         int
		stdout       string
	}{
		{"pass", "echo ok", nil, 0, ""},
		{"seed allow syntax", "echo x >> logs/run.log; mkdir -p .cache; echo 1 > .cache/k", []string{"--allow", ".cache/,logs/run.log"}, 0, ""},
		{"empty allow list allows nothing", "echo x > new", []string{"--allow", ""}, 1, "ADDED new\n"},
		{"unexpected change", "echo '{}' > config.json", []string{"--allow", "logs/"}, 1, "CHANGED config.json\n"},
		{"mode detail", "chmod 755 run.sh", nil, 1, "CHANGED run.sh (mode 0644 -> 0755)\n"},
		{"removed", "rm run.sh", nil, 1, "REMOVED run.sh\n"},
		{"glob and kinds", "echo 1 > logs/a.log; echo 2 > logs/b.txt", []string{"--allow", "added:logs/*.log"}, 1, "ADDED logs/b.txt\n"},
		{"deny beats allow", "echo 1 > logs/secret", []string{"--allow", "logs/,!logs/secret"}, 1, "ADDED logs/secret (denied by !logs/secret)\n"},
		{"braces in --allow are one entry", "mkdir out; echo 1 > out/a.o; echo 2 > out/b.o; echo 3 > out/c.o", []string{"--allow", "out/{a,b}.o"}, 1, "ADDED out/c.o\n"},
		{"a risk entry allows only the risk", "echo x >> run.sh", []string{"--allow", "setuid:run.sh"}, 1, "CHANGED run.sh\n"},
		{"workspace root", "chmod 2777 .", []string{"--allow", "**"}, 1, "CHANGED . (mode 0755 -> 2777)\n"},
		// Hashing 15 TiB of holes takes hours: --timeout bounds the
		// after-snapshot too, and an allow entry does not silence what the
		// gate could not read.
		{"unreadable entry", "truncate -s 15T big", []string{"--allow", "big", "--timeout", "10s", "--contain=off"}, 1, "UNREADABLE big (not hashed: timed out)\n"},
		{"a risk entry allows only the risk, not the content next to it", "echo x >> run.sh; chmod u+s run.sh", []string{"--allow", "setuid:run.sh"}, 1,
			"CHANGED run.sh (mode 0644 -> 4644, setuid, allow with run.sh and setuid:run.sh)\n"},
		{"a risk entry and a plain entry allow both", "echo x >> run.sh; chmod u+s run.sh", []string{"--allow", "setuid:run.sh,run.sh"}, 0, ""},
		{"exit code", "exit 3", nil, 1, "EXIT 3\n"},
		{"timeout", "sleep 30", []string{"--timeout", "1s"}, 1, "TIMEOUT 1s\n"},
		{"newline path quoted", "touch \"$(printf 'a\\nb')\"", nil, 1, "ADDED \"a\\nb\"\n"},
		{"invalid utf-8 quoted", "touch \"$(printf 'x\\377')\"", nil, 1, "ADDED \"x\\xff\"\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, sh := fixture(t, tc.script)
			args := append([]string{"run", "--workspace", ws, "--no-history"}, tc.flags...)
			code, out, errs := cliRun(t, append(args, "--", sh)...)
			if code != tc.code || out != tc.stdout {
				t.Fatalf("exit %d stdout %q (stderr %q); want %d %q", code, out, errs, tc.code, tc.stdout)
			}
		})
	}
}

func TestRunLeftoverLine(t *testing.T) {
	ws, sh := fixture(t, "sleep 300 &")
	code, out, _ := cliRun(t, "run", "--workspace", ws, "--no-history", "--", sh)
	if code != 1 || !strings.HasPrefix(out, "LEFTOVER pid ") || !strings.Contains(out, "sleep 300") {
		t.Fatalf("exit %d stdout %q", code, out)
	}
}

func TestRunOutputGoesToStderrAndStdinIsNull(t *testing.T) {
	ws, sh := fixture(t, "echo to-out; echo to-err >&2; cat; pwd")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--", sh, "arg1")
	if code != 0 || out != "" {
		t.Fatalf("exit %d stdout %q", code, out)
	}
	real, _ := filepath.EvalSymlinks(ws)
	for _, want := range []string{"to-out", "to-err", real} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr %q lacks %q", errs, want)
		}
	}
}

func TestRunScriptArgsAreNotGateFlags(t *testing.T) {
	ws, sh := fixture(t, `[ "$1" = "--timeout" ] && [ "$2" = "x" ] || exit 9`)
	if code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--", sh, "--timeout", "x"); code != 0 {
		t.Fatalf("exit %d %q %q", code, out, errs)
	}
}

func TestRunAllowlistFile(t *testing.T) {
	ws, sh := fixture(t, "echo x >> logs/run.log; echo y > out.o")
	list := filepath.Join(t.TempDir(), "allow.txt")
	os.WriteFile(list, []byte("# reviewed\nlogs/run.log  # the log\nadded:*.o\n"), 0o644)
	if code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--allowlist", list, "--", sh); code != 0 {
		t.Fatalf("exit %d %q %q", code, out, errs)
	}
}

func TestRunReports(t *testing.T) {
	ws, sh := fixture(t, "echo '{\"a\": 2}' > config.json; exit 3")
	dir := t.TempDir()
	js, html, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md")
	code, _, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--report", js, "--report", html, "--report", md, "--allow", "logs/", "--", sh)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	json.Unmarshal(data, &raw)
	for _, k := range []string{"schema", "verdict", "reasons", "workspace", "script", "allowlist", "started_at", "finished_at", "process", "changes"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
	r, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema != "diffgate.report/v1" || r.Verdict != "fail" || r.Process.ExitCode != 3 || len(r.Changes) != 1 {
		t.Fatalf("%+v", r)
	}
	c := r.Changes[0]
	if c.Path != "config.json" || c.Kind != "changed" || c.Aspects[0] != "content" || c.Allowed || c.Before.ModeString() != "0644" || !strings.Contains(c.TextDiff, "+{\"a\": 2}") {
		t.Errorf("change %+v", c)
	}
	if !strings.Contains(strings.Join(r.Reasons, ";"), "1 unexpected change") || !strings.Contains(strings.Join(r.Reasons, ";"), "script exited 3") {
		t.Errorf("reasons %v", r.Reasons)
	}
	for _, p := range []string{html, md} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestUsageErrorsExit2OneLine(t *testing.T) {
	ws, sh := fixture(t, "true")
	cases := map[string][]string{
		"missing workspace":   {"run", "--workspace", filepath.Join(ws, "nope"), "--no-history", "--", sh},
		"missing script":      {"run", "--workspace", ws, "--no-history", "--", filepath.Join(ws, "nope.sh")},
		"no script":           {"run", "--workspace", ws, "--no-history"},
		"unreadable list":     {"run", "--workspace", ws, "--no-history", "--allowlist", filepath.Join(ws, "nope.txt"), "--", sh},
		"bad entry":           {"run", "--workspace", ws, "--no-history", "--allow", "addded:x", "--", sh},
		"bad timeout":         {"run", "--workspace", ws, "--no-history", "--timeout", "soon", "--", sh},
		"bad report format":   {"run", "--workspace", ws, "--no-history", "--report", "r.pdf", "--", sh},
		"unknown verb":        {"explode"},
		"diff missing file":   {"diff", "a.json", "b.json"},
		"diff not json":       {"diff", sh, sh},
		"snapshot no out":     {"snapshot", ws},
		"snapshot bad dir":    {"snapshot", filepath.Join(ws, "nope"), "-o", filepath.Join(t.TempDir(), "m.json")},
		"db inside workspace": {"run", "--workspace", ws, "--db", filepath.Join(ws, "h.db"), "--", sh},
		"bad contain":         {"run", "--workspace", ws, "--no-history", "--contain", "maybe", "--", sh},
		"bad env":             {"run", "--workspace", ws, "--no-history", "--env", "=x", "--", sh},
	}
	for name, args := range cases {
		code, out, errs := cliRun(t, args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "diffgate: ") || strings.Contains(errs, "goroutine") {
			t.Errorf("%s: exit %d stdout %q stderr %q", name, code, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "h.db")); err == nil {
		t.Error("a refused database was created inside the workspace")
	}
}

func TestSnapshotAndDiffVerbs(t *testing.T) {
	ws, _ := fixture(t, "")
	dir := t.TempDir()
	b, a := filepath.Join(dir, "b.json"), filepath.Join(dir, "a.json")
	if code, _, errs := cliRun(t, "snapshot", ws, "-o", b); code != 0 {
		t.Fatal(errs)
	}
	os.Chmod(filepath.Join(ws, "run.sh"), 0o755)
	os.WriteFile(filepath.Join(ws, "logs", "x.log"), []byte("x"), 0o644)
	if code, _, errs := cliRun(t, "snapshot", ws, "-o", a); code != 0 {
		t.Fatal(errs)
	}
	data, _ := os.ReadFile(b)
	if !bytes.Contains(data, []byte(`"schema":"diffgate.manifest/v1"`)) {
		t.Errorf("manifest: %s", data[:80])
	}
	code, out, _ := cliRun(t, "diff", b, a)
	if code != 1 || out != "ADDED logs/x.log\nCHANGED run.sh (mode 0644 -> 0755)\n" {
		t.Fatalf("exit %d %q", code, out)
	}
	code, out, _ = cliRun(t, "diff", "--allow", "logs/,run.sh", b, a)
	if code != 0 || out != "" {
		t.Fatalf("exit %d %q", code, out)
	}
}

// TestSeedAgreement runs the seed's own snapshot.py and diff.py on real
// trees and checks diffgate diff prints exactly what diff.py prints (on the
// seed's snapshots) and agrees with it on our own manifests wherever the
// seed can see the change.
func TestSeedAgreement(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is needed in CI")
		}
		t.Skip("no python3")
	}
	type tree map[string]string // path -> content ("" with trailing / = dir)
	cases := []struct {
		name          string
		before, after tree
		allow         string
		extra         func(root string) // extra mutation after writing "after"
	}{
		{"identical", tree{"a": "1"}, tree{"a": "1"}, "", nil},
		{"all kinds", tree{"keep": "k", "gone": "g", "edit": "aaaa", "logs/run.log": "1"}, tree{"keep": "k", "new": "n", "edit": "bbbb", "logs/run.log": "12"}, ".cache/,logs/run.log", nil},
		{"allow dir prefix", tree{"x/a": "1"}, tree{"x/a": "2", "x/b/c": "3", "xy": "4"}, "x/", nil},
		{"allow trailing slashes", tree{}, tree{"d/e": "1", "d2": "2"}, "d//", nil},
		{"exact file allows below", tree{"f": "1"}, tree{"f": "2"}, "f,g", nil},
		{"unicode names", tree{"ü/ä": "1"}, tree{"ü/ä": "2", "名前": "3"}, "", nil},
		{"empty allow items", tree{}, tree{"a": "1", "b": "2"}, ",a,,", nil},
		{"chmod invisible to seed", tree{"s": "1"}, tree{"s": "1"}, "", func(root string) { os.Chmod(filepath.Join(root, "s"), 0o755) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "ws")
			mk := func(tr tree) {
				os.RemoveAll(root)
				os.MkdirAll(root, 0o755)
				for p, c := range tr {
					full := filepath.Join(root, p)
					os.MkdirAll(filepath.Dir(full), 0o755)
					os.WriteFile(full, []byte(c), 0o644)
				}
			}
			snap := func(name string) (seed, ours string) {
				seed, ours = filepath.Join(dir, name+".seed.json"), filepath.Join(dir, name+".ours.json")
				if out, err := exec.Command(py, "testdata/snapshot.py", root, seed).CombinedOutput(); err != nil {
					t.Fatalf("snapshot.py: %v %s", err, out)
				}
				if code, _, errs := cliRun(t, "snapshot", root, "-o", ours); code != 0 {
					t.Fatal(errs)
				}
				return
			}
			mk(tc.before)
			sb, ob := snap("before")
			time.Sleep(10 * time.Millisecond)
			mk(tc.after)
			if tc.extra != nil {
				tc.extra(root)
			}
			sa, oa := snap("after")
			cmd := exec.Command(py, "testdata/diff.py", sb, sa, tc.allow)
			want, _ := cmd.Output()
			wantCode := cmd.ProcessState.ExitCode()
			code, got, _ := cliRun(t, "diff", "--allow", tc.allow, sb, sa)
			if got != string(want) || code != wantCode {
				t.Fatalf("seed snapshots: diffgate printed %q exit %d; diff.py printed %q exit %d", got, code, want, wantCode)
			}
			// Our manifests: every line diff.py prints, diffgate prints too
			// (it may print more: directories, modes, owners).
			_, ours, _ := cliRun(t, "diff", "--allow", tc.allow, ob, oa)
			for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
				if line == "" {
					continue
				}
				found := false
				for _, l := range strings.Split(ours, "\n") {
					if l == line || strings.HasPrefix(l, line+" (") {
						found = true
					}
				}
				if !found {
					t.Errorf("diff.py found %q, diffgate on its own manifests did not: %q", line, ours)
				}
			}
		})
	}
}

// TestRunBadAllowEntries: a malformed entry is a setup error (exit 2) with
// one line naming it, before the script runs.
func TestRunBadAllowEntries(t *testing.T) {
	for _, entry := range []string{".", "a//b", "a\x00b", "added,,changed:x"} {
		ws, sh := fixture(t, "touch ran")
		code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", entry, "--", sh)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, fmt.Sprintf("%q", entry)) {
			t.Errorf("--allow %q: exit %d stdout %q stderr %q", entry, code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Errorf("--allow %q: the script ran", entry)
		}
	}
}

// TestVerbHelp: diffgate VERB -h (and SUB -h, help VERB) prints that verb's
// usage on stdout and exits 0; the top-level usage names every verb of the
// table; wrong arguments give the verb's one-line usage, exit 2.
func TestVerbHelp(t *testing.T) {
	code, top, _ := cliRun(t, "-h")
	if code != 0 {
		t.Fatalf("diffgate -h: exit %d", code)
	}
	var walk func(path []string, v *verb)
	walk = func(path []string, v *verb) {
		name := strings.Join(path, " ")
		if !strings.Contains(top, "diffgate "+name) {
			t.Errorf("top-level usage lacks %q:\n%s", name, top)
		}
		for _, h := range [][]string{append(append([]string{}, path...), "-h"), append(append([]string{}, path...), "--help"), append([]string{"help"}, path...)} {
			code, out, errs := cliRun(t, h...)
			if code != 0 || !strings.HasPrefix(out, "usage:\n  diffgate "+name) || !strings.Contains(out, v.help) || errs != "" {
				t.Errorf("%q: exit %d stdout %q stderr %q", h, code, out, errs)
			}
			if v.run != nil && strings.Contains(v.synopsis, "--") && !strings.Contains(out, "\nflags:\n  --") {
				t.Errorf("%q: no flags listed: %q", h, out)
			}
		}
		for i := range v.subs {
			walk(append(append([]string{}, path...), v.subs[i].name), &v.subs[i])
		}
	}
	for _, v := range verbs() {
		if v.hidden {
			if strings.Contains(top, "diffgate "+v.name) {
				t.Errorf("top-level usage shows the hidden verb %q", v.name)
			}
			continue
		}
		walk([]string{v.name}, &v)
	}
	// -h after "--" belongs to the script, not to the gate.
	ws, sh := fixture(t, `[ "$1" = "-h" ] || exit 9`)
	if code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--", sh, "-h"); code != 0 || out != "" {
		t.Errorf("script -h: exit %d %q %q", code, out, errs)
	}
	for args, want := range map[string]string{
		"snapshot":          "diffgate: usage: diffgate snapshot DIR -o FILE\n",
		"diff a":            "diffgate: usage: diffgate diff [--allow LIST]... [--allowlist FILE] BEFORE AFTER\n",
		"history show":      "diffgate: usage: diffgate history show RUN|last [--violations] [--db PATH]\n",
		"history bogus":     "diffgate: history: unknown subcommand \"bogus\" (want list, show, export, verify or push)\n",
		"allowlist":         "diffgate: usage: diffgate allowlist show|list|approve|diff|suggest ... (see diffgate allowlist -h)\n",
		"explode":           "diffgate: unknown command \"explode\" (want run, apply, discard, snapshot, diff, history, allowlist or version)\n",
		"snapshot --bogus":  "diffgate: diffgate snapshot: flag provided but not defined: -bogus\n",
		"version extra":     "diffgate: usage: diffgate version\n",
		"--version --bogus": "diffgate: diffgate version: flag provided but not defined: -bogus\n",
	} {
		code, out, errs := cliRun(t, strings.Fields(args)...)
		if code != 2 || out != "" || errs != want {
			t.Errorf("%s: exit %d stdout %q stderr %q; want %q", args, code, out, errs, want)
		}
	}
}

// readReport parses a JSON report written by a run.
func readReport(t *testing.T, path string) *report.Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestRunScriptOnPath: SCRIPT without a slash is looked up on PATH; the
// script recorded is the interpreter's file argument (relative to the
// workspace, as the interpreter sees it), its inline code (sh -c), or the
// command itself.
func TestRunScriptOnPath(t *testing.T) {
	ws, sh := fixture(t, "echo x > from-outside")
	os.WriteFile(filepath.Join(ws, "gen.sh"), []byte("echo y > from-inside\n"), 0o644)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bashAbs, _ := filepath.Abs(bash)
	shAbs, _ := exec.LookPath("sh")
	shText, _ := os.ReadFile(sh)
	realWS, _ := filepath.EvalSymlinks(ws)
	code := `echo "$0 $1" > inline.out`
	envAbs, _ := exec.LookPath("env")
	cases := []struct {
		name    string
		cmd     []string
		stdout  string
		path    string // recorded script path
		sha     []byte // recorded content (nil: don't check)
		command string
		inline  bool
	}{
		{"bash abs file", []string{"bash", "-x", sh, "arg"}, "ADDED from-outside\n", sh, shText, bashAbs, false},
		{"bash file in workspace", []string{"bash", "gen.sh"}, "ADDED from-inside\n", filepath.Join(realWS, "gen.sh"), []byte("echo y > from-inside\n"), bashAbs, false},
		{"sh -c inline", []string{"sh", "-c", code, "zero", "one"}, "ADDED inline.out\n", shAbs, []byte(code), shAbs, true},
		{"command itself", []string{"true", "gen.sh-not-a-file"}, "", "", nil, "", false},
		{"slash path is itself", []string{sh, "gen.sh"}, "ADDED from-outside\n", sh, shText, "", false},
		{"other programs are themselves", []string{"cp", "gen.sh", "copy"}, "ADDED copy\n", "", nil, "", false},
		{"env unwrapped", []string{"env", "-u", "NOPE", "X=1", "bash", "gen.sh"}, "ADDED from-inside\n", filepath.Join(realWS, "gen.sh"), []byte("echo y > from-inside\n"), envAbs, false},
	}
	if py, err := exec.LookPath("python3"); err == nil {
		os.WriteFile(filepath.Join(ws, "x.py"), []byte("open('py.out','w').write('1')\n"), 0o644)
		pyAbs, _ := filepath.Abs(py)
		cases = append(cases, struct {
			name    string
			cmd     []string
			stdout  string
			path    string
			sha     []byte
			command string
			inline  bool
		}{"python3 file", []string{"python3", "-u", "x.py"}, "ADDED py.out\n", filepath.Join(realWS, "x.py"), []byte("open('py.out','w').write('1')\n"), pyAbs, false},
			struct {
				name    string
				cmd     []string
				stdout  string
				path    string
				sha     []byte
				command string
				inline  bool
			}{"python3 -m is the interpreter", []string{"python3", "-m", "json.tool", "x.py"}, "EXIT 1\n", "", nil, "", false})
	} else if os.Getenv("CI") != "" {
		t.Fatal("python3 is needed in CI")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []string{"from-outside", "from-inside", "inline.out", "py.out", "copy"} {
				os.Remove(filepath.Join(ws, f))
			}
			rj := filepath.Join(t.TempDir(), "r.json")
			db := filepath.Join(t.TempDir(), "h.db")
			args := append([]string{"run", "--workspace", ws, "--db", db, "--report", rj, "--allow", "x.py,gen.sh", "--"}, tc.cmd...)
			code, out, errs := cliRun(t, args...)
			if out != tc.stdout || (code == 2) {
				t.Fatalf("exit %d stdout %q stderr %q; want stdout %q", code, out, errs, tc.stdout)
			}
			r := readReport(t, rj)
			s := r.Script
			if tc.path != "" && s.Path != tc.path {
				t.Errorf("script path %q, want %q", s.Path, tc.path)
			}
			if tc.path == "" {
				self, _ := exec.LookPath(tc.cmd[0])
				self, _ = filepath.Abs(self)
				if s.Path != self || s.Command != "" {
					t.Errorf("script %+v, want the command %s itself", s, self)
				}
			}
			if tc.sha != nil && s.SHA256 != sha256Hex(tc.sha) {
				t.Errorf("sha256 %s, want that of %q", s.SHA256, tc.sha)
			}
			if s.Command != tc.command || s.Inline != tc.inline || strings.Join(s.Args, "\x00") != strings.Join(tc.cmd[1:], "\x00") {
				t.Errorf("script %+v; want command %q inline %v args %q", s, tc.command, tc.inline, tc.cmd[1:])
			}
			h, err := history.Open(db, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			run, err := h.Get(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if tc.sha != nil && !bytes.Equal(run.ScriptText, tc.sha) {
				t.Errorf("recorded script text %q, want %q", run.ScriptText, tc.sha)
			}
			if head, _ := os.ReadFile(s.Path); tc.path == "" && bytes.HasPrefix(head, []byte("\x7fELF")) && run.ScriptText != nil {
				t.Errorf("a compiled program's bytes were kept as script text (%d bytes)", len(run.ScriptText))
			}
		})
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "inline.out")); string(got) != "" {
		t.Logf("inline.out: %q", got)
	}
	code2, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--", "diffgate-no-such-command")
	if code2 != 2 || out != "" || errs != "diffgate: script diffgate-no-such-command: not found on PATH\n" {
		t.Errorf("unknown command: exit %d %q %q", code2, out, errs)
	}
}

// TestRunReportNotWritable: a --report whose directory cannot be written
// (missing, read-only for a normal user) or that names a directory is a
// setup error, one line, exit 2, before the script runs.
func TestRunReportNotWritable(t *testing.T) {
	ws, sh := fixture(t, "touch ran")
	check := func(rep string) {
		t.Helper()
		code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--report", filepath.Join(t.TempDir(), "ok.json"), "--report", rep, "--", sh)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "diffgate: report "+rep+": ") {
			t.Errorf("--report %s: exit %d stdout %q stderr %q", rep, code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Fatalf("--report %s: the script ran", rep)
		}
	}
	dir := t.TempDir()
	check(filepath.Join(dir, "missing", "r.json"))
	os.Mkdir(filepath.Join(dir, "d.json"), 0o755)
	check(filepath.Join(dir, "d.json"))
	if testenv.IsRoot() {
		testenv.AsUser(t) // again as uid 65534, where a read-only directory stops it
		return
	}
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	check(filepath.Join(ro, "r.json"))
	if ents, _ := os.ReadDir(ro); len(ents) != 0 {
		t.Errorf("left %v in the read-only directory", ents)
	}
}

// noRawControls fails when s holds a control character a terminal would
// act on (anything below space but newline, DEL, C1 controls).
func noRawControls(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) {
			t.Errorf("%s holds a raw control character %U: %q", what, r, s)
			return
		}
	}
}

// TestControlCharactersQuoted: paths with ESC, TAB, DEL, C1 or format
// characters (and those starting with a double quote) are printed quoted,
// on stdout and in the gate's stderr lines; a leftover's command line is
// escaped.
func TestControlCharactersQuoted(t *testing.T) {
	ws, sh := fixture(t, `touch "$(printf 'a\033[31mb')" "$(printf 't\tab')" "$(printf 'del\177')" "$(printf 'c1\302\233x')" "$(printf 'bidi\342\200\256')" '"quoted' 'plain name'`)
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--", sh)
	want := `ADDED "\"quoted"
ADDED "a\x1b[31mb"
ADDED "bidi\u202e"
ADDED "c1\u009bx"
ADDED "del\x7f"
ADDED plain name
ADDED "t\tab"
`
	if code != 1 || out != want {
		t.Errorf("exit %d stdout:\n%s\nwant:\n%s", code, out, want)
	}
	noRawControls(t, "stdout", out)
	noRawControls(t, "stderr", errs)

	bad := ws + "\x1b[2J\tx"
	code, out, errs = cliRun(t, "run", "--workspace", bad, "--no-history", "--", sh)
	if code != 2 || out != "" || !strings.Contains(errs, `\x1b[2J\tx": `) || strings.Count(errs, "\n") != 1 {
		t.Errorf("workspace with ESC: exit %d %q %q", code, out, errs)
	}
	noRawControls(t, "stderr", errs)
	code, _, errs = cliRun(t, "run", "--workspace", ws, "--no-history", "--", sh+"\x1b]0;title\x07")
	if code != 2 || !strings.Contains(errs, `\x1b]0;title\a": no such file or directory`) {
		t.Errorf("script with ESC: exit %d %q", code, errs)
	}
	noRawControls(t, "stderr", errs)

	if _, err := exec.LookPath("bash"); err != nil || runtime.GOOS != "linux" {
		return
	}
	// The script waits until the exec happened (the name is set by it), so
	// the leftover is the renamed sleep, not the bash before its exec.
	ws, sh = fixture(t, `bash -c 'exec -a "$(printf "x\302\233y")" sleep 300' &
until tr '\0' ' ' < /proc/$!/cmdline | grep -q '^x'; do :; done`)
	code, out, _ = cliRun(t, "run", "--workspace", ws, "--no-history", "--timeout", "2m", "--", sh)
	if code != 1 || !strings.HasPrefix(out, "LEFTOVER pid ") || !strings.Contains(out, ` x\u009by 300`) {
		t.Errorf("leftover: exit %d stdout %q", code, out)
	}
	noRawControls(t, "stdout", out)
}

// TestRunCancelledBySignal: SIGINT or SIGTERM to a real diffgate run while
// its script runs gives the CANCELLED line on stdout, exit 1 (the gate
// failed), and a run recorded as cancelled in the history.
func TestRunCancelledBySignal(t *testing.T) {
	bin := testenv.CLI(t)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			ws, sh := fixture(t, "echo changed > config.json\necho ready-for-signal >&2\nexec sleep 300")
			db := filepath.Join(t.TempDir(), "history.db")
			cmd := exec.Command(bin, "run", "--workspace", ws, "--db", db, "--", sh)
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			ready := make(chan struct{})
			var errText strings.Builder
			done := make(chan struct{})
			go func() {
				defer close(done)
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					errText.WriteString(sc.Text() + "\n")
					if sc.Text() == "ready-for-signal" {
						close(ready)
					}
				}
			}()
			select {
			case <-ready:
			case <-done:
				t.Fatalf("the gate ended before the script was ready: %q", errText.String())
			case <-time.After(2 * time.Minute): // a safety net only: the script says when it is ready
				t.Fatal("the script never said it was ready")
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-done
			err = cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != 1 || stdout.String() != "CHANGED config.json\nCANCELLED\n" || strings.Contains(errText.String(), "record run") {
				t.Fatalf("exit %d stdout %q stderr %q; want 1 %q", code, stdout.String(), errText.String(), "CHANGED config.json\nCANCELLED\n")
			}
			code, out, errs := cliRun(t, "history", "show", "last", "--violations", "--db", db)
			if code != 1 || out != "CHANGED config.json\nCANCELLED\n" || !strings.Contains(errs, "run 1: fail (1 unexpected change, run cancelled)") {
				t.Errorf("history show: exit %d stdout %q stderr %q", code, out, errs)
			}
			if code, out, _ := cliRun(t, "history", "verify", "--db", db); code != 0 || out != "ok: 1 run, chain intact\n" {
				t.Errorf("verify: %d %q", code, out)
			}
		})
	}
}

// TestAllowlistSuggest pins "diffgate allowlist suggest RUN|last": the
// fewest entries covering the run's violations, one per line, exit 0; the
// same script in a fresh workspace passes with them.
func TestAllowlistSuggest(t *testing.T) {
	script := "mkdir -p out/x; echo 1 > out/x/a.o; echo 2 > out/b.o; echo '{}' > config.json; ln -s /etc/passwd link; echo 1 > logs/secret"
	db := filepath.Join(t.TempDir(), "h.db")
	ws, sh := fixture(t, script)
	if code, _, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--allow", "!logs/secret", "--", sh); code != 1 {
		t.Fatalf("run: exit %d %q", code, errs)
	}
	code, out, errs := cliRun(t, "allowlist", "suggest", "last", "--db", db)
	want := "config.json\nout/\nsymlink-escape:link\n"
	if code != 0 || out != want || !strings.Contains(errs, "logs/secret stays a violation: denied by !logs/secret") {
		t.Fatalf("suggest: exit %d stdout %q (want %q) stderr %q", code, out, want, errs)
	}
	args := []string{"run", "--no-history"}
	for _, e := range strings.Fields(out) {
		args = append(args, "--allow", e)
	}
	ws, sh = fixture(t, strings.Replace(script, "; echo 1 > logs/secret", "", 1))
	if code, out, errs := cliRun(t, append(args, "--workspace", ws, "--", sh)...); code != 0 {
		t.Fatalf("rerun with the suggestion: exit %d stdout %q stderr %q", code, out, errs)
	}
	if code, _, errs := cliRun(t, "allowlist", "suggest", "--db", db); code != 2 || !strings.Contains(errs, "usage: diffgate allowlist suggest RUN|last") {
		t.Fatalf("no RUN: exit %d %q", code, errs)
	}
	if code, out, _ := cliRun(t, "allowlist", "suggest", "-h"); code != 0 || !strings.Contains(out, "suggest") {
		t.Fatalf("-h: exit %d %q", code, out)
	}
}

// TestRunSummaryLine: a run ends with one bounded summary line on stderr
// (PASS with the allowed changes grouped by rule, or FAIL with the reasons);
// stdout stays findings-only.
func TestRunSummaryLine(t *testing.T) {
	last := func(errs string) string {
		lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
		return lines[len(lines)-1]
	}
	cases := []struct {
		name, script string
		allow        string
		code         int
		stdout, want string
	}{
		{"no changes", "true", "", 0, "", "PASS: no changes"},
		{"grouped", "mkdir -p node_modules/a && touch node_modules/a/1 node_modules/a/2 node_modules/a/3 node_modules/a/4 node_modules/a/5 && echo {} > package-lock.json",
			"node_modules/,package-lock.json", 0, "", "PASS: 8 changes, all allowed (node_modules/ 7, package-lock.json 1)"},
		{"a preset counts as one entry", "mkdir -p node_modules/a && touch node_modules/a/1 && echo {} > package-lock.json",
			"preset:node", 0, "", "PASS: 4 changes, all allowed (preset:node 4)"},
		{"many rules", "touch a b c d e f", "a,b,c,d,e,f", 0, "", "PASS: 6 changes, all allowed (a 1, b 1, c 1, d 1, +2 more)"},
		{"fail", "echo x > logs/ok; echo y > new; exit 3", "logs/", 1, "ADDED new\nEXIT 3\n", "FAIL: 1 unexpected change, script exited 3 (2 changes, 1 allowed)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, sh := fixture(t, tc.script)
			code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", tc.allow, "--", sh)
			if code != tc.code || out != tc.stdout || last(errs) != tc.want {
				t.Errorf("exit %d stdout %q last stderr line %q; want %d %q %q", code, out, last(errs), tc.code, tc.stdout, tc.want)
			}
		})
	}
	// Bounded: long rules are cut, the line stays short.
	ws, sh := fixture(t, "mkdir -p "+strings.Repeat("d", 200)+" && touch "+strings.Repeat("d", 200)+"/x")
	_, _, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", strings.Repeat("d", 200)+"/", "--", sh)
	if l := last(errs); len(l) > 200 || !strings.HasPrefix(l, "PASS: 2 changes, all allowed (ddd") || !strings.Contains(l, "…") {
		t.Errorf("long rule: %q (%d bytes)", l, len(l))
	}
}

// TestInvalidUTF8PassesThrough: invalid UTF-8 in the workspace path, the
// script path, an argument and an environment value reaches the script byte
// for byte (to the supervisor's containment rules too: the script writes
// into the workspace); the JSON report carries the raw bytes in _b64 twins
// that Parse restores.
func TestInvalidUTF8PassesThrough(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws\xff")
	os.Mkdir(ws, 0o755)
	realWS, _ := filepath.EvalSymlinks(ws)
	sh := filepath.Join(dir, "gen\xfe.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\n[ \"$1\" = \"$(printf 'a\\377b')\" ] || exit 7\n[ \"$X\" = \"$(printf 'v\\375v')\" ] || exit 8\n[ \"$(pwd -P)\" = \"$WANT_WS\" ] || exit 9\necho x > out || exit 10\n"), 0o755)
	t.Setenv("X", "v\xfdv")
	t.Setenv("WANT_WS", realWS)
	rj := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--report", rj, "--env", "X", "--env", "WANT_WS", "--allow", "out", "--", sh, "a\xffb", "plain")
	if code != 0 || out != "" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	data, _ := os.ReadFile(rj)
	var raw struct {
		Workspace    string `json:"workspace"`
		WorkspaceB64 string `json:"workspace_b64"`
		Script       struct {
			Path    string   `json:"path"`
			PathB64 string   `json:"path_b64"`
			Args    []string `json:"args"`
			ArgsB64 []string `json:"args_b64"`
		} `json:"script"`
	}
	json.Unmarshal(data, &raw)
	if raw.Workspace != fmt.Sprintf("%q", realWS) || raw.WorkspaceB64 == "" || raw.Script.PathB64 == "" ||
		len(raw.Script.ArgsB64) != 2 || raw.Script.Args[0] != `"a\xffb"` || raw.Script.Args[1] != "plain" {
		t.Errorf("report JSON: %+v", raw)
	}
	r := readReport(t, rj)
	if r.Workspace != realWS || r.Script.Path != sh || strings.Join(r.Script.Args, "|") != "a\xffb|plain" {
		t.Errorf("parsed report: workspace %q script %q args %q", r.Workspace, r.Script.Path, r.Script.Args)
	}
}

// TestRunScriptRelativePathEntry: a SCRIPT found only through a relative
// PATH entry is refused with a line saying which path to give.
func TestRunScriptRelativePathEntry(t *testing.T) {
	ws, _ := fixture(t, "true")
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "tool"), []byte("#!/bin/sh\n: > ran\n"), 0o755)
	t.Chdir(dir)
	t.Setenv("PATH", "bin")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--", "tool")
	if code != 2 || out != "" || errs != "diffgate: script tool: found as bin/tool through a relative PATH entry; give that path to run it\n" {
		t.Errorf("exit %d stdout %q stderr %q", code, out, errs)
	}
	if code, out, errs = cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", "ran", "--", "bin/tool"); code != 0 {
		t.Errorf("bin/tool: exit %d %q %q", code, out, errs)
	}
}

// TestRunReportDiffNote pins diff_note: a content change without a text
// diff says why, in the JSON and the Markdown report.
func TestRunReportDiffNote(t *testing.T) {
	ws, sh := fixture(t, "printf 'x\\000y' > config.json")
	dir := t.TempDir()
	js, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md")
	if code, _, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--report", js, "--report", md, "--", sh); code != 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, _ := os.ReadFile(js)
	var raw struct {
		Changes []map[string]any `json:"changes"`
	}
	if err := json.Unmarshal(data, &raw); err != nil || len(raw.Changes) != 1 || raw.Changes[0]["diff_note"] != "binary" || raw.Changes[0]["text_diff"] != nil {
		t.Errorf("changes %v (%v)", raw.Changes, err)
	}
	if b, _ := os.ReadFile(md); !strings.Contains(string(b), "no text diff: binary content") {
		t.Errorf("Markdown lacks the note:\n%s", b)
	}
}

// TestRunReportRenames pins the rename fields of the JSON report (an
// extension of the changes): a file moved as it is pairs its removed path
// (renamed_to) with its added one (renamed_from, similarity 100); one moved
// with an edit also carries the similarity and rename_diff; stdout still
// names both paths, each judged by the allowlist.
func TestRunReportRenames(t *testing.T) {
	ws, sh := fixture(t, "mkdir new && mv run.sh new/run.sh && sed 's/\"a\": 1/\"a\": 2/' config.json > new/config.json && rm config.json")
	body := "{\"a\": 1}\n" + strings.Repeat("{\"padding\": \"so that one edit keeps it over 90% alike\"}\n", 20)
	if err := os.WriteFile(filepath.Join(ws, "config.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", "new/", "--report", js, "--", sh)
	if code != 1 || out != "REMOVED config.json\nREMOVED run.sh\n" {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errs)
	}
	data, _ := os.ReadFile(js)
	var raw struct {
		Changes []map[string]any `json:"changes"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	byPath := map[string]map[string]any{}
	for _, c := range raw.Changes {
		byPath[c["path"].(string)] = c
	}
	for _, w := range []struct {
		path, field, want string
		similarity        float64
	}{
		{"run.sh", "renamed_to", "new/run.sh", 100}, {"new/run.sh", "renamed_from", "run.sh", 100},
		{"config.json", "renamed_to", "new/config.json", -1}, {"new/config.json", "renamed_from", "config.json", -1},
	} {
		c := byPath[w.path]
		sim, _ := c["similarity"].(float64)
		if c == nil || c[w.field] != w.want || (w.similarity > 0 && sim != w.similarity) || (w.similarity < 0 && (sim < 90 || sim >= 100)) {
			t.Errorf("%s: %s %v, similarity %v; want %q", w.path, w.field, c[w.field], c["similarity"], w.want)
		}
	}
	if d, _ := byPath["new/config.json"]["rename_diff"].(string); !strings.Contains(d, "--- a/config.json\n+++ b/new/config.json\n") || !strings.Contains(d, "\n+{\"a\": 2}\n") {
		t.Errorf("rename_diff %q", d)
	}
	if _, ok := byPath["new/run.sh"]["rename_diff"]; ok {
		t.Error("a rename of the same content has a rename_diff")
	}
}

// TestStageContractSynopses pins the synopses of contract.md's "Staged
// runs, apply and discard" (their lines and exits: stage_test.go).
func TestStageContractSynopses(t *testing.T) {
	for verb, want := range map[string]string{
		"apply":   "diffgate apply RUN|last [--only-allowed | --force] [--db PATH]\n",
		"discard": "diffgate discard RUN|last [--db PATH]\n",
		"run":     "[--stage]",
	} {
		if code, out, _ := cliRun(t, verb, "-h"); code != 0 || !strings.Contains(out, want) {
			t.Errorf("%s -h: exit %d, no %q in\n%s", verb, code, want, out)
		}
	}
	if code, _, errs := cliRun(t, "apply", "--db", filepath.Join(t.TempDir(), "h.db")); code != 2 || errs != "diffgate: usage: diffgate apply RUN|last [--only-allowed | --force] [--db PATH]\n" {
		t.Errorf("apply without RUN: exit %d %q", code, errs)
	}
}

// TestReportReviewObject pins the contract's `review`: a run's own report
// has none; a reviewer's draft goes in it, apart from the run's allowlist
// and verdict, which stay as the run left them.
func TestReportReviewObject(t *testing.T) {
	ws, sh := fixture(t, "echo x > config.json")
	js := filepath.Join(t.TempDir(), "r.json")
	if code, _, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--report", js, "--allow", "logs/", "--", sh); code != 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if json.Unmarshal(data, &raw); raw["review"] != nil {
		t.Fatalf("a run's report carries a review: %v", raw["review"])
	}
	r, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	reviewed, err := r.WithReview([]string{"logs/", "config.json"}, report.Approved, "generated")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := reviewed.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	raw = nil
	json.Unmarshal(buf.Bytes(), &raw)
	rv, _ := raw["review"].(map[string]any)
	if raw["verdict"] != "fail" || fmt.Sprint(raw["allowlist"]) != "[logs/]" || rv == nil ||
		fmt.Sprint(rv["allowlist"]) != "[logs/ config.json]" || rv["decision"] != "approved" || rv["note"] != "generated" || rv["verdict"] != "pass" {
		t.Fatalf("verdict %v allowlist %v review %v", raw["verdict"], raw["allowlist"], rv)
	}
}

// TestRunContainmentReportFields pins the contract's containment fields in
// the JSON report: containment.mode, its layers (requested vs enforced),
// observed true (blocked actions are watched), and, where they cannot be
// (seccomp user notification pretended absent), observed false with the
// reason in containment.why.
func TestRunContainmentReportFields(t *testing.T) {
	ws, sh := fixture(t, "true")
	for _, tc := range []struct {
		noNotify string
		want     []string
	}{
		{"", []string{`"observed": true`}},
		{"1", []string{`"observed": false`, `"why": "blocked actions not observable: seccomp user notification turned off for a test"`}},
	} {
		// The test hook lives only in the CLI built with -tags testhooks
		// (testenv.CLI), not in this test binary.
		js := filepath.Join(t.TempDir(), "r.json")
		cmd := exec.Command(testenv.CLI(t), "run", "--workspace", ws, "--no-history", "--report", js, "--", sh)
		cmd.Env = append(os.Environ(), "DIFFGATE_TEST_NO_NOTIFY="+tc.noNotify)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		data, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range append([]string{`"containment": {`, `"mode": "auto"`, `"layers": [`, `"requested": true`, `"enforced": `}, tc.want...) {
			if !strings.Contains(string(data), want) {
				t.Errorf("report lacks %s:\n%s", want, data)
			}
		}
	}
}

// TestContainmentFindingLines pins contract.md's "Containment" finding
// lines as the CLI prints them for a recorded run (history show prints
// what the run printed): BLOCKED KIND TARGET (with "(N times)" for a
// repeated action, the target quoted as a path), after UNREADABLE and
// before the process findings, and OUTSIDE KIND PATH (detail); each fails
// the run, and the export carries blocked {kind, target, pid, cmd}. The
// real runs that print OUTSIDE lines are in watch_test.go; the supervisor
// that fills blocked is core/proc's.
func TestContainmentFindingLines(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	h, err := history.Open(db, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	r := &report.Report{Schema: report.Schema, Workspace: "/ws", Script: report.Script{Path: "/ws/gen.sh", Args: []string{}},
		StartedAt: time.Now().UTC(), FinishedAt: time.Now().UTC(), Process: report.Process{ExitCode: 1},
		Unreadable:  []diff.Unknown{{Path: "locked", When: "after", Reason: "cannot open directory: permission denied"}},
		Containment: &report.Containment{Mode: "auto", LandlockABI: 7, Contained: true, Observed: true, Layers: []report.Layer{}},
		Blocked: []report.Blocked{{Kind: "write", Target: "/home/u/.bashrc", PID: 41, Cmd: "sh gen.sh", Op: "openat", Count: 1},
			{Kind: "net", Target: "127.0.0.1:8080", PID: 42, Cmd: "curl", Op: "connect", Count: 3},
			{Kind: "read", Target: "/home/u/.ssh/id_ed25519\n", PID: 43, Cmd: "cat", Op: "openat", Count: 1}},
		Outside: []report.Outside{{Path: "/home/u/.config/autostart/x.desktop", Kind: diff.Added, Aspects: []string{},
			After: &snapshot.Entry{Type: snapshot.File, Perm: 0o644, Size: 32}}},
	}
	r.Evaluate()
	if _, err := h.Record(context.Background(), &history.Run{Report: r}, nil, nil); err != nil {
		t.Fatal(err)
	}
	h.Close()
	want := "UNREADABLE locked (cannot open directory: permission denied)\n" +
		"BLOCKED write /home/u/.bashrc\n" +
		"BLOCKED net 127.0.0.1:8080 (3 times)\n" +
		`BLOCKED read "/home/u/.ssh/id_ed25519\n"` + "\n" +
		"OUTSIDE added /home/u/.config/autostart/x.desktop (file 0644 32 B)\n" +
		"EXIT 1\n"
	code, out, errs := cliRun(t, "history", "show", "last", "--violations", "--db", db)
	if code != 1 || out != want {
		t.Fatalf("exit %d stdout:\n%s\nwant:\n%s", code, out, want)
	}
	if !strings.Contains(errs, "run 1: fail (1 unreadable entry, 3 blocked actions, 1 change outside the workspace, script exited 1)") {
		t.Errorf("header %q", errs)
	}
	exp := filepath.Join(t.TempDir(), "r.json")
	if code, _, errs := cliRun(t, "history", "export", "last", "-o", exp, "--db", db); code != 0 {
		t.Fatal(errs)
	}
	data, _ := os.ReadFile(exp)
	var raw struct {
		Blocked []map[string]any `json:"blocked"`
		Outside []map[string]any `json:"outside"`
	}
	if err := json.Unmarshal(data, &raw); err != nil || len(raw.Blocked) != 3 || len(raw.Outside) != 1 {
		t.Fatalf("export: %v\n%s", err, data)
	}
	for _, k := range []string{"kind", "target", "pid", "cmd"} {
		if _, ok := raw.Blocked[0][k]; !ok {
			t.Errorf("blocked lacks %q: %v", k, raw.Blocked[0])
		}
	}
	for _, k := range []string{"kind", "path", "aspects", "after"} {
		if _, ok := raw.Outside[0][k]; !ok {
			t.Errorf("outside lacks %q: %v", k, raw.Outside[0])
		}
	}
}

// TestContainmentSynopsisAndNotObservable pins the run synopsis's watch
// flags and the stderr line of a contained run whose blocked actions are
// not observed; --contain=off has no such line. Nothing here depends on
// the machine: the not-observed run turns seccomp user notification off
// through the test hook (testenv.CLI), and a machine without containment
// does not observe either.
func TestContainmentSynopsisAndNotObservable(t *testing.T) {
	if code, out, _ := cliRun(t, "run", "-h"); code != 0 || !strings.Contains(out, "[--watch PATH]...") || !strings.Contains(out, "[--no-watch]") ||
		!strings.Contains(out, "\n  --watch PATH ") || !strings.Contains(out, "\n  --no-watch ") {
		t.Errorf("run -h: exit %d\n%s", code, out)
	}
	ws, sh := fixture(t, "true")
	t.Run("not-observed", func(t *testing.T) {
		js := filepath.Join(t.TempDir(), "r.json")
		cmd := exec.Command(testenv.CLI(t), "run", "--workspace", ws, "--no-history", "--report", js, "--", sh)
		cmd.Env = append(os.Environ(), "DIFFGATE_TEST_NO_NOTIFY=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		r := readReport(t, js)
		if r.Containment == nil || r.Containment.Observed {
			t.Fatalf("containment %+v: want requested and not observed", r.Containment)
		}
		line := r.Containment.NotObservable()
		if !strings.HasPrefix(line, "blocked actions not observable: ") || !strings.Contains(stderr.String(), "\n"+line+"\n") {
			t.Errorf("stderr lacks %q:\n%s", line, stderr.String())
		}
	})
	t.Run("contain-off", func(t *testing.T) {
		code, _, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--contain=off", "--", sh)
		if code != 0 || strings.Contains(errs, "not observable") {
			t.Errorf("--contain=off: exit %d, stderr:\n%s", code, errs)
		}
	})
}

// TestRunGrantsOnRecord pins containment.grants and containment.env_dropped
// (contract, round 3): --writable, --env (the name, never the value),
// --deny-read and --net are each a grant; the dropped variables are listed
// by name in the report and on one stderr line, never with a value; the
// grants line is on stderr and in the Markdown report.
func TestRunGrantsOnRecord(t *testing.T) {
	ws, sh := fixture(t, "true")
	extra := t.TempDir()
	t.Setenv("DIFFGATE_TEST_DROPPED", "v4lue-never-shown")
	t.Setenv("GITHUB_ACTIONS", "true")
	dir := t.TempDir()
	js, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--report", js, "--report", md,
		"--writable", extra, "--env", "MYVAR=s3cret-value", "--deny-read", extra+"/x", "--net", "--", sh)
	if code != 0 || out != "" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	data, _ := os.ReadFile(js)
	for _, want := range []string{`"grants": [`, `"kind": "writable"`, `"target": "` + extra + `"`, `"by": "--writable"`,
		`"kind": "env"`, `"target": "MYVAR (set)"`, `"kind": "deny_read"`, `"kind": "net"`, `"target": "all"`, `"env_dropped": [`, `"DIFFGATE_TEST_DROPPED"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("report lacks %s:\n%s", want, data)
		}
	}
	mdData, _ := os.ReadFile(md)
	for _, all := range []string{string(data), errs, string(mdData)} {
		if strings.Contains(all, "s3cret-value") || strings.Contains(all, "v4lue-never-shown") || strings.Contains(all, `"GITHUB_ACTIONS"`) {
			t.Errorf("a value, or a variable passed by default, is listed:\n%s", all)
		}
	}
	if strings.Count(errs, "\nenv: dropped ") != 1 || !strings.Contains(errs, "DIFFGATE_TEST_DROPPED") || !strings.Contains(errs, "\ngranted: writable "+extra) {
		t.Errorf("stderr:\n%s", errs)
	}
	if !strings.Contains(string(mdData), "| Granted | writable ") || !strings.Contains(string(mdData), "| Variables dropped |") {
		t.Errorf("markdown lacks the grants:\n%s", mdData)
	}
	// The history (the containment object is in the hash chain), history
	// show and the HTML report.
	db, html := filepath.Join(dir, "h.db"), filepath.Join(dir, "r.html")
	if code, _, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--report", html, "--writable", extra, "--", sh); code != 0 {
		t.Fatalf("exit %d stderr %q", code, errs)
	}
	if code, show, errs := cliRun(t, "history", "show", "last", "--db", db); code != 0 || !strings.Contains(show+errs, "\ngranted: writable "+extra+"\n") {
		t.Errorf("history show: exit %d stdout %q stderr %q", code, show, errs)
	}
	if h, _ := os.ReadFile(html); !strings.Contains(string(h), "<dt>Granted</dt><dd>writable "+extra) {
		t.Errorf("HTML lacks the grants")
	}
}

// TestRunProfileHostsGranted: a profile's hosts and --net-allow's are
// granted through the recording proxy (the script gets its *_PROXY
// variables) and recorded as grants; with --net neither is needed.
func TestRunProfileHostsGranted(t *testing.T) {
	ws, sh := fixture(t, `printf '%s\n' "$HTTPS_PROXY" > proxy.txt`)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	js := filepath.Join(dir, "r.json")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--report", js,
		"--allow", "preset:node", "--allow", "proxy.txt", "--net-allow", "example.org", "--", sh)
	if code != 0 || out != "" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	raw, _ := os.ReadFile(js)
	var data bytes.Buffer
	if err := json.Compact(&data, raw); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"kind":"hosts","target":"registry.npmjs.org","by":"preset:node"}`,
		`{"kind":"net","target":"example.org","by":"--net-allow"}`} {
		if !strings.Contains(data.String(), want) {
			t.Errorf("report lacks %s:\n%s", want, raw)
		}
	}
	if !strings.Contains(errs, "network to registry.npmjs.org") {
		t.Errorf("stderr lacks the profile's host grant:\n%s", errs)
	}
	if p, _ := os.ReadFile(filepath.Join(ws, "proxy.txt")); !strings.HasPrefix(string(p), "http://127.0.0.1:") {
		t.Errorf("the script's HTTPS_PROXY is %q, want the gate's proxy", p)
	}
}

// TestRunWritableChecked: a --writable that names nothing, or starts with
// a literal ~ (not expanded after =), is exit 2 with one line.
func TestRunWritableChecked(t *testing.T) {
	ws, sh := fixture(t, "true")
	for _, tc := range []struct{ arg, want string }{
		{"--writable=nosuchdir", `--writable nosuchdir: no such file or directory`},
		{"--writable=~/.npm", `--writable ~/.npm: a literal ~`},
	} {
		code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", tc.arg, "--", sh)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d stdout %q stderr %q", tc.arg, code, out, errs)
		}
	}
}

// TestAllowlistSuggestGrants: a run that failed only on blocked actions
// gets suggestions: the profile for a tool cache as an entry, the flag for
// git's config and the $TMPDIR hint as comment lines; the stderr summary
// carries one hint line per kind.
func TestAllowlistSuggestGrants(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	db := filepath.Join(t.TempDir(), "h.db")
	ws, sh := fixture(t, `mkdir -p "$HOME/.npm"; echo x >> .git/config; echo y > /tmp/dg-suggest-$$; true`)
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644)
	if why := testenv.ContainmentLayers(); why != "" {
		t.Skipf("blocked actions cannot be observed on this machine: %s", why)
	}
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--", sh)
	if code != 1 || !strings.Contains(out, "BLOCKED create "+home+"/.npm\n") {
		t.Fatalf("the blocked actions are not reported: exit %d stdout %q stderr %q", code, out, errs)
	}
	for _, want := range []string{"\nhint: tool cache: --allow preset:node ", "\nhint: git config or hooks: --writable .git ", "\nhint: /tmp: write to $TMPDIR"} {
		if strings.Count(errs, want) != 1 {
			t.Errorf("stderr lacks one %q:\n%s", want, errs)
		}
	}
	if lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n"); !strings.HasPrefix(lines[len(lines)-1], "FAIL: ") {
		t.Errorf("the summary is not the last line:\n%s", errs)
	}
	code, sugg, errs := cliRun(t, "allowlist", "suggest", "last", "--db", db)
	lines := strings.Split(strings.TrimSuffix(sugg, "\n"), "\n")
	if code != 0 || len(lines) != 3 || lines[0] != "preset:node" || !strings.HasPrefix(lines[1], "# run with --writable .git (BLOCKED ") ||
		!strings.HasPrefix(lines[2], "# BLOCKED /tmp/dg-suggest-") {
		t.Fatalf("suggest: exit %d stdout %q stderr %q", code, sugg, errs)
	}
}

// TestVersion pins diffgate --version (contract, round 3): one line on
// stdout, "diffgate VERSION" and the commit when known, exit 0; diffgate
// version says the same.
func TestVersion(t *testing.T) {
	line := regexp.MustCompile(`^diffgate \S+( \(commit [0-9a-f]{1,12}(, modified)?\)| \(modified\))?\n$`)
	var first string
	for _, args := range [][]string{{"--version"}, {"version"}, {"-version"}} {
		code, out, errs := cliRun(t, args...)
		if code != 0 || errs != "" || !line.MatchString(out) {
			t.Errorf("%q: exit %d stdout %q stderr %q", args, code, out, errs)
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Errorf("%q says %q, --version %q", args, out, first)
		}
	}
}
