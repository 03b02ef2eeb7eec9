package main

// End-to-end tests of what the walk must not miss: run as a normal user
// (testenv.AsUser), with real scripts.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/internal/testenv"
)

// userFixture makes a workspace below a directory the test user owns (so
// the script may replace the workspace itself) and a script outside it.
func userFixture(t *testing.T, script string) (ws, sh, dir string) {
	t.Helper()
	dir = t.TempDir()
	ws = filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, "logs"), 0o755)
	os.Chmod(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "config.json"), []byte("{}\n"), 0o644)
	sh = filepath.Join(dir, "gen.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\n"+script+"\n"), 0o755)
	return ws, sh, dir
}

type walkReport struct {
	Verdict    string   `json:"verdict"`
	Reasons    []string `json:"reasons"`
	Unreadable []struct {
		Path, When, Reason string
	} `json:"unreadable"`
	Changes []struct {
		Path string `json:"path"`
		Risk string `json:"risk"`
	} `json:"changes"`
}

func readWalkReport(t *testing.T, p string) walkReport {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var r walkReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLockedDirectoryTamperFails: a script unlocks a locked directory,
// plants a setuid file in it and locks it again. The gate cannot see
// inside, so it fails and says why.
func TestLockedDirectoryTamperFails(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	ws, sh, dir := userFixture(t, "chmod 755 box && echo evil > box/planted && chmod 4755 box/planted && chmod 000 box")
	os.Mkdir(filepath.Join(ws, "box"), 0)
	defer os.Chmod(filepath.Join(ws, "box"), 0o755)
	rep := filepath.Join(dir, "r.json")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--report", rep, "--", sh)
	if code != 1 || out != "UNREADABLE box (cannot open directory: permission denied)\n" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	r := readWalkReport(t, rep)
	if r.Verdict != "fail" || len(r.Unreadable) != 1 || r.Unreadable[0].When != "both" || !strings.Contains(strings.Join(r.Reasons, ","), "1 unreadable entry") {
		t.Fatalf("report %+v", r)
	}
}

// TestUnreadableFileRuns: a file the user cannot read is not CHANGED on a
// no-op run (it is UNREADABLE), and an edit to it under --rehash does not
// pass either.
func TestUnreadableFileRuns(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	for _, c := range []struct{ name, script, flag string }{
		{"no-op", "true", ""},
		{"edit with --rehash", "printf 'xx\\n' > secret", "--rehash"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, sh, _ := userFixture(t, c.script)
			os.WriteFile(filepath.Join(ws, "secret"), []byte("{}\n"), 0o200)
			args := []string{"run", "--workspace", ws, "--no-history"}
			if c.flag != "" {
				args = append(args, c.flag)
			}
			code, out, errs := cliRun(t, append(args, "--", sh)...)
			if code != 1 || out != "UNREADABLE secret (cannot read: permission denied)\n" {
				t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
			}
		})
	}
}

// TestWorkspaceRootChanges: a script that changes the workspace root's
// mode, locks it, or replaces it with a symlink to a copy gets a fail
// verdict (exit 1) with a report and a history record, not a setup error.
func TestWorkspaceRootChanges(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	for _, c := range []struct{ name, script, want string }{
		{"setgid and world-writable", "chmod 2777 .", "CHANGED . (mode 0755 -> 2777)\n"},
		{"locked", "chmod 000 .", "CHANGED . (mode 0755 -> 0000)\nUNREADABLE . (cannot open directory: permission denied)\n"},
		{"symlink to a copy", `cp -a "$PWD" "$PWD.copy" && rm -rf "$PWD" && ln -s "$PWD.copy" "$PWD"`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, sh, dir := userFixture(t, c.script)
			defer os.Chmod(ws, 0o755)
			rep, db := filepath.Join(dir, "r.json"), filepath.Join(dir, "h.db")
			// Uncontained: a contained script cannot replace the root (it
			// is a mount point of the read-only mounts, and without them
			// the directory holding it is not writable).
			code, out, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--report", rep, "--contain=off", "--", sh)
			if c.want == "" {
				c.want = "CHANGED . (type dir -> symlink, target  -> " + ws + ".copy, symlink-escape)\nUNREADABLE . (not a directory)\n"
			}
			if code != 1 || out != c.want {
				t.Fatalf("exit %d stdout %q stderr %q, want %q", code, out, errs, c.want)
			}
			if r := readWalkReport(t, rep); r.Verdict != "fail" {
				t.Fatalf("report %+v", r)
			}
			if code, out, errs := cliRun(t, "history", "show", "last", "--db", db); code != 1 && code != 0 || !strings.Contains(out+errs, "fail") {
				t.Fatalf("history: %d %q %q", code, out, errs)
			}
		})
	}
}

// TestDiffVerbUnreadable: diffgate diff on two manifests prints and fails
// on an entry the snapshot could not read.
func TestDiffVerbUnreadable(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	ws, _, dir := userFixture(t, "")
	os.Mkdir(filepath.Join(ws, "box"), 0)
	defer os.Chmod(filepath.Join(ws, "box"), 0o755)
	m := filepath.Join(dir, "m.json")
	if code, _, errs := cliRun(t, "snapshot", ws, "-o", m); code != 0 || !strings.Contains(errs, "box: cannot open directory") {
		t.Fatalf("snapshot: %d %q", code, errs)
	}
	if code, out, errs := cliRun(t, "diff", m, m); code != 1 || out != "UNREADABLE box (cannot open directory: permission denied)\n" {
		t.Fatalf("diff: %d %q %q", code, out, errs)
	}
}

// TestCapabilityAndACL: setcap on a file is a capability risk that only an
// entry naming it allows; an ACL is an xattr change (root, uncontained:
// setcap needs CAP_SETFCAP, which a contained script does not keep).
func TestCapabilityAndACL(t *testing.T) {
	if !testenv.IsRoot() {
		t.Skip("setcap needs root")
	}
	for _, tool := range []string{"setcap", "setfacl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	cases := []struct {
		name, script string
		allow        string
		code         int
		out          string
	}{
		{"setcap", "setcap cap_setuid+ep tool", "tool", 1, "CHANGED tool (xattr none -> security.capability, capability, allow with capability:tool)\n"},
		{"setcap allowed by its risk", "setcap cap_setuid+ep tool", "capability:tool", 0, ""},
		{"acl", "setfacl -m u:65534:rwx tool", "", 1, "CHANGED tool (mode 0755 -> 0775, xattr none -> system.posix_acl_access)\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, sh, _ := userFixture(t, c.script)
			os.WriteFile(filepath.Join(ws, "tool"), []byte("#!/bin/sh\n"), 0o755)
			code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--contain=off", "--allow", c.allow, "--", sh)
			if code != c.code || out != c.out {
				t.Fatalf("exit %d stdout %q stderr %q; want %d %q", code, out, errs, c.code, c.out)
			}
		})
	}
}
