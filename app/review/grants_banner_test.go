package review

import (
	"strings"
	"testing"

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
	all := allText(v.Banner())
	if !strings.Contains(all, "granted: writable /srv/x") || !strings.Contains(all, "hint: network: allow the hosts") {
		t.Fatalf("banner texts: %s", all)
	}
}
