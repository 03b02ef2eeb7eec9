package review

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/core/report"
)

// TestBannerContainment: the banner says beside the verdict whether the
// script was contained, "NOT CONTAINED" in the error color at the
// verdict's size, lists the blocked actions under their reason, and says
// when blocked actions could not be observed.
func TestBannerContainment(t *testing.T) {
	r := cleanReport()
	r.Script.Path = "/w/gen.sh"
	r.Containment = &report.Containment{Mode: "auto", Contained: true, LandlockABI: 7, Observed: true,
		Layers: []report.Layer{{Name: "filesystem", Requested: true, Enforced: true, How: "landlock v7"}}}
	r.Blocked = []report.Blocked{
		{Kind: "write", Target: "/home/u/.bashrc", PID: 12, Cmd: "sh gen.sh", Op: "openat", Count: 1},
		{Kind: "net", Target: "127.0.0.1:8080", PID: 13, Cmd: "curl http://127.0.0.1:8080/", Op: "connect", Count: 2},
	}
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	b := v.Banner()
	if txt, _ := b.containedText(); txt != "· contained" {
		t.Errorf("contained mark %q", txt)
	}
	uitest.OneText(t, b, "2 blocked actions")
	uitest.OneText(t, b, "write /home/u/.bashrc   sh gen.sh")
	uitest.OneText(t, b, "net 127.0.0.1:8080 (2 times)   curl http://127.…") // cut: the banner fits a 1024 px window

	r.Containment = &report.Containment{Mode: "auto", LandlockABI: 0, Why: "blocked actions not observable: seccomp user notification turned off for a test",
		Layers: []report.Layer{{Name: "filesystem", Requested: true, Why: "landlock: not supported by this kernel"}}}
	r.Blocked = nil
	r.Evaluate()
	v.SetReport(r)
	txt, c := b.containedText()
	if txt != "NOT CONTAINED" {
		t.Fatalf("contained mark %q", txt)
	}
	wantColor(t, "NOT CONTAINED", c, theme.ColorNameError)
	verdict := uitest.OneText(t, b, "FAIL")
	if mark := uitest.OneText(t, b, "NOT CONTAINED"); mark.TextSize != verdict.TextSize || !mark.TextStyle.Bold {
		t.Errorf("NOT CONTAINED at %v (bold %v), the verdict at %v", mark.TextSize, mark.TextStyle.Bold, verdict.TextSize)
	}
	uitest.OneText(t, b, "NOT CONTAINED: filesystem")
	uitest.OneText(t, b, "blocked actions not observable: seccomp user notification turned off for a test")
	// However long the reasons, the banner fits a 1024 px window.
	r.Containment.Why = "blocked actions not observable: " + strings.Repeat("a very long reason ", 40)
	v.SetReport(r)
	if w := b.MinSize().Width; w > 1000 {
		t.Errorf("the banner needs %v px", w)
	}
}
