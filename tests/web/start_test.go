package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"image"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	bt "github.com/diffgate/diffgate/internal/browsertest"
)

// The web build's budget (issue #13). The wasm's gzip size meets the
// issue's target (9 MB). Its raw size does not meet 28 MB: what is left is
// Fyne and what Fyne links (docs/review.md, "In the browser"), so the budget is the
// size reached, and a change that makes the wasm larger has to say so here.
const (
	wasmBudget     = 35_000_000 // bytes; the target: 28_000_000
	wasmGzipBudget = 9_000_000  // bytes, gzip -9 as make web writes it
	pageBudget     = 16 << 10   // index.html: the page shown before the wasm
)

const (
	// readyTarget is the start's target, in make bench (tests/bench): from
	// the navigation to the app's ready event in headless Chromium.
	readyTarget = 5 * time.Second
	// readyLimit fails the test: far above the target, so that a loaded
	// machine does not fail it, but a start that hangs or regresses badly does.
	readyLimit = 12 * readyTarget
)

// loadTimes is window.diffgateLoad: what the page's loader saw, each step's
// time in ms since the navigation started.
type loadTimes struct {
	URL       string   `json:"url"`
	Total     int      `json:"total"`
	Loaded    int      `json:"loaded"`
	Streaming bool     `json:"streaming"`
	Counted   bool     `json:"counted"` // the bytes were counted (a wasm this browser had not started)
	Encoding  string   `json:"encoding"`
	States    []string `json:"states"`
	Error     string   `json:"error"`
	Download  float64  `json:"download"` // the fetch starts
	Compile   float64  `json:"compile"`  // the last byte is in
	Start     float64  `json:"start"`    // compiled: go.run
	Main      float64  `json:"main"`     // Go's main (runtime and package init done)
	Started   float64  `json:"started"`  // Fyne's OnStarted: the window is up
	Ready     float64  `json:"ready"`    // the diffgate-ready event: drawn
}

func (l loadTimes) String() string {
	if !l.Counted { // no count, so no end of the download: it and the compile as one
		return fmt.Sprintf("ready %.0f ms: page %.0f ms, download (not counted) and compile %.0f ms, "+
			"Go runtime and init %.0f ms, Fyne start %.0f ms, first frame %.0f ms",
			l.Ready, l.Download, l.Start-l.Download, l.Main-l.Start, l.Started-l.Main, l.Ready-l.Started)
	}
	return fmt.Sprintf("ready %.0f ms: page %.0f ms, download %.0f ms (%.1f MB %s), compile after the last byte %.0f ms, "+
		"Go runtime and init %.0f ms, Fyne start %.0f ms, first frame %.0f ms",
		l.Ready, l.Download, l.Compile-l.Download, float64(l.Loaded)/1e6, l.Encoding, l.Start-l.Compile,
		l.Main-l.Start, l.Started-l.Main, l.Ready-l.Started)
}

func (p *page) loadTimes() loadTimes {
	p.t.Helper()
	return bt.Eval[loadTimes](p.Tab, `window.diffgateLoad`)
}

// TestBuildSizesAndServing checks build/web as make web wrote it and as the
// server sends it: the sizes against the budget, the wasm as
// application/wasm, gzip copies that are the files, the page's total.
func TestBuildSizesAndServing(t *testing.T) {
	dir := webDir(t)
	srv := serve(t, dir)
	size := func(name string) int64 {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	wasm, wasmGz, page := size("diffgate.wasm"), size("diffgate.wasm.gz"), size("index.html")
	t.Logf("diffgate.wasm %d bytes (budget %d), gzip %d bytes (budget %d); index.html %d bytes, gzip %d",
		wasm, wasmBudget, wasmGz, wasmGzipBudget, page, size("index.html.gz"))
	if wasm > wasmBudget {
		t.Errorf("diffgate.wasm is %d bytes, over the budget of %d", wasm, wasmBudget)
	}
	if wasmGz > wasmGzipBudget {
		t.Errorf("diffgate.wasm.gz is %d bytes, over the budget of %d", wasmGz, wasmGzipBudget)
	}
	if page > pageBudget {
		t.Errorf("index.html is %d bytes, over %d: the page before the wasm should be a few KB", page, pageBudget)
	}
	html, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`data-wasm-bytes="%d"`, wasm); !bytes.Contains(html, []byte(want)) {
		t.Errorf("index.html does not say %s (make web writes the wasm's size into it)", want)
	}

	for _, c := range []struct{ path, typ, file string }{
		{"/diffgate.wasm", "application/wasm", "diffgate.wasm"},
		{"/", "text/html; charset=utf-8", "index.html"},
		{"/wasm_exec.js", "text/javascript; charset=utf-8", "wasm_exec.js"},
		{"/demo-report.json", "application/json", "demo-report.json"},
	} {
		want, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range []string{"gzip, deflate, br, zstd", ""} {
			req, _ := http.NewRequest("GET", srv.URL+c.path, nil)
			if enc != "" {
				req.Header.Set("Accept-Encoding", enc)
			}
			resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.typ || resp.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("%s (Accept-Encoding %q): %s %v", c.path, enc, resp.Status, resp.Header)
				continue
			}
			if got := resp.Header.Get("Content-Encoding"); (enc != "") != (got == "gzip") {
				t.Errorf("%s (Accept-Encoding %q): Content-Encoding %q", c.path, enc, got)
				continue
			}
			if enc != "" {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatalf("%s: %v", c.path, err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatalf("%s: %v", c.path, err)
				}
			}
			if !bytes.Equal(body, want) {
				t.Errorf("%s (Accept-Encoding %q): the body (%d bytes) is not %s (%d bytes)", c.path, enc, len(body), c.file, len(want))
			}
		}
	}
	for path, code := range map[string]int{"/fixtures/pass.json": 200, "/fixtures/missing.json": 404, "/missing.wasm": 404} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("%s: %s, want %d", path, resp.Status, code)
		}
	}
}

