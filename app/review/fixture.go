package review

import (
	_ "embed"

	"github.com/diffgate/diffgate/core/report"
)

//go:embed testdata/demo-report.json
var demoReport []byte

// DemoReport returns a fresh copy of the bundled sample report: the demo
// script's run (an allowed log write, an edited config.json, a chmod, a
// deleted lock file, a symlink escaping the workspace, a changed binary and a
// leftover process). The web build opens it; tests use it.
func DemoReport() *report.Report {
	r, err := report.Parse(demoReport)
	if err != nil {
		panic("review: bundled demo report: " + err.Error())
	}
	return r
}
