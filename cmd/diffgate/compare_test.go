package main

import (
	"strings"
	"testing"
)

// diffgate diff and the web app's Compare share report.Compare: an entry
// the after manifest could not read fails both (app/web's
// TestCompareUnreadable reads the same manifests).
func TestDiffUnreadableLikeTheWeb(t *testing.T) {
	const dir = "../../tests/web/fixtures/"
	code, out, errs := cliRun(t, "diff", "--allow", "a.txt", dir+"unreadable-before.json", dir+"unreadable-after.json")
	if code != 1 || !strings.HasPrefix(out, "UNREADABLE a.txt") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and UNREADABLE a.txt", code, out, errs)
	}
}
