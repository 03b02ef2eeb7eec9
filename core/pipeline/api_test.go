package pipeline

import (
	"testing"

	"github.com/diffgate/diffgate/core/report"
)

// TestContainHintsAtWorkspace: a copy stage that ran the script at the
// copy's path (Stage.RunAt) blocked a write below the copy's .git; the
// hint grants the workspace's .git, not the copy's, which the next run
// will not have.
func TestContainHintsAtWorkspace(t *testing.T) {
	r := &report.Report{Workspace: "/w/ws", Stage: &report.Stage{RunAt: "/cache/stages/7/copy"},
		Blocked: []report.Blocked{{Kind: "write", Target: "/cache/stages/7/copy/.git/config"}}}
	hs := ContainHints(r, "/home/u")
	if len(hs) != 1 || hs[0].Flag != "--writable .git" || hs[0].Example != "/w/ws/.git/config" {
		t.Fatalf("hints %+v, want --writable .git for /w/ws/.git/config", hs)
	}
	if r.Blocked[0].Target != "/cache/stages/7/copy/.git/config" {
		t.Error("the report's own blocked list was rewritten")
	}
	for in, want := range map[string]string{
		"/cache/stages/7/copy":               "/w/ws",
		"/cache/stages/7/copy/a -> /etc/x":   "/w/ws/a -> /etc/x",
		"/cache/stages/7/copyright":          "/cache/stages/7/copyright",
		"/home/u/.bashrc":                    "/home/u/.bashrc",
		"/tmp/a -> /cache/stages/7/copy/b/c": "/tmp/a -> /w/ws/b/c",
	} {
		if got := atWorkspace(in, "/cache/stages/7/copy", "/w/ws"); got != want {
			t.Errorf("atWorkspace(%q) = %q, want %q", in, got, want)
		}
	}
}
