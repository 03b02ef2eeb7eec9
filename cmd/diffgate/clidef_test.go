package main

import (
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