// held holds the wasm's response after its first bytes until release is
// closed (or the request is gone: a test that failed early must not leave
// the server waiting): the test sees the page while it downloads, without
// timing luck.
type held struct {
	http.ResponseWriter
	after   int
	release <-chan struct{}
	gone    <-chan struct{} // the request's context
	sent    int
}

func (h *held) Write(p []byte) (int, error) {
	n := 0
	if h.sent < h.after && h.sent+len(p) >= h.after {
		k := h.after - h.sent
		m, err := h.ResponseWriter.Write(p[:k])
		n, h.sent = m, h.sent+m
		if err != nil {
			return n, err
		}
		h.ResponseWriter.(http.Flusher).Flush()
		select {
		case <-h.release:
		case <-h.gone:
			return n, http.ErrAbortHandler
		}
		p = p[k:]
	}
	m, err := h.ResponseWriter.Write(p)
	h.sent += m
	return n + m, err
}

func (h *held) Flush() { h.ResponseWriter.(http.Flusher).Flush() }

// TestLoadingThenReadyAt1024 loads the app at 1024x700 as a person does:
// the progress shows at once (the wasm is held after its first MiB), with
// the bytes downloaded of the total; once the wasm is through, the page
// goes through compiling and starting to the app, which shows a report
// with every header button inside the window. The page never scrolls
// sideways.
func TestLoadingThenReadyAt1024(t *testing.T) {
	dir := webDir(t)
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	srv := serveWith(t, dir, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/diffgate.wasm" {
				w = &held{ResponseWriter: w, after: 1 << 20, release: release, gone: r.Context().Done()}
			}
			h.ServeHTTP(w, r)
		})
	})
	t.Cleanup(open) // before the server's Close (clean-ups run last first)
	sess := newSession(t)
	p := sess.newPage(bt.TabOptions{Width: 1024, Height: 700})
	// The compiled module and go.run wait for the test too, so that it sees
	// the compiling and starting steps.
	bt.Call(p.Tab, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: holdSteps})
	p.Navigate(srv.URL + "/?report=fixtures/fail.json")

	// The first MiB is in, the rest held: the page shows the download.
	shown := bt.Run(p.Tab, "the download progress", pollJS[struct {
		Step, Detail, Bar string
		Loaded            int
		Scroll            int
	}](`(() => {
		const l = window.diffgateLoad;
		if (!l || l.loaded < (1 << 20) || l.states.at(-1) !== 'download') return null;
		const detail = document.getElementById('diffgate-detail').textContent;
		const width = document.querySelector('#diffgate-loading .bar').style.width;
		if (!width || width === '0%') return null; // not painted since the first bytes
		return {step: document.getElementById('diffgate-step').textContent, detail, loaded: l.loaded,
			bar: width,
			scroll: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)};
	})()`))
	total, err := os.Stat(filepath.Join(dir, "diffgate.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if shown.Step != "Downloading the app…" {
		t.Errorf("the step while downloading: %q", shown.Step)
	}
	if want := regexp.MustCompile(`^\d+\.\d of ` + regexp.QuoteMeta(fmt.Sprintf("%.1f", float64(total.Size())/1e6)) + ` MB$`); !want.MatchString(shown.Detail) {
		t.Errorf("the progress while downloading: %q, want %s", shown.Detail, want)
	}
	pct, _ := strconv.Atoi(strings.TrimSuffix(shown.Bar, "%"))
	if pct <= 0 || pct >= 100 {
		t.Errorf("the progress bar while downloading: width %q", shown.Bar)
	}
	if shown.Scroll > 1024 {
		t.Errorf("the loading page is %d px wide at 1024", shown.Scroll)
	}
	p.NextFrame()
	p.look("loading-1024", func(img image.Image, c *problems) {
		blue := bt.Count(img, bt.Hex("#0969da"), 16, bt.Bounds(img))
		c.that(blue > 50, "no progress bar (%d blue pixels)", blue)
		n := bt.Colors(img)
		c.that(n > 8, "the loading page looks blank (%d colours)", n)
	})

	// The wasm through: compiling (held), then starting (held).
	open()
	for _, st := range []struct{ state, step, shot, release string }{
		{"compile", "Compiling…", "compiling-1024", "__diffgateCompiled"},
		{"start", "Starting…", "starting-1024", "__diffgateRun"},
	} {
		step := bt.Run(p.Tab, "the "+st.state+" step", pollJS[string](fmt.Sprintf(`window.diffgateLoad.states.at(-1) === %q && window.%s &&
			document.getElementById('diffgate-step').textContent`, st.state, st.release)))
		equal(t, "the page during "+st.state, step, st.step)
		p.NextFrame()
		p.look(st.shot, func(img image.Image, c *problems) {
			// The bar is full: blue (pulsing, so at any opacity over white)
			// up to its right end, not the grey track.
			blue := 0
			for y := 330; y < 390; y++ {
				for x := 1024/2 + 416/2 - 7; x < 1024/2+416/2-1; x++ {
					r, _, b, _ := img.At(x, y).RGBA()
					if int(b>>8)-int(r>>8) > 40 {
						blue++
					}
				}
			}
			c.that(blue > 20, "the progress bar is not full (%d blue pixels at its right end)", blue)
		})
		bt.Eval[bool](p.Tab, "window."+st.release+"(), true")
	}
	p.waitReady()
	l := p.loadTimes()
	t.Logf("held after 1 MiB: %s", l)
	if !slices.Equal(l.States, []string{"download", "compile", "start", "ready"}) {
		t.Errorf("the loader's steps: %v, want download, compile, start, ready", l.States)
	}
	if l.Loaded != l.Total || int64(l.Total) != total.Size() || !l.Streaming {
		t.Errorf("the loader: %d of %d bytes (the wasm has %d), streaming %v", l.Loaded, l.Total, total.Size(), l.Streaming)
	}
	if bt.Eval[bool](p.Tab, `document.getElementById('diffgate-loading') !== null`) {
		t.Error("the loading page is still there once the app is ready")
	}
	p.until("the linked report", func(s status) bool { return s.Source == "fixtures/fail.json" })
	p.look("ready-1024", func(img image.Image, c *problems) {
		notBlank(img, c)
		banner := p.rect("banner")
		c.that(bt.Count(img, light.fail, 10, banner.area()) > 800, "no red FAIL banner")
	})
	if w := bt.Eval[int](p.Tab, `Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)`); w > 1024 {
		t.Errorf("the page is %d px wide at 1024", w)
	}
	for _, name := range []string{"open", "compare", "demo", "download-allowlist", "download-report", "allowlist-editor", "banner"} {
		r := p.rect(name)
		if r.X < 0 || r.X+r.Width > 1024 || r.Width <= 0 {
			t.Errorf("%s is not inside the 1024 px window: x %.0f, width %.0f", name, r.X, r.Width)
		}
	}
}

