//go:build unix

package report

import (
	"os"
	"sort"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"

	"github.com/diffgate/diffgate/internal/browsertest"
)

// What the page of a 5,000-change run may cost Chromium's main thread, in
// thread CPU time (which a loaded machine stretches far less than the time
// on the clock). Measured at 30-70 ms of style and layout and 270-450 ms
// in all (Chromium 156, load average 6-7). The same page with a <details>
// per fold and the filters as body:has() cost 80-230 ms and 520-780 ms
// there: Chromium 156 gives each <details> a style sheet in its shadow
// root, and the :has() made it check every inserted element (180-220 ms
// in all was measured with an older Chromium); before the page was split
// into blocks laid out only in view it was 420-470 ms and 700-770 ms, with
// 73,000 layout objects. The bounds leave a margin of two or more; the 1 s
// load target itself is a row of make bench (BenchmarkHTMLLoad), where it
// is timed on the clock.
const (
	htmlStyleLayoutMax = 200   // ms of style recalculation and layout
	htmlMainThreadMax  = 900   // ms of main-thread tasks
	htmlLayoutObjects  = 10000 // layout objects after the load
)

// pageLoad is what loading a page cost Chromium.
type pageLoad struct {
	// Load and DOM are the navigation's loadEventEnd and
	// domContentLoadedEventEnd (ms on the clock, Performance API).
	Load, DOM float64
	// Task, Style and Layout are main-thread CPU time (ms): all tasks,
	// style recalculation, layout (CDP Performance, thread ticks).
	Task, Style, Layout float64
	// LayoutObjects counts the page's layout objects; Rows its change rows.
	LayoutObjects, Rows int
}

// loadPage opens page in a fresh 1200x900 tab and measures its load.
func loadPage(t testing.TB, b *browsertest.Browser, page string) pageLoad {
	t.Helper()
	tab := b.NewTab(t, browsertest.TabOptions{Width: 1200, Height: 900})
	browsertest.Call(tab, performance.Enable, performance.EnableParams{TimeDomain: performance.EnableTimeDomainThreadTicks})
	tab.Navigate("file://" + page)
	var pl pageLoad
	nav := browsertest.Eval[struct {
		DOM, Load float64
		Rows      int
	}](tab, `new Promise(done => {
		const get = () => {
			const n = performance.getEntriesByType("navigation")[0];
			if (!n || n.loadEventEnd === 0) { setTimeout(get, 20); return; }
			done({DOM: n.domContentLoadedEventEnd, Load: n.loadEventEnd, Rows: document.querySelectorAll("tr.row").length});
		};
		get();
	})`)
	pl.DOM, pl.Load, pl.Rows = nav.DOM, nav.Load, nav.Rows
	for _, m := range browsertest.Call(tab, performance.GetMetrics, cdp.Empty{}).Metrics {
		switch m.Name {
		case "TaskDuration":
			pl.Task = m.Value * 1000
		case "RecalcStyleDuration":
			pl.Style = m.Value * 1000
		case "LayoutDuration":
			pl.Layout = m.Value * 1000
		case "LayoutObjects":
			pl.LayoutObjects = int(m.Value)
		}
	}
	if p := tab.Problems(); len(p) > 0 {
		t.Errorf("the page: %v", p)
	}
	return pl
}

// A 5,000-change report is at most htmlMax5000 bytes and Chromium lays out
// only what is in view: its main thread's CPU time for style and layout,
// and its layout objects, stay far below what laying out every row costs.
func TestBrowserBigReportLoads(t *testing.T) {
	page := writePage(t, flatRun(5000, 2))
	st, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("5,000-change HTML: %d bytes", st.Size())
	if st.Size() > htmlMax5000 {
		t.Errorf("the 5,000-change HTML is %d bytes, bound %d", st.Size(), htmlMax5000)
	}
	b := browsertest.Start(t)
	pl := loadPage(t, b, page)
	t.Logf("load in Chromium: DOMContentLoaded %.0f ms, load %.0f ms on the clock (target 1000 ms, make bench); main thread CPU %.0f ms, style %.0f ms, layout %.0f ms; %d layout objects, %d rows",
		pl.DOM, pl.Load, pl.Task, pl.Style, pl.Layout, pl.LayoutObjects, pl.Rows)
	if pl.Rows != 5000 {
		t.Errorf("%d rows in the browser, want 5000", pl.Rows)
	}
	if pl.Style+pl.Layout > htmlStyleLayoutMax {
		t.Errorf("style and layout took %.0f ms of main-thread CPU, bound %d ms", pl.Style+pl.Layout, htmlStyleLayoutMax)
	}
	if pl.Task > htmlMainThreadMax {
		t.Errorf("the main thread worked %.0f ms, bound %d ms", pl.Task, htmlMainThreadMax)
	}
	if pl.LayoutObjects > htmlLayoutObjects {
		t.Errorf("%d layout objects, bound %d: rows out of view are laid out", pl.LayoutObjects, htmlLayoutObjects)
	}
}

// BenchmarkHTMLLoad is make bench's row for the HTML report: the median
// load (loadEventEnd, ms on the clock) of the 5,000-change page in headless
// Chromium, a fresh tab each time; the target is 1 s. It runs only when
// DIFFGATE_BENCH_HTML is set (bench.sh sets it), so that go test -bench .
// stays quick.
func BenchmarkHTMLLoad(b *testing.B) {
	if os.Getenv("DIFFGATE_BENCH_HTML") == "" {
		b.Skip("set DIFFGATE_BENCH_HTML=1 (make bench does)")
	}
	page := writePage(b, flatRun(5000, 2))
	br := browsertest.Start(b)
	loadPage(b, br, page) // warm the browser and the page cache
	var loads, cpu []float64
	b.ResetTimer()
	for b.Loop() {
		pl := loadPage(b, br, page)
		loads, cpu = append(loads, pl.Load), append(cpu, pl.Task)
	}
	b.StopTimer()
	b.ReportMetric(median(loads), "load-ms")
	b.ReportMetric(median(cpu), "main-cpu-ms")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// The kind badges never wrap mid-word, even in a narrow window.
func TestBrowserBadgesDoNotWrap(t *testing.T) {
	b := browsertest.Start(t)
	tab := b.NewTab(t, browsertest.TabOptions{Width: 560, Height: 900})
	tab.Navigate("file://" + writePage(t, fixtureReport()))
	hs := browsertest.Eval[[]float64](tab, `Array.from(document.querySelectorAll(".kind-badge, .badge.risk")).map(b => b.getBoundingClientRect().height)`)
	if len(hs) < 9 {
		t.Fatalf("%d badges", len(hs))
	}
	lo := hs[0]
	for _, h := range hs {
		lo = min(lo, h)
	}
	for i, h := range hs {
		if h > lo*1.5 {
			t.Errorf("badge %d is %.0f px high, the lowest %.0f: it wraps", i, h, lo)
		}
	}
}
