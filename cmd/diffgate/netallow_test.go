package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/internal/testenv"
)

// TestNetAllowContract pins contract.md's "Network by host": --net-allow
// opens the network to the named hosts only, through the gate's proxy; a
// refused request prints BLOCKED net HOST:PORT and is in the report's
// network list with {host, port, method, bytes_out, bytes_in, allowed,
// reason, pid, cmd}; stderr says what went through; a bad entry is exit 2
// with one line. The refused host is never resolved (no network needed).
// As root and as a user.
func TestNetAllowContract(t *testing.T) {
	testenv.SelfAndUser(t, netAllowContract)
}

func netAllowContract(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	for _, bad := range []string{"exa mple.org", "example.org:0", "*.10.0.0.1"} {
		code, out, errs := cliRun(t, "run", "--workspace", t.TempDir(), "--no-history", "--net-allow", bad, "--", "true")
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--net-allow") {
			t.Errorf("--net-allow %q: exit %d stdout %q stderr %q", bad, code, out, errs)
		}
	}
	ws, sh := fixture(t, `curl -sS -f -o /dev/null http://blocked.example/x; echo "curl: $?" >&2`)
	rep := filepath.Join(t.TempDir(), "r.json")
	db := filepath.Join(t.TempDir(), "h.db")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--net-allow", "registry.example", "--report", rep, "--", sh)
	if strings.Contains(errs, "blocked actions not observable") {
		t.Skipf("blocked actions not observed here:\n%s", errs)
	}
	if code != 1 || out != "BLOCKED net blocked.example:80\n" || !strings.Contains(errs, "curl: 22") ||
		!strings.Contains(errs, "\nnetwork: 1 request, 1 refused: blocked.example\n") {
		t.Fatalf("exit %d stdout %q stderr:\n%s", code, out, errs)
	}
	// history show says it again, from the record.
	if code, out, errs := cliRun(t, "history", "show", "last", "--violations", "--db", db); code != 1 || out != "BLOCKED net blocked.example:80\n" ||
		!strings.Contains(errs, "\nnetwork: 1 request, 1 refused: blocked.example\n") {
		t.Errorf("history show: exit %d stdout %q stderr:\n%s", code, out, errs)
	}
	// Staged, the same.
	if code, out, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--stage", "--net-allow", "registry.example", "--", sh); code != 1 ||
		out != "BLOCKED net blocked.example:80\n" || !strings.Contains(errs, "\nnetwork: 1 request, 1 refused: blocked.example\n") {
		t.Errorf("staged: exit %d stdout %q stderr:\n%s", code, out, errs)
	}
	data, _ := os.ReadFile(rep)
	var raw struct {
		Network []map[string]any `json:"network"`
	}
	if err := json.Unmarshal(data, &raw); err != nil || len(raw.Network) != 1 {
		t.Fatalf("report: %v\n%s", err, data)
	}
	n := raw.Network[0]
	for _, k := range []string{"host", "port", "method", "bytes_out", "bytes_in", "allowed", "reason", "pid", "cmd"} {
		if _, ok := n[k]; !ok {
			t.Errorf("network[0] lacks %q: %v", k, n)
		}
	}
	if n["host"] != "blocked.example" || n["port"] != 80.0 || n["method"] != "GET" || n["allowed"] != false || n["reason"] != "host not allowed" ||
		n["pid"].(float64) <= 0 || !strings.Contains(n["cmd"].(string), "curl") {
		t.Errorf("network[0] = %v", n)
	}
}
