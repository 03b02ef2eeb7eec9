package web

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTestHooksOnlyWithTag: window.diffgateRect, the browser tests' hook,
// is in the wasm built with the webtest tag (make web-test) and in no file
// of the default build (make web, what users get).
func TestTestHooksOnlyWithTag(t *testing.T) {
	withHook := func(tags ...string) []string {
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH, ctx.BuildTags = "js", "wasm", tags
		pkg, err := ctx.ImportDir(".", 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range pkg.GoFiles {
			b, err := os.ReadFile(filepath.Join(pkg.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"diffgateRect"`) {
				out = append(out, f)
			}
		}
		return out
	}
	if got := withHook(); len(got) != 0 {
		t.Errorf("the default build defines window.diffgateRect in %v", got)
	}
	if got := withHook("webtest"); !slices.Equal(got, []string{"hooks_webtest_js.go"}) {
		t.Errorf("the webtest build defines window.diffgateRect in %v, want hooks_webtest_js.go", got)
	}
}