// holdSteps makes the page's compiled module and go.run wait until the test
// calls window.__diffgateCompiled() and window.__diffgateRun().
const holdSteps = `(() => {
	const instantiate = WebAssembly.instantiateStreaming;
	WebAssembly.instantiateStreaming = (...args) => instantiate(...args).then((r) =>
		new Promise((resolve) => { window.__diffgateCompiled = () => resolve(r); }));
	let held;
	Object.defineProperty(globalThis, 'Go', {configurable: true, get: () => held, set(cls) {
		const run = cls.prototype.run;
		cls.prototype.run = function (inst) {
			return new Promise((resolve) => { window.__diffgateRun = () => resolve(run.call(this, inst)); });
		};
		held = cls;
	}});
})()`

// TestStartTime loads the app in a tab with an empty cache and logs where
// the time to ready goes. The target (readyTarget) is a row of make bench;
// here only a start over readyLimit fails. With DIFFGATE_WEB_BENCH=FILE it
// loads the app DIFFGATE_WEB_RUNS times (default 5) and writes the times
// to FILE for tests/bench/report.py.
func TestStartTime(t *testing.T) {
	sess := newSession(t)
	runs := 1
	out := os.Getenv("DIFFGATE_WEB_BENCH")
	if out != "" {
		runs = 5
		if n, err := strconv.Atoi(os.Getenv("DIFFGATE_WEB_RUNS")); err == nil && n > 0 {
			runs = n
		}
	}
	var all []loadTimes
	for i := 0; i < runs; i++ {
		p := sess.newPage(bt.TabOptions{Width: width, Height: height})
		p.Navigate(sess.url + "/")
		p.waitReady()
		l := p.loadTimes()
		t.Logf("run %d: %s", i+1, l)
		if !slices.Equal(l.States, []string{"download", "compile", "start", "ready"}) || !l.Streaming || l.Encoding != "gzip" {
			t.Errorf("the loader: steps %v, streaming %v, encoding %q; want a streamed gzip download", l.States, l.Streaming, l.Encoding)
		}
		if d := time.Duration(l.Ready * float64(time.Millisecond)); d > readyLimit {
			t.Errorf("ready after %s, more than %s (the target is %s)", d.Round(time.Millisecond), readyLimit, readyTarget)
		}
		all = append(all, l)
		if i == 0 {
			p.look("start", notBlank)
			// A reload: the same wasm, not counted (a copy of the response
			// would cost Chrome's cache of its compiled code).
			p.Navigate(sess.url + "/")
			p.waitReady()
			r := p.loadTimes()
			t.Logf("reload: %s", r)
			if !slices.Equal(r.States, []string{"download", "start", "ready"}) || r.Counted || !l.Counted {
				t.Errorf("the reload: steps %v, counted %v (the first load: %v); want download, start, ready, not counted", r.States, r.Counted, l.Counted)
			}
		}
	}
	if out != "" {
		writeBench(t, out, all)
	}
}

