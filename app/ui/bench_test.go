package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
)

// scaleFiles is how many files the scale script adds under node_modules/
// (in scalePackages folders): with the folders and the two edits, a run
// has 5,000 changes.
const (
	scalePackages = 40
	scaleFiles    = 5000 - 2 - 1 - scalePackages
)

// scaleWorkspace makes a workspace with two files the scale script edits.
func scaleWorkspace(tb testing.TB) string {
	tb.Helper()
	ws := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, body := range map[string]string{
		"config.json": "{\n  \"name\": \"demo\",\n  \"debug\": false\n}\n",
		"src/app.js":  "export function main() {\n  return 1;\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return ws
}

// scaleScript is an npm-install-like script: it adds scaleFiles small
// JavaScript files in scalePackages folders under node_modules/ and edits
// config.json and src/app.js: 5,000 changes, two of them real edits.
var scaleScript = fmt.Sprintf(`set -e
p=0
while [ $p -lt %[1]d ]; do mkdir -p node_modules/pkg$p; p=$((p+1)); done
i=0
while [ $i -lt %[2]d ]; do
	printf '/* pkg %%d file %%d */\n"use strict";\nmodule.exports = function f%%d(a, b) {\n  const x = a + b;\n  return x * %%d;\n};\n' $((i %% %[1]d)) $i $i $i >node_modules/pkg$((i %% %[1]d))/file$i.js
	i=$((i+1))
done
sed -i 's/"debug": false/"debug": true/' config.json
echo '// edited' >>src/app.js
`, scalePackages, scaleFiles)

// BenchmarkReviewScale measures make bench's review rows with the app's own
// code paths, headless (fyne/test, the window at its default size, each
// step followed by a frame painted with the software painter): three
// gated runs through the Run tab, each of the npm-install-like script in a
// fresh workspace (5,000 changes) and each opened in the review as a run
// is; then opening the last run's JSON report (open-s) and reopening the
// run from the history (reopen-s), re-evaluating after an allowlist edit
// (reeval-s; medians of 3 and 6), reviewing 60 changes one by one, and the
// app's memory then (heap in use and RSS after a GC). It does its work
// once whatever b.N; make bench reads the metrics it reports. Unit tests
// assert none of this: speed and memory are bench's.
func BenchmarkReviewScale(b *testing.B) {
	u, l, w := newTestUI(b, Options{})
	frame := func() { w.Canvas().Capture() }
	var last *report.Report
	for run := 0; run < 3; run++ {
		u.run.setInputs(scaleWorkspace(b), writeScript(b, b.TempDir(), scaleScript), []string{})
		last = runInputs(b, u, l)
		if n := len(last.Changes); n != 5000 {
			b.Fatalf("run %d: %d changes, want 5000", run+1, n)
		}
		frame()
	}
	id := u.reviewID
	path := filepath.Join(b.TempDir(), "report.json")
	if err := last.WriteFile(path); err != nil {
		b.Fatal(err)
	}
	timed := func(n int, f func()) float64 {
		var ts []float64
		for range n {
			start := time.Now()
			f()
			frame()
			ts = append(ts, time.Since(start).Seconds())
		}
		slices.Sort(ts)
		return ts[len(ts)/2]
	}
	open := timed(3, func() { openReport(b, u, l, path) })
	reopened := timed(3, func() { reopen(b, u, l, id) })
	v := u.Review()
	allow := true
	reeval := timed(6, func() {
		if allow {
			v.Allow("node_modules/")
		} else {
			v.Editor().SetEntries(nil)
		}
		allow = !allow
	})
	if c := v.Report().Count(); c.Violations != 5000 {
		b.Fatalf("after allowing node_modules/ and taking it back: %d violations, want 5000", c.Violations)
	}
	// Review: open node_modules/, walk 60 rows, mark a folder viewed.
	v.TypedRune('n')
	v.TypedKey(&fyne.KeyEvent{Name: fyne.KeyRight})
	for range 60 {
		v.TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
		frame()
	}
	v.TypedKey(&fyne.KeyEvent{Name: fyne.KeyHome})
	v.TypedRune('v')
	frame()
	if s := reviewedText(v); !strings.HasPrefix(s, count.Digits(5000-2)+" of ") {
		b.Fatalf("node_modules/ marked viewed: %q, want %d reviewed", s, 5000-2)
	}

	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(open, "open-s")
	b.ReportMetric(reopened, "reopen-s")
	b.ReportMetric(reeval, "reeval-s")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
	b.ReportMetric(rssMiB(b), "rss-MiB")
}

// rssMiB is the process's resident set size (VmRSS), in MiB.
func rssMiB(tb testing.TB) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb / 1024
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0
}
