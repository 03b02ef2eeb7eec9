//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
)

// selfApproveScript tries, from inside a gated run, to approve an
// allowlist for its own workspace, directly and from a new PID namespace
// (where no gate is among its ancestors; there also to discard and to
// apply its workspace's staged run), and writes each exit code and stderr
// into the workspace.
const selfApproveScript = `#!/bin/sh
dg="$1"; db="$2"; shift 2
"$dg" allowlist approve --workspace "$PWD" --db "$db" --allow '**' --note self > direct.err 2>&1
echo $? > direct.code
if [ $# -gt 0 ]; then
	"$@" "$dg" allowlist approve --workspace "$PWD" --db "$db" --allow '**' --note self > ns.err 2>&1
	echo $? > ns.code
	"$@" "$dg" discard 1 --db "$db" > discard.err 2>&1
	echo $? > discard.code
	"$@" "$dg" apply 1 --only-allowed --db "$db" > apply.err 2>&1
	echo $? > apply.code
fi
`

// TestSelfApprovalRefused: a gated script cannot approve its own
// allowlist, not even from a new PID namespace with its own /proc (unshare
// -p -f --mount-proc), where the ancestor check sees no gate: the
// workspace's lock, held by the gate, refuses it (exit 2, one line),
// whether the run is contained or not (contained, unshare itself fails).
func TestSelfApprovalRefused(t *testing.T) { testSelfApproval(t) }

func TestSelfApprovalRefusedAsUser(t *testing.T) {
	testenv.CLI(t) // built here, used by the child
	if testenv.AsUser(t) {
		return
	}
	testSelfApproval(t)
}

func testSelfApproval(t *testing.T) {
	bin := testenv.CLI(t)
	// A new PID namespace with its own /proc: as root directly, as a user
	// inside a user namespace. Probed outside the gate.
	var ns []string
	for _, try := range [][]string{{"unshare", "-p", "-f", "--mount-proc"}, {"unshare", "-r", "-p", "-f", "--mount-proc"}} {
		if err := exec.Command(try[0], append(try[1:], "true")...).Run(); err == nil {
			ns = try
			break
		}
	}
	if ns == nil {
		t.Log("no PID namespace here (unshare -p fails): only the direct call is tried")
	}
	dir := testenv.UserTempDir(t)
	sh := filepath.Join(dir, "approve.sh")
	os.WriteFile(sh, []byte(selfApproveScript), 0o755)
	for _, mode := range []string{"off", "auto"} {
		t.Run(mode, func(t *testing.T) {
			ws := testenv.UserTempDir(t)
			db := filepath.Join(testenv.UserTempDir(t), "h.db")
			// Run 1: a staged run of the workspace, pending; the script
			// must not discard or apply it either.
			t.Setenv("XDG_CACHE_HOME", testenv.UserTempDir(t))
			staged := filepath.Join(testenv.UserTempDir(t), "staged.sh")
			os.WriteFile(staged, []byte("#!/bin/sh\necho x > staged.txt\n"), 0o755)
			if code, _, errs := cliRun(t, "run", "--stage-mechanism=copy", "--db", db, "--workspace", ws, "--allow", "**", "--", staged); code != 0 && code != 1 {
				t.Fatalf("staged run: exit %d %s", code, errs)
			}
			t.Cleanup(func() { cliRun(t, "discard", "1", "--db", db) })
			args := []string{"run", "--workspace", ws, "--no-history", "--contain=" + mode, "--allow", "**", "--", sh, bin, db}
			if mode == "off" { // contained, unshare itself is refused
				args = append(args, ns...)
			}
			code, out, errs := cliRun(t, args...)
			t.Logf("gate: exit %d stdout %q stderr %q", code, out, errs)
			calls := []string{"direct"}
			if ns != nil && mode == "off" {
				calls = append(calls, "ns", "discard", "apply")
			}
			for _, call := range calls {
				c, _ := os.ReadFile(filepath.Join(ws, call+".code"))
				e, _ := os.ReadFile(filepath.Join(ws, call+".err"))
				if strings.TrimSpace(string(c)) != "2" || strings.Count(string(e), "\n") != 1 {
					t.Errorf("%s call from the gated script: exit %q stderr %q, want 2 and one line", call, c, e)
				}
			}
			if st := runStateOf(t, db, 1); st != report.StagePending {
				t.Errorf("the script decided its workspace's staged run: %s", st)
			}
			if _, err := os.Stat(filepath.Join(ws, "staged.txt")); err == nil {
				t.Error("the script applied its workspace's staged run")
			}
			if _, err := os.Stat(db); err == nil {
				h, err := history.Open(db, zerolog.Nop())
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				key, _ := history.WorkspaceKey(ws)
				if a, err := h.LatestAllowlist(context.Background(), key); err != nil || a != nil {
					t.Fatalf("the script approved its own allowlist: %+v %v", a, err)
				}
			}
		})
	}
}
