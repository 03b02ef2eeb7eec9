package review

import (
	"strings"
	"testing"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/core/report"
)

// TestBannerGrantsAndHints: the banner shows what the run was granted and,
// under the blocked actions, the fix for each kind.
func TestBannerGrantsAndHints(t *testing.T) {
	r := cleanReport()
	r.Script.Path = "/w/gen.sh"
	r.Containment = &report.Containment{Mode: "auto", Contained: true, LandlockABI: 7, Observed: true,
		Layers: []report.Layer{{Name: "filesystem", Requested: true, Enforced: true, How: "landlock v7"}},
		Grants: []report.Grant{{Kind: "writable", Target: "/srv/x", By: "--writable"}}}
	r.Blocked = []report.Blocked{{Kind: "net", Target: "10.0.0.1:443", PID: 13, Cmd: "curl", Op: "connect", Count: 1}}
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	all := uitest.AllText(v.Banner())
	if !strings.Contains(all, "granted: writable /srv/x") || !strings.Contains(all, "hint: network: allow the hosts") {
		t.Fatalf("banner texts: %s", all)
	}
}

// TestBannerInlineScript: an inline script reads sh -c '<code>' in the
// banner, not the shell's path; a script file keeps its arguments.
func TestBannerInlineScript(t *testing.T) {
	r := cleanReport()
	r.Script = report.Script{Path: "/usr/bin/sh", Args: []string{"-c", "echo hi >   out.txt"}, Inline: true}
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	if all := uitest.AllText(v.Banner()); !strings.Contains(all, "sh -c 'echo hi > out.txt'") {
		t.Fatalf("banner texts: %s", all)
	}
	r = cleanReport()
	r.Script = report.Script{Path: "/w/gen.sh", Args: []string{"--fast"}}
	r.Evaluate()
	v, _ = newTestView(t, r, Options{})
	if all := uitest.AllText(v.Banner()); !strings.Contains(all, "/w/gen.sh --fast") {
		t.Fatalf("banner texts: %s", all)
	}
}
