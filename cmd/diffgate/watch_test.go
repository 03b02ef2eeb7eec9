package main

// Pins the watch outside the workspace (contract.md, "Containment": --watch
// PATH, --no-watch, OUTSIDE KIND PATH, the report's watch and outside) on
// real runs with a fixture HOME, as root and as a normal user.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
)

// watchHome makes a fixture HOME with a ~/.bashrc and points the gate at
// it (HOME, no XDG_CONFIG_HOME, no ZDOTDIR).
func watchHome(t *testing.T) string {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("orig\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("ZDOTDIR", "")
	return home
}

func testRunWatch(t *testing.T) {
	home := watchHome(t)
	bashrc := filepath.Join(home, ".bashrc")
	ws, sh := fixture(t, `echo x >> "$HOME/.bashrc"`)

	t.Run("contain off catches ~/.bashrc", func(t *testing.T) {
		dir := t.TempDir()
		db, js, page, md := filepath.Join(dir, "h.db"), filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md")
		code, out, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--contain=off", "--report", js, "--report", page, "--report", md, "--", sh)
		want := "OUTSIDE changed " + bashrc + " (size 5 B -> 7 B)\n"
		if code != 1 || out != want {
			t.Fatalf("exit %d stdout %q, want 1 %q\nstderr %s", code, out, want, errs)
		}
		if !strings.Contains(errs, "\nwatched ") || !strings.HasSuffix(errs, "FAIL: 1 change outside the workspace\n") {
			t.Errorf("stderr %s", errs)
		}
		r := readReport(t, js)
		if r.Watch == nil || r.Watch.Entries < 1 || len(r.Outside) != 1 || r.Outside[0].Path != bashrc || r.Outside[0].Kind != "changed" ||
			!strings.Contains(strings.Join(r.Reasons, ","), "1 change outside the workspace") {
			t.Fatalf("report: watch %+v outside %+v reasons %q", r.Watch, r.Outside, r.Reasons)
		}
		var raw map[string]json.RawMessage
		data, _ := os.ReadFile(js)
		json.Unmarshal(data, &raw)
		for _, want := range []string{`"paths": [`, `"path": "` + bashrc + `"`, `"default": true`, `"entries": `} {
			if !strings.Contains(string(raw["watch"]), want) {
				t.Errorf("watch object lacks %s:\n%s", want, raw["watch"])
			}
		}
		for _, want := range []string{`"kind": "changed"`, `"path": "` + bashrc + `"`, `"aspects": [`, `"before": {`, `"after": {`} {
			if !strings.Contains(string(raw["outside"]), want) {
				t.Errorf("outside list lacks %s:\n%s", want, raw["outside"])
			}
		}
		if b, _ := os.ReadFile(page); !strings.Contains(string(b), `<tr class="row outside" data-outside="changed">`) {
			t.Error("the HTML report has no outside row")
		}
		if b, _ := os.ReadFile(md); !strings.Contains(string(b), "### Outside the workspace (1)") {
			t.Error("the Markdown report has no outside section")
		}
		// The history keeps it, shows it in the run's line format and
		// exports it; the chain covers it.
		if code, show, _ := cliRun(t, "history", "show", "last", "--db", db); code != 1 || show != want {
			t.Errorf("history show: exit %d %q", code, show)
		}
		exp := filepath.Join(dir, "export.json")
		if code, _, errs := cliRun(t, "history", "export", "last", "-o", exp, "--db", db); code != 0 {
			t.Fatalf("export: %s", errs)
		}
		if e := readReport(t, exp); len(e.Outside) != 1 || e.Outside[0].Line() != strings.TrimSuffix(want, "\n") || e.Watch == nil {
			t.Errorf("exported: %+v %+v", e.Outside, e.Watch)
		}
		if code, out, _ := cliRun(t, "history", "verify", "--db", db); code != 0 || out != "ok: 1 run, chain intact\n" {
			t.Errorf("verify: %d %q", code, out)
		}
	})
	t.Run("no-watch", func(t *testing.T) {
		js := filepath.Join(t.TempDir(), "r.json")
		if code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--contain=off", "--no-watch", "--report", js, "--", sh); code != 0 || out != "" {
			t.Fatalf("exit %d stdout %q stderr %s", code, out, errs)
		}
		if r := readReport(t, js); r.Watch != nil || r.Outside != nil {
			t.Errorf("--no-watch: watch %+v outside %+v", r.Watch, r.Outside)
		}
	})
	t.Run("watch an extra directory", func(t *testing.T) {
		extra := filepath.Join(t.TempDir(), "extra")
		os.Mkdir(extra, 0o755)
		ws, sh := fixture(t, `echo 1 > "$1/new"; echo 2 > inside`)
		code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--contain=off", "--no-watch", "--watch", extra,
			"--watch", filepath.Join(ws, "logs"), "--allow", "inside", "--", sh, extra)
		if want := "OUTSIDE added " + filepath.Join(extra, "new") + " (file 0644 2 B)\n"; code != 1 || out != want {
			t.Fatalf("exit %d stdout %q, want %q\nstderr %s", code, out, want, errs)
		}
		// No allowlist entry allows it.
		code, out, _ = cliRun(t, "run", "--workspace", ws, "--no-history", "--contain=off", "--no-watch", "--watch", extra, "--allow", "**", "--", sh, extra)
		if code != 1 || !strings.HasPrefix(out, "OUTSIDE changed "+filepath.Join(extra, "new")) {
			t.Fatalf("with --allow '**': exit %d stdout %q", code, out)
		}
	})
	t.Run("staged", func(t *testing.T) {
		// The stage lies in the user's cache directory: watching that
		// directory does not report the stage's own writes. (A staged run
		// is always contained: --writable lets the script reach ~/.bashrc.)
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(cache, "diffgate")
		os.MkdirAll(cache, 0o755)
		ws, sh := fixture(t, `echo x >> "$HOME/.bashrc"; echo 1 > inside`)
		db := filepath.Join(t.TempDir(), "h.db")
		code, out, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--stage", "--writable", home, "--watch", cache, "--allow", "inside", "--", sh)
		if !strings.HasPrefix(out, "OUTSIDE changed "+bashrc+" (size ") || strings.Count(out, "\n") != 1 || code != 1 {
			t.Fatalf("staged: exit %d stdout %q stderr %s", code, out, errs)
		}
		cliRun(t, "discard", "last", "--db", db)
	})
	if testenv.IsRoot() {
		return // root stats everything: the rest needs a normal user
	}
	t.Run("explicit path not watchable", func(t *testing.T) {
		locked := filepath.Join(t.TempDir(), "locked")
		os.Mkdir(locked, 0o755)
		os.WriteFile(filepath.Join(locked, "f"), []byte("x"), 0o644)
		os.Chmod(locked, 0)
		defer os.Chmod(locked, 0o755)
		ws, sh := fixture(t, "touch ran")
		code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--watch", filepath.Join(locked, "f"), "--", sh)
		if code != 2 || out != "" || errs != "diffgate: --watch "+filepath.Join(locked, "f")+": not watchable: permission denied (the gate cannot stat it)\n" {
			t.Errorf("exit %d stdout %q stderr %q", code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Error("the script ran")
		}
	})
	t.Run("default path not watchable", func(t *testing.T) {
		ssh := filepath.Join(home, ".ssh")
		os.Mkdir(ssh, 0o700)
		os.WriteFile(filepath.Join(ssh, "authorized_keys"), []byte("ssh-ed25519 AAAA me\n"), 0o600)
		os.Chmod(ssh, 0)
		defer os.Chmod(ssh, 0o700)
		ws, sh := fixture(t, `chmod 700 "$HOME/.ssh" && echo 'ssh-ed25519 BBBB evil' > "$HOME/.ssh/k" && mv "$HOME/.ssh/k" "$HOME/.ssh/authorized_keys" && chmod 0 "$HOME/.ssh"`)
		js := filepath.Join(t.TempDir(), "r.json")
		code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--contain=off", "--report", js, "--", sh)
		keys := filepath.Join(ssh, "authorized_keys")
		if code != 1 || !strings.HasPrefix(out, "OUTSIDE changed "+ssh+" (modified") || !strings.Contains(errs, "not watchable: "+keys+" (permission denied, its directory is watched instead, stat only)") {
			t.Fatalf("exit %d stdout %q stderr %s", code, out, errs)
		}
		r := readReport(t, js)
		found := false
		for _, u := range r.Watch.Unwatchable {
			found = found || u.Path == keys && u.Reason == "permission denied"
		}
		if !found {
			t.Errorf("unwatchable %+v", r.Watch.Unwatchable)
		}
	})
}

func TestRunWatch(t *testing.T) { testRunWatch(t) }

func TestRunWatchAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testRunWatch(t)
}

// TestRunSummaryCountsFindings: the stderr summary counts blocked actions
// and changes outside the workspace as the verdict's reasons do.
func TestRunSummaryCountsFindings(t *testing.T) {
	r := &report.Report{Blocked: []report.Blocked{{Kind: "write", Target: "/h/.bashrc"}, {Kind: "net", Target: "1.2.3.4:443"}},
		Outside: []report.Outside{{Kind: "added", Path: "/h/.config/autostart/x.desktop"}}}
	r.Evaluate()
	if got := summary(r); got != "FAIL: 2 blocked actions, 1 change outside the workspace" {
		t.Errorf("summary %q", got)
	}
}
