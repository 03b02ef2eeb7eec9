//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/internal/pgtest"
	"github.com/diffgate/diffgate/internal/testenv"
)

// teamStore starts a PostgreSQL server with a team store: the database
// owned by "owner" (who runs the migration, creating the roles
// diffgate_ci and diffgate_reviewer), the reviewer "ana" and the CI login
// "ci". It returns the server and the database's name.
func teamStore(t *testing.T) (*pgtest.Server, string) {
	t.Helper()
	srv := pgtest.Start(t)
	name := srv.NewDB(t, "owner")
	db, err := history.Open(srv.URL("owner", name), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	srv.Exec(t, name,
		"CREATE ROLE ana LOGIN IN ROLE diffgate_reviewer",
		"CREATE ROLE ci LOGIN IN ROLE diffgate_ci")
	return srv, name
}

// checkout makes a workspace dir/sub inside a git checkout whose origin
// is remote (only .git/config: the stable id reads nothing else), owned by
// the test user when root.
func checkout(t *testing.T, remote string) string {
	t.Helper()
	root := testenv.UserTempDir(t)
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = "+remote+"\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"), 0o644)
	ws := filepath.Join(root, "sub")
	os.MkdirAll(filepath.Join(ws, "logs"), 0o755)
	os.WriteFile(filepath.Join(ws, "config.json"), []byte("{}\n"), 0o644)
	testenv.Chown(t, root)
	return ws
}

// cliAs runs the CLI binary with HOME=home (and XDG dirs below it), as the
// test user when asUser: exit code, stdout, stderr.
func cliAs(t *testing.T, asUser bool, home string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(testenv.CLI(t), args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "DIFFGATE_DB=")
	if asUser {
		testenv.UserCmd(cmd)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("%v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// TestApprovalTravels: an allowlist approved by the reviewer ana on one
// machine (one HOME, one checkout) is used by a CI run on another (another
// HOME, another checkout of the same repository, another OS user), which
// passes and says who approved the version and when. CI cannot approve.
func TestApprovalTravels(t *testing.T) {
	srv, name := teamStore(t)
	// Two checkouts of one repository, its remote spelled two ways.
	wsAna := checkout(t, "https://ana@git.example.com/team/repo.git")
	wsCI := checkout(t, "git@git.example.com:team/repo")
	homeAna, homeCI := testenv.UserTempDir(t), testenv.UserTempDir(t)
	sh := filepath.Join(testenv.UserTempDir(t), "gen.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\necho x > logs/new.log\n"), 0o755)
	testenv.Chown(t, filepath.Dir(sh))

	code, out, errs := cliAs(t, false, homeAna, "allowlist", "approve", "--workspace", wsAna, "--allow", "logs/", "--note", "logs are fine", "--db", srv.URL("ana", name))
	if code != 0 {
		t.Fatalf("approve as ana: exit %d %q %q", code, out, errs)
	}
	// CI may record runs but not approve.
	code, _, errs = cliAs(t, true, homeCI, "allowlist", "approve", "--workspace", wsCI, "--allow", "**", "--note", "me", "--db", srv.URL("ci", name))
	if code == 0 || !strings.Contains(errs, "permission denied") {
		t.Fatalf("approve as ci: exit %d %q, want refused", code, errs)
	}
	rep := filepath.Join(homeCI, "r.json")
	code, out, errs = cliAs(t, true, homeCI, "run", "--workspace", wsCI, "--db", srv.URL("ci", name), "--allowlist-from-history", "--report", rep, "--", sh)
	if code != 0 {
		t.Fatalf("CI run: exit %d stdout %q stderr %q", code, out, errs)
	}
	if !strings.Contains(errs, "allowlist: version 1, approved ") || !strings.Contains(errs, " by ana (logs are fine)") {
		t.Errorf("stderr %q: want the version, when and by whom", errs)
	}
	r := readReport(t, rep)
	if a := r.AllowlistApproved; a == nil || a.Version != 1 || a.ApprovedBy != "ana" || a.ApprovedAt == nil || a.Note != "logs are fine" {
		t.Fatalf("report allowlist_approved %+v, want version 1 approved by ana, with its time", a)
	}
	// The run is on the server, under the repository's id, and the chain holds.
	code, out, errs = cliAs(t, false, homeAna, "history", "--db", srv.URL("ana", name))
	if code != 0 || !strings.Contains(out, "git:git.example.com/team/repo#sub") {
		t.Errorf("history as ana: exit %d %q %q", code, out, errs)
	}
	code, out, errs = cliAs(t, true, homeCI, "history", "verify", "--db", srv.URL("ci", name))
	if code != 0 {
		t.Errorf("verify as ci: exit %d %q %q", code, out, errs)
	}
}

// TestTeamStoreTamper: the server refuses to update or delete a record
// (for the roles and for the owner alike), and an edit the owner makes
// after disabling the trigger is caught by history verify, which also
// refuses the edited allowlist for a run.
func TestTeamStoreTamper(t *testing.T) {
	srv, name := teamStore(t)
	ws := checkout(t, "https://git.example.com/team/repo.git")
	home := testenv.UserTempDir(t)
	if code, out, errs := cliAs(t, false, home, "allowlist", "approve", "--workspace", ws, "--allow", "logs/", "--note", "ok", "--db", srv.URL("ana", name)); code != 0 {
		t.Fatalf("approve: exit %d %q %q", code, out, errs)
	}
	sh := filepath.Join(testenv.UserTempDir(t), "gen.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\necho x > logs/new.log\n"), 0o755)
	testenv.Chown(t, filepath.Dir(sh))
	if code, out, errs := cliAs(t, true, home, "run", "--workspace", ws, "--db", srv.URL("ci", name), "--allowlist-from-history", "--", sh); code != 0 {
		t.Fatalf("run: exit %d %q %q", code, out, errs)
	}
	edit := "UPDATE allowlists SET entries = '\\x01022a2a'::bytea WHERE version = 1" // encodeList({"**"})
	for _, role := range []string{"ci", "ana", "owner"} {
		err := srv.ExecAs(role, name, edit)
		if err == nil || !strings.Contains(err.Error(), "append-only") && !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("UPDATE as %s: %v, want refused", role, err)
		}
		if err := srv.ExecAs(role, name, "DELETE FROM runs"); err == nil {
			t.Errorf("DELETE as %s was allowed", role)
		}
	}
	if err := srv.ExecAs("ci", name, "INSERT INTO chain (kind, ref, hash) VALUES ('allowlist', 2, 'x')"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("an allowlist link inserted as ci: %v, want permission denied", err)
	}
	if err := srv.ExecAs("ci", name, "INSERT INTO decisions (run_id, decision, note, decided_at) VALUES (1, 'approve', '', '2026-01-01T00:00:00Z')"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a decision inserted as ci: %v, want permission denied", err)
	}
	if code, out, errs := cliAs(t, false, home, "history", "verify", "--db", srv.URL("ana", name)); code != 0 || !strings.Contains(out, "chain intact") {
		t.Fatalf("verify before the edit: exit %d %q %q", code, out, errs)
	}
	// The owner can disable the trigger (and drop the check that an
	// approval is the approver's own): the edit is then caught.
	if err := srv.ExecAs("owner", name, "ALTER TABLE allowlists DISABLE TRIGGER allowlists_append_only",
		"ALTER TABLE allowlists DROP CONSTRAINT allowlists_approved_by_check", edit,
		"ALTER TABLE allowlists ENABLE TRIGGER allowlists_append_only"); err != nil {
		t.Fatal(err)
	}
	code, out, errs := cliAs(t, false, home, "history", "verify", "--db", srv.URL("ana", name))
	if code != 1 || !strings.Contains(out, "broken at allowlist version 1 of git:git.example.com/team/repo#sub: altered") {
		t.Errorf("verify after the owner's edit: exit %d %q %q", code, out, errs)
	}
	code, out, errs = cliAs(t, true, home, "run", "--workspace", ws, "--db", srv.URL("ci", name), "--allowlist-from-history", "--", sh)
	if code != 2 || !strings.Contains(errs, "hash chain") {
		t.Errorf("run on the edited allowlist: exit %d %q %q, want refused (exit 2)", code, out, errs)
	}
	// A trigger left disabled is reported by verify, before any edit shows.
	srv2name := srv.NewDB(t, "owner")
	if code, out, errs := cliAs(t, false, home, "history", "verify", "--db", srv.URL("owner", srv2name)); code != 0 {
		t.Fatalf("verify a fresh store: exit %d %q %q", code, out, errs)
	}
	if err := srv.ExecAs("owner", srv2name, "ALTER TABLE decisions DISABLE TRIGGER decisions_append_only"); err != nil {
		t.Fatal(err)
	}
	code, out, errs = cliAs(t, false, home, "history", "verify", "--db", srv.URL("owner", srv2name))
	if code != 1 || !strings.Contains(out, "broken at table decisions: its trigger decisions_append_only is disabled") {
		t.Errorf("verify with a disabled trigger: exit %d %q %q", code, out, errs)
	}
}

// TestTeamStoreOffline: with the team store down, a run with
// --allowlist-from-history is refused (exit 2); one without is recorded
// locally and says so; history push sends it once the store is back, and
// both chains verify.
func TestTeamStoreOffline(t *testing.T) {
	srv, name := teamStore(t)
	ws := checkout(t, "https://git.example.com/team/repo.git")
	home := testenv.UserTempDir(t)
	url := srv.URL("ci", name)
	if code, out, errs := cliAs(t, false, home, "allowlist", "approve", "--workspace", ws, "--allow", "logs/", "--note", "ok", "--db", srv.URL("ana", name)); code != 0 {
		t.Fatalf("approve: exit %d %q %q", code, out, errs)
	}
	sh := filepath.Join(testenv.UserTempDir(t), "gen.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\necho x >> logs/new.log\n"), 0o755)
	testenv.Chown(t, filepath.Dir(sh))
	if code, out, errs := cliAs(t, true, home, "run", "--workspace", ws, "--db", url, "--allowlist-from-history", "--", sh); code != 0 {
		t.Fatalf("online run: exit %d %q %q", code, out, errs)
	}
	srv.Stop(t)
	code, out, errs := cliAs(t, true, home, "run", "--workspace", ws, "--db", url, "--allowlist-from-history", "--", sh)
	if code != 2 || !strings.Contains(errs, "unreachable") {
		t.Fatalf("offline run with --allowlist-from-history: exit %d %q %q, want 2 (unreachable)", code, out, errs)
	}
	code, out, errs = cliAs(t, true, home, "run", "--workspace", ws, "--db", url, "--allow", "logs/", "--", sh)
	if code != 0 || !strings.Contains(errs, "unreachable: run recorded locally as run 1 in ") || !strings.Contains(errs, "diffgate history push --db ") {
		t.Fatalf("offline run: exit %d %q %q, want recorded locally", code, out, errs)
	}
	local := filepath.Join(home, ".config", "diffgate", "history.db")
	if code, out, errs := cliAs(t, true, home, "history", "push", "--db", url); code != 2 || !strings.Contains(errs, "unreachable") {
		t.Errorf("push while down: exit %d %q %q, want 2", code, out, errs)
	}
	srv.Restart(t)
	code, out, errs = cliAs(t, true, home, "history", "push", "--db", url)
	if code != 0 || out != "pushed run 1 as run 2\n" {
		t.Fatalf("push: exit %d %q %q", code, out, errs)
	}
	if code, out, errs := cliAs(t, true, home, "history", "push", "--db", url); code != 0 || !strings.Contains(errs, "no runs wait") {
		t.Errorf("second push: exit %d %q %q, want nothing to send", code, out, errs)
	}
	for _, db := range []string{url, local} {
		if code, out, errs := cliAs(t, true, home, "history", "verify", "--db", db); code != 0 || !strings.Contains(out, "chain intact") {
			t.Errorf("verify %s: exit %d %q %q", db, code, out, errs)
		}
	}
	code, out, _ = cliAs(t, false, home, "history", "--db", srv.URL("ana", name))
	if code != 0 || strings.Count(out, "git:git.example.com/team/repo#sub") != 2 {
		t.Errorf("team history after the push: %q, want two runs of the repository", out)
	}
}