// writeBench writes the runs as tests/bench/report.py reads hyperfine's
// results (seconds): one entry for ready, one per phase.
func writeBench(t *testing.T, path string, runs []loadTimes) {
	t.Helper()
	phases := []struct {
		name string
		of   func(loadTimes) float64
	}{
		{"ready", func(l loadTimes) float64 { return l.Ready }},
		{"page", func(l loadTimes) float64 { return l.Download }},
		{"download", func(l loadTimes) float64 { return l.Compile - l.Download }},
		{"compile", func(l loadTimes) float64 { return l.Start - l.Compile }},
		{"runtime", func(l loadTimes) float64 { return l.Main - l.Start }},
		{"fyne-start", func(l loadTimes) float64 { return l.Started - l.Main }},
		{"first-frame", func(l loadTimes) float64 { return l.Ready - l.Started }},
	}
	type result struct {
		Command string    `json:"command"`
		Times   []float64 `json:"times"`
		Mean    float64   `json:"mean"`
		Stddev  float64   `json:"stddev"`
		Median  float64   `json:"median"`
		Min     float64   `json:"min"`
		Max     float64   `json:"max"`
	}
	var results []result
	for _, ph := range phases {
		r := result{Command: ph.name}
		for _, l := range runs {
			r.Times = append(r.Times, ph.of(l)/1000)
		}
		ts := slices.Clone(r.Times)
		sort.Float64s(ts)
		r.Min, r.Max, r.Median = ts[0], ts[len(ts)-1], ts[len(ts)/2]
		for _, x := range ts {
			r.Mean += x / float64(len(ts))
		}
		for _, x := range ts {
			r.Stddev += (x - r.Mean) * (x - r.Mean)
		}
		if len(ts) > 1 {
			r.Stddev = math.Sqrt(r.Stddev / float64(len(ts)-1))
		}
		results = append(results, r)
	}
	data, err := json.MarshalIndent(map[string]any{"results": results}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadingErrors: the page says in one line why the app cannot start: a
// missing wasm, a broken one; and a server that sends the wasm with another
// type still gets the app (compiled after the download).
func TestLoadingErrors(t *testing.T) {
	dir := webDir(t)
	sess := newSession(t)
	site := func(wasm []byte) string {
		d := t.TempDir()
		for _, f := range []string{"index.html", "wasm_exec.js", "icon.png"} {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if wasm != nil {
			if err := os.WriteFile(filepath.Join(d, "diffgate.wasm"), wasm, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	failed := func(url, want string) {
		t.Helper()
		p := sess.newPage(bt.TabOptions{Width: 1024, Height: 700})
		p.Navigate(url)
		msg := bt.Run(p.Tab, "the loader's error", pollJS[string](`window.diffgateLoad && window.diffgateLoad.error || null`))
		if !strings.Contains(msg, want) {
			t.Errorf("%s: the page says %q, want %q", url, msg, want)
		}
		if shown := bt.Eval[string](p.Tab, `document.getElementById('diffgate-step').textContent`); shown != msg {
			t.Errorf("%s: the page shows %q, not the error %q", url, shown, msg)
		}
	}
	missing := serveWith(t, site(nil), nil).URL
	failed(missing+"/", "Could not download diffgate.wasm: HTTP 404 Not Found")
	broken := serveWith(t, site([]byte("\x00asm\x01\x00\x00\x00\x01\xff")), nil).URL
	failed(broken+"/", "Could not compile diffgate.wasm:")

	// No WebGL (a browser with it off): the app cannot draw, the page says so.
	p := sess.newPage(bt.TabOptions{Width: 1024, Height: 700})
	bt.Call(p.Tab, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
		const get = HTMLCanvasElement.prototype.getContext;
		HTMLCanvasElement.prototype.getContext = function (kind, ...rest) {
			return /webgl/i.test(kind) ? null : get.call(this, kind, ...rest);
		};
	})()`})
	p.Navigate(sess.url + "/")
	msg := bt.Run(p.Tab, "the loader's error", pollJS[string](`window.diffgateLoad && window.diffgateLoad.error || null`))
	equal(t, "without WebGL", msg, "This browser cannot run the app: WebGL is off or not supported.")
	p.expectProblems() // Fyne's own complaints about the missing context

	// The app ends after it was up (as on a panic): the page says so over it.
	p = sess.newPage(bt.TabOptions{Width: 1024, Height: 700})
	bt.Call(p.Tab, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
		let held;
		Object.defineProperty(globalThis, 'Go', {configurable: true, get: () => held, set(cls) {
			const run = cls.prototype.run;
			cls.prototype.run = function (inst) { window.__diffgateGo = this; return run.call(this, inst); };
			held = cls;
		}});
	})()`})
	p.Navigate(sess.url + "/")
	p.waitReady()
	// What wasm_exec.js does when the Go program exits with status 2.
	bt.Eval[bool](p.Tab, `window.__diffgateGo.exit(2), window.__diffgateGo._resolveExitPromise(), true`)
	msg = bt.Run(p.Tab, "the loader's error", pollJS[string](`window.diffgateLoad.error || null`))
	equal(t, "after the app stopped", msg, "The app stopped (exit code 2); the browser's console says why. Reload the page to start it again.")
	equal(t, "the error shown over the app", bt.Eval[string](p.Tab, `(() => {
		const el = document.getElementById('diffgate-loading');
		return el && el.isConnected && getComputedStyle(el).display !== 'none' ? el.innerText.trim().replace(/\s+/g, ' ') : '';
	})()`), "diffgate review "+msg)
	p.expectProblems() // the exit code's warning

	// application/octet-stream: no streaming compile, but the app starts.
	untyped := serveWith(t, dir, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(&retyped{ResponseWriter: w}, r)
		})
	}).URL
	p = sess.newPage(bt.TabOptions{Width: width, Height: height})
	p.Navigate(untyped + "/")
	p.waitReady()
	if l := p.loadTimes(); l.Streaming || l.Error != "" {
		t.Errorf("application/octet-stream: streaming %v, error %q", l.Streaming, l.Error)
	}
	if !slices.ContainsFunc(p.Console(), func(s string) bool { return strings.Contains(s, "not served as application/wasm") }) {
		t.Errorf("no warning in the console about the wasm's type:\n%s", strings.Join(p.Console(), "\n"))
	}
}

// retyped sends a .wasm as application/octet-stream, as a misconfigured
// server does.
type retyped struct{ http.ResponseWriter }

func (r *retyped) WriteHeader(code int) {
	if r.Header().Get("Content-Type") == "application/wasm" {
		r.Header().Set("Content-Type", "application/octet-stream")
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *retyped) Write(p []byte) (int, error) {
	if r.Header().Get("Content-Type") == "application/wasm" {
		r.Header().Set("Content-Type", "application/octet-stream")
	}
	return r.ResponseWriter.Write(p)
}

// pollJS waits (frame by frame, at most waitTimeout) until expr is truthy
// and returns its value.
func pollJS[T any](expr string) chromedp.Action[T] {
	return chromedp.Poll[T](expr, chromedp.WithPollingTimeout(waitTimeout))
}
