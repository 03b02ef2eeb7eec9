//go:build !js

package ui

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/quote"
)

// TestRerunWithGrants: a contained run that failed on blocked actions with
// a fix to grant (a tool cache, a git directory's config, a name lookup)
// shows "Rerun with these grants" under the review's hints; it opens a
// confirmation listing exactly those grants, and Rerun starts a run
// through the Run tab whose containment.grants holds them, for that run
// only (the Run tab's allowlist and folders stay as they were).
func TestRerunWithGrants(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(fyne.NewSize(1400, 900))
	base, err := os.MkdirTemp("/tmp", "dg-app-rerun-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	cache := filepath.Join(home, ".cache", "go-build")
	for _, d := range []string{filepath.Join(ws, ".git"), cache} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644)
	// The hints name a tool cache below the home directory.
	t.Setenv("HOME", home)
	body := "echo x > " + cache + "/entry\necho '[x]' >> .git/config\necho ok > inside\n"
	_, pyErr := exec.LookPath("python3")
	if pyErr == nil {
		body = "python3 -c 'import socket\ntry: socket.getaddrinfo(\"rerun-grant.example\", 80)\nexcept OSError: pass'\n" + body
	}
	script := writeScript(t, t.TempDir(), body)
	u.run.setInputs(ws, script, []string{"inside"})
	test.Tap(u.run.runBtn)
	l.until(t, "the run", 60*time.Second, func() bool { return !u.run.running && u.Review().Report() != nil })
	first := u.Review().Report()
	if c := first.Containment; c == nil || !c.Observed {
		t.Skipf("blocked actions not observed here: %+v", c)
	}
	if first.Verdict != report.Fail || u.run.rerunState.btn == nil {
		t.Fatalf("verdict %s, blocked %+v: no rerun offered", first.Verdict, first.Blocked)
	}
	if drawn := uitest.DrawnText(u.Review()); !strings.Contains(drawn, "Rerun with these grants") || !strings.Contains(drawn, "hint: tool cache") {
		t.Errorf("the review lacks the hints or the button:\n%s", drawn)
	}
	dns := slices.ContainsFunc(first.Blocked, func(b report.Blocked) bool { return b.Kind == "dns" && b.Target == "rerun-grant.example" })
	if pyErr == nil && !dns {
		t.Logf("the lookup was not recorded by name here: %+v", first.Blocked)
	}

	test.Tap(u.run.rerunState.btn)
	d := u.run.rerunState.dialog
	if d == nil {
		t.Fatal("no confirmation")
	}
	want := []string{"profile preset:go-build", "write below " + quote.Path(filepath.Join(ws, ".git"))}
	if dns {
		want = append(want, "network to rerun-grant.example ")
	}
	shown := uitest.DrawnText(w.Canvas().Overlays().Top())

	for _, s := range want {
		if !strings.Contains(shown, s) {
			t.Errorf("the confirmation lacks %q:\n%s", s, shown)
		}
	}
	if n := len(u.run.rerunState.lines); n != len(want) {
		t.Errorf("the confirmation lists %d grants, want %d: %q", n, len(want), u.run.rerunState.lines)
	}
	d.Confirm()
	l.until(t, "the rerun", 60*time.Second, func() bool { return !u.run.running && u.Review().Report() != first })
	grants := u.Review().Report().Containment.Grants
	has := func(kind, target, by string) bool {
		return slices.ContainsFunc(grants, func(g report.Grant) bool {
			return g.Kind == kind && (target == "" || g.Target == target) && (by == "" || g.By == by)
		})
	}
	if !has("cache", "", "preset:go-build") || !has("writable", filepath.Join(ws, ".git"), "") || dns && !has("net", "rerun-grant.example", "") {
		t.Errorf("the rerun's grants %+v", grants)
	}
	// For that run only.
	if got := u.run.allow.Entries(); !slices.Equal(got, []string{"inside"}) || len(u.run.contain.writable) != 0 || u.run.rerunState.grants != nil {
		t.Errorf("the Run tab kept the grants: allowlist %q, writable %q", got, u.run.contain.writable)
	}
}

// TestGrantsFor: the grants of a rerun come from the hints, made concrete:
// the hosts the proxy refused as not allowed and the names looked up, the
// profiles of tool caches, a git directory or a folder outside as
// writable; none for a pass, an inline script, or blocks without a fix.
func TestGrantsFor(t *testing.T) {
	r := &report.Report{Workspace: "/w", Verdict: report.Fail, Script: report.Script{Path: "/s.sh"},
		Blocked: []report.Blocked{{Kind: "net", Target: "registry.example:443"}, {Kind: "dns", Target: "files.example"},
			{Kind: "dns", Target: "10.0.0.2:53"}, {Kind: "write", Target: "/h/.npm/_cacache/x"},
			{Kind: "write", Target: "/w/.git/config"}, {Kind: "create", Target: "/tmp/x"}, {Kind: "read", Target: "/h/.ssh/id_rsa"},
			{Kind: "write", Target: "/opt/data/x"}},
		Network: []report.NetRequest{{Host: "registry.example", Port: 443, Method: "CONNECT", Reason: "host not allowed"},
			{Host: "10.1.1.1", Port: 80, Method: "GET", Reason: "address not public (private)"}}}
	g := grantsFor(r, "/h")
	if !slices.Equal(g.hosts, []string{"registry.example:443", "files.example"}) || !slices.Equal(g.entries, []string{"preset:node"}) ||
		!slices.Equal(g.writable, []string{"/w/.git", "/opt/data"}) {
		t.Errorf("grants %+v", g)
	}
	if len(g.lines()) != 5 {
		t.Errorf("lines %q", g.lines())
	}
	for _, mod := range []func(r *report.Report){
		func(r *report.Report) { r.Verdict = report.Pass },
		func(r *report.Report) { r.Script.Inline = true },
		func(r *report.Report) {
			r.Blocked = []report.Blocked{{Kind: "create", Target: "/tmp/x"}, {Kind: "read", Target: "/h/.ssh/id_rsa"}}
		},
	} {
		c := *r
		mod(&c)
		if g := grantsFor(&c, "/h"); !g.empty() {
			t.Errorf("grants %+v for %+v", g, c)
		}
	}
}

func TestJoinArgs(t *testing.T) {
	args := []string{"a", "b c", "it's", ""}
	got, err := splitArgs(joinArgs(args))
	if err != nil || !slices.Equal(got, args) {
		t.Fatalf("%q -> %q -> %q %v", args, joinArgs(args), got, err)
	}
}
