//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/diffgate/diffgate/internal/testenv"
)

// decoyScript makes 2,000 blocked decoys (writes to existing files
// outside the home directory, creates in it), then reads a secret key and
// writes ~/.bashrc.
const decoyScript = `#!/bin/sh
i=0
while [ $i -lt 1000 ]; do
	echo x 2>/dev/null >> "$1/w$i"
	printf '' 2>/dev/null > "$2/decoys/c$i"
	i=$((i+1))
done
cat "$2/.ssh/id_ed25519" >/dev/null 2>&1
echo evil 2>/dev/null >> "$2/.bashrc"
exit 0
`

// TestBlockedNotBuried: after 2,000 distinct blocked decoys, the read of
// ~/.ssh/id_ed25519 and the write of ~/.bashrc are named on stdout, in the
// history (history show) and in every report (JSON, Markdown, HTML); the
// decoys beyond the bound are counted by kind.
func TestBlockedNotBuried(t *testing.T) { testBlockedNotBuried(t) }

func TestBlockedNotBuriedAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testBlockedNotBuried(t)
}

func testBlockedNotBuried(t *testing.T) {
	base, err := os.MkdirTemp("/tmp", "dg-decoys-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	home, ws, wdir := filepath.Join(base, "home"), filepath.Join(base, "ws"), filepath.Join(base, "w")
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, "decoys"), ws, wdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 {
		os.WriteFile(filepath.Join(wdir, fmt.Sprint("w", i)), nil, 0o644)
	}
	bashrc, key := filepath.Join(home, ".bashrc"), filepath.Join(home, ".ssh", "id_ed25519")
	os.WriteFile(bashrc, []byte("orig\n"), 0o644)
	os.WriteFile(key, []byte("SECRET\n"), 0o600)
	sh := filepath.Join(base, "decoys.sh")
	os.WriteFile(sh, []byte(decoyScript), 0o755)
	t.Setenv("HOME", home)
	db := filepath.Join(base, "h.db")
	js, md, page := filepath.Join(base, "r.json"), filepath.Join(base, "r.md"), filepath.Join(base, "r.html")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--db", db, "--report", js, "--report", md, "--report", page, "--", sh, wdir, home)
	rep := readReport(t, js)
	if code != 1 || rep.Containment == nil || !rep.Containment.Observed {
		t.Skipf("blocked actions not observed here (exit %d): %s", code, errs)
	}
	if b, _ := os.ReadFile(bashrc); string(b) != "orig\n" {
		t.Fatalf(".bashrc = %q", b)
	}
	lines := []string{"BLOCKED read " + key, "BLOCKED write " + bashrc}
	for _, want := range lines {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("stdout lacks %q (%d lines)", want, strings.Count(out, "\n"))
		}
	}
	if c := rep.Containment; c.BlockedDropped == 0 || c.BlockedDroppedKinds["write"] == 0 || c.BlockedDroppedKinds["create"] == 0 {
		t.Errorf("dropped %d by kind %v", c.BlockedDropped, c.BlockedDroppedKinds)
	}
	if !strings.Contains(errs, "more blocked actions, beyond the list's bound, counted but not listed: create ") {
		t.Errorf("stderr does not count the dropped ones by kind:\n%s", errs)
	}
	found := map[string]bool{}
	for _, b := range rep.Blocked {
		found["BLOCKED "+b.Kind+" "+b.Target] = true
	}
	_, hist, histErrs := cliRun(t, "history", "show", "last", "--db", db)
	if !strings.Contains(histErrs, "more blocked actions, beyond the list's bound, counted but not listed: create ") {
		t.Errorf("history show does not count the dropped ones by kind:\n%s", histErrs)
	}
	mdText, _ := os.ReadFile(md)
	htmlText, _ := os.ReadFile(page)
	for _, want := range lines {
		if !found[want] {
			t.Errorf("the JSON report lacks %s", want)
		}
		if !strings.Contains(hist, want) {
			t.Errorf("history show lacks %s", want)
		}
		target := want[strings.LastIndex(want, " ")+1:]
		if !strings.Contains(string(mdText), target) {
			t.Errorf("the Markdown report lacks %s", target)
		}
		if !strings.Contains(string(htmlText), html.EscapeString(target)) {
			t.Errorf("the HTML report lacks %s", target)
		}
	}
}
