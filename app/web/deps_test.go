package web

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestWasmDependencies checks what the browser build (main_js.go) links:
// the shared review view, and no SQLite, native dialogs, process running or
// history.
func TestWasmDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command(gobin, "list", "-deps", "github.com/diffgate/diffgate")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	for _, want := range []string{
		"github.com/diffgate/diffgate/app/web",
		"github.com/diffgate/diffgate/app/review",
		"github.com/diffgate/diffgate/core/report",
		"github.com/diffgate/diffgate/core/policy",
		"github.com/diffgate/diffgate/core/diff",
		"github.com/diffgate/diffgate/core/snapshot",
		"syscall/js",
	} {
		if !deps[want] {
			t.Errorf("the wasm build does not link %s", want)
		}
	}
	for p := range deps {
		for _, bad := range []string{
			"os/exec",
			"modernc.org/sqlite",
			"github.com/sqweek/dialog",
			"github.com/diffgate/diffgate/app/ui",
			"github.com/diffgate/diffgate/core/history",
			"github.com/diffgate/diffgate/core/gate",
			"github.com/diffgate/diffgate/core/proc",
		} {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				t.Errorf("the wasm build links %s", p)
			}
		}
	}
}
