// Package web holds the browser tests of the diffgate web review app (make
// web-test → build/web-webtest): the system Chromium, driven from Go
// (chromedp, through internal/browsertest), loads the real wasm from a
// local server and is operated like a reviewer would: clicks on the Fyne
// canvas at the controls' places (window.diffgateRect, in the webtest
// build only), the browser's file chooser, the keyboard, drag and drop, downloads. window.diffgate tells what the app
// shows; screenshot pixels check the colours.
//
// It builds nothing itself: `make web-test` builds the site with the
// webtest tag in build/web-webtest and passes it in DIFFGATE_WEB_DIR. Screenshots go to build/web-test/ (look at them
// after a UI change).
package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/diffgate/diffgate/app/web"
	bt "github.com/diffgate/diffgate/internal/browsertest"
	"github.com/diffgate/diffgate/internal/webserve"
)

const (
	width, height = 1400, 900
	// startTimeout bounds the wasm's start (about 10 s on a quiet machine).
	startTimeout = 3 * time.Minute
	// waitTimeout bounds one wait for the app to show something.
	waitTimeout = 2 * time.Minute
)

// The diffgate theme's colours (app/style/theme.go).
var (
	light = struct{ fail, pass, warn bt.RGB }{bt.Hex("#cf222e"), bt.Hex("#1a7f37"), bt.Hex("#9a6700")}
	dark  = struct{ fail, pass bt.RGB }{bt.Hex("#f85149"), bt.Hex("#3fb950")}
)

// status is window.diffgate.
type status = web.Status

// rect is what window.diffgateRect(name) resolves to.
type rect struct {
	X        float64 `json:"x"`
	Y        float64 `json:"y"`
	Width    float64 `json:"width"`
	Height   float64 `json:"height"`
	Kind     string  `json:"kind"`
	Text     string  `json:"text"`
	Disabled bool    `json:"disabled"`
}

func (r rect) area() bt.Rect { return bt.Rect{X: r.X, Y: r.Y, Width: r.Width, Height: r.Height} }

// webDir is build/web; the tests are skipped without it.
func webDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("DIFFGATE_WEB_DIR")
	if dir == "" {
		t.Skip("DIFFGATE_WEB_DIR is not set (make web-test builds build/web-webtest and sets it)")
	}
	if _, err := os.Stat(filepath.Join(dir, "diffgate.wasm")); err != nil {
		t.Fatalf("DIFFGATE_WEB_DIR: %v (run make web-test)", err)
	}
	return dir
}

// serve serves build/web at / and the fixtures at /fixtures/ on 127.0.0.1
// (a free port), through internal/webserve as make serve does.
func serve(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	return serveWith(t, dir, nil)
}

// serveWith is serve with wrap around the site's handler (nil: none).
func serveWith(t *testing.T, dir string, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	site, err := webserve.Handler(dir)
	if err != nil {
		t.Fatal(err)
	}
	fx, err := webserve.Handler(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		site = wrap(site)
	}
	mux := http.NewServeMux()
	mux.Handle("/", site)
	mux.Handle("/fixtures/", http.StripPrefix("/fixtures/", fx))
	srv := httptest.NewServer(mux) // 127.0.0.1, a free port
	t.Cleanup(srv.Close)
	return srv
}

var fixtures = func() string {
	abs, err := filepath.Abs("fixtures")
	if err != nil {
		panic(err)
	}
	return abs
}()

// session is one browser for one test.
type session struct {
	t       *testing.T
	browser *bt.Browser
	url     string
	shots   string
}

func newSession(t *testing.T) *session {
	dir := webDir(t)
	srv := serve(t, dir)
	shots := filepath.Join(filepath.Dir(dir), "web-test")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return &session{t: t, browser: bt.Start(t), url: srv.URL, shots: shots}
}

// page is the app in one tab.
type page struct {
	*bt.Tab
	t     *testing.T
	shots string
	size  bt.TabOptions
	// problemsExpected: errors in the page's console are what the test is about.
	problemsExpected bool
}

var badConsole = regexp.MustCompile(`(?i)panic|fatal error|Fyne call thread`)

// open loads the app (with an optional query) in a new tab and waits until
// it is up (the diffgate-ready event).
func (s *session) open(query string, darkScheme bool) *page {
	s.t.Helper()
	p := s.newPage(bt.TabOptions{Width: width, Height: height, Dark: darkScheme})
	p.Navigate(s.url + "/" + query)
	p.waitReady()
	return p
}

// newPage opens a tab, in a browser context of its own (an empty cache), and
// fails the test at its end if the page logged problems.
func (s *session) newPage(o bt.TabOptions) *page {
	t := s.t
	t.Helper()
	tab := s.browser.NewTab(t, o)
	p := &page{Tab: tab, t: t, shots: s.shots, size: o}
	t.Cleanup(func() {
		if p.problemsExpected {
			return
		}
		problems := tab.Problems()
		for _, l := range tab.Console() {
			if badConsole.MatchString(l) {
				problems = append(problems, l)
			}
		}
		if len(problems) > 0 {
			t.Errorf("the page logged problems:\n%s", strings.Join(problems, "\n"))
		}
	})
	return p
}

// expectProblems tells the page's clean-up that the test provoked errors.
func (p *page) expectProblems() { p.problemsExpected = true }

// waitReady waits until the app is up (the diffgate-ready event).
func (p *page) waitReady() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx, startTimeout)
	defer cancel()
	ready, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.diffgateReady === true ||
		new Promise((r) => document.addEventListener('diffgate-ready', () => r(true), {once: true}))`,
		chromedp.EvalAwaitPromise))
	if err != nil || !ready {
		p.t.Fatalf("the app did not start within %s: %v\nthe loader: %s\nconsole:\n%s", startTimeout, err,
			bt.Eval[string](p.Tab, `JSON.stringify(window.diffgateLoad)`), strings.Join(p.Console(), "\n"))
	}
}

// status returns window.diffgate.
func (p *page) status() status {
	p.t.Helper()
	return bt.Eval[status](p.Tab, `window.diffgate`)
}

// waitStatus waits (by the app's diffgate-status events) until ok holds for
// the status, for at most d; it returns the last status and whether ok held.
func (p *page) waitStatus(d time.Duration, ok func(status) bool) (status, bool) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx, d)
	defer cancel()
	s := p.status()
	for !ok(s) {
		// The next status with another seq: now, or at a diffgate-status event.
		next, err := chromedp.Run(ctx, chromedp.Evaluate[status](fmt.Sprintf(`new Promise((resolve) => {
			const seen = (s) => s && s.seq !== %d;
			if (seen(window.diffgate)) return resolve(window.diffgate);
			const on = () => {
				if (!seen(window.diffgate)) return;
				document.removeEventListener('diffgate-status', on);
				resolve(window.diffgate);
			};
			document.addEventListener('diffgate-status', on);
		})`, s.Seq), chromedp.EvalAwaitPromise))
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				return s, false
			}
			p.t.Fatalf("reading the status: %v", err)
		}
		s = next
	}
	return s, true
}

// until waits until ok holds for the status and returns it.
func (p *page) until(what string, ok func(status) bool) status {
	p.t.Helper()
	s, done := p.waitStatus(waitTimeout, ok)
	if !done {
		p.t.Fatalf("waiting for %s: status %+v", what, s)
	}
	return s
}

// rect returns the on-page rectangle of a named control.
func (p *page) rect(name string) rect {
	p.t.Helper()
	r := p.maybeRect(name)
	if r == nil {
		p.t.Fatalf("%s is not on the page", name)
	}
	return *r
}

func (p *page) maybeRect(name string) *rect {
	p.t.Helper()
	return bt.Eval[*rect](p.Tab, fmt.Sprintf(`window.diffgateRect(%q)`, name))
}

// waitRect waits (frame by frame) until the control's rectangle has field
// key equal to want, and returns it.
func (p *page) waitRect(name, key string, want any, what string) rect {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx, waitTimeout)
	defer cancel()
	r, err := chromedp.Run(ctx, chromedp.PollFunction[*rect](`async (name, key, want) => {
		const r = await window.diffgateRect(name);
		return r && r[key] === want ? r : null;
	}`, chromedp.WithPollingArgs(name, key, want), chromedp.WithPollingTimeout(waitTimeout)))
	if err != nil || r == nil {
		p.t.Fatalf("waiting for %s: %v; %s is %+v", what, err, name, p.maybeRect(name))
	}
	return *r
}

// click clicks the middle of a named control with the mouse.
func (p *page) click(name string) rect {
	p.t.Helper()
	r := p.rect(name)
	p.Click(r.X+r.Width/2, r.Y+r.Height/2)
	return r
}

// focus clicks a control and waits until it has the focus: the app takes
// keys on goroutines of their own, so a key pressed before it handled the
// click could reach no widget.
func (p *page) focus(name string) {
	p.t.Helper()
	p.click(name)
	ctx, cancel := context.WithTimeout(p.Ctx, waitTimeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.PollFunction[*rect](`async (name) => {
		const [f, r] = await Promise.all([window.diffgateRect('focused'), window.diffgateRect(name)]);
		return f && r && f.kind === r.kind && f.x === r.x && f.y === r.y ? f : null;
	}`, chromedp.WithPollingArgs(name), chromedp.WithPollingTimeout(waitTimeout)))
	if err != nil {
		p.t.Fatalf("waiting for %s to have the focus: %v; focused: %+v", name, err, p.maybeRect("focused"))
	}
}

// pick clicks a control that opens the browser's file chooser and picks a
// fixture.
func (p *page) pick(name, fixture string) {
	p.t.Helper()
	p.PickFile(filepath.Join(fixtures, fixture), func() { p.click(name) })
}

// typeInto clicks a text field and types lines into it, key by key, each
// key once the field shows the one before (Fyne handles each key on a
// goroutine of its own). With appendLines, the lines go below the text the
// field has.
func (p *page) typeInto(name string, lines []string, appendLines bool) {
	p.t.Helper()
	p.focus(name)
	want := ""
	if appendLines {
		want = p.rect(name).Text + "\n"
		p.Press("Control+End")
		p.Press("Enter")
		p.waitRect(name, "text", want, name+" to get a new line at its end")
	}
	for i, line := range lines {
		if i > 0 {
			p.Press("Enter")
			want += "\n"
			p.waitRect(name, "text", want, fmt.Sprintf("%s to show %q", name, want))
		}
		for _, c := range line {
			p.Press(string(c))
			want += string(c)
			p.waitRect(name, "text", want, fmt.Sprintf("%s to show %q", name, want))
		}
	}
}

// download clicks a control that downloads a file and returns its name and
// text.
func (p *page) download(name string) (string, string) {
	p.t.Helper()
	file, data := p.Download(func() { p.click(name) })
	return file, string(data)
}

// problems collects the failed checks on one screenshot.
type problems []string

func (c *problems) that(ok bool, format string, args ...any) {
	if !ok {
		*c = append(*c, fmt.Sprintf(format, args...))
	}
}

// look takes screenshots until check finds nothing wrong (the canvas is
// redrawn on a later frame after a change), saving the last as name.png.
func (p *page) look(name string, check func(img image.Image, c *problems)) image.Image {
	p.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		data := p.Screenshot()
		if err := os.WriteFile(filepath.Join(p.shots, name+".png"), data, 0o644); err != nil {
			p.t.Fatal(err)
		}
		img := bt.DecodePNG(p.t, data)
		if b := img.Bounds(); b.Dx() != p.size.Width || b.Dy() != p.size.Height {
			p.t.Fatalf("the screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), p.size.Width, p.size.Height)
		}
		var c problems
		check(img, &c)
		if len(c) == 0 {
			return img
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("screenshot %s.png:\n%s", name, strings.Join(c, "\n"))
		}
		p.NextFrame()
	}
}

func notBlank(img image.Image, c *problems) {
	n := bt.Colors(img)
	c.that(n > 40, "the page looks blank (%d colours)", n)
}

func counts(s status) map[string]int {
	return map[string]int{"added": s.Added, "removed": s.Removed, "changed": s.Changed,
		"violations": s.Violations, "allowed": s.Allowed, "risky": s.Risky}
}

func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %#v, want %#v", what, got, want)
	}
}

func TestFailingReportPickedAllowedDownloaded(t *testing.T) {
	p := newSession(t).open("", false)
	s := p.status()
	equal(t, "verdict on the welcome page", s.Verdict, "")
	p.look("welcome", notBlank)

	p.pick("open", "fail.json")
	s = p.until("fail.json to open", func(s status) bool { return s.Source == "fail.json" })
	equal(t, "error", s.Error, "")
	equal(t, "verdict", s.Verdict, "fail")
	equal(t, "counts", counts(s), map[string]int{"added": 3, "removed": 1, "changed": 3, "violations": 5, "allowed": 2, "risky": 1})
	equal(t, "reasons", s.Reasons, []string{"5 unexpected changes", "1 risky change", "1 leftover process"})
	equal(t, "the first violation is selected", s.Selected, "cache/passwd")
	equal(t, "title", bt.Run(p.Tab, "title", chromedp.Title()), "diffgate: FAIL fail.json")

	banner := p.rect("banner")
	p.look("fail-report", func(img image.Image, c *problems) {
		notBlank(img, c)
		red := bt.Count(img, light.fail, 10, banner.area())
		c.that(red > 800, "FAIL banner: %d red pixels", red)
		c.that(bt.Count(img, light.pass, 10, banner.area()) < 50, "green in the FAIL banner")
		// The change tree below is colour-coded: red (removed, violations),
		// green (added) and amber (changed).
		tree := bt.Rect{X: 0, Y: banner.Y + banner.Height + 50, Width: 440, Height: 400}
		c.that(bt.Count(img, light.pass, 16, tree) > 60, "no green (added) in the tree")
		c.that(bt.Count(img, light.warn, 16, tree) > 60, "no amber (changed) in the tree")
		c.that(bt.Count(img, light.fail, 16, tree) > 60, "no red (removed/violation) in the tree")
	})

	// Allow the selected violation as a reviewer would: Enter moves to the
	// detail's Allow… button, a click opens the suggestions, the keyboard
	// picks the first (the risk-naming entry for this symlink).
	p.Press("Enter")
	allow := p.waitRect("focused", "text", "Allow…", "the Allow… button to have the focus")
	p.Click(allow.X+allow.Width/2, allow.Y+allow.Height/2)
	p.waitRect("focused", "kind", "*widget.PopUpMenu", "the suggestions menu to have the focus")
	p.look("allow-menu", notBlank)
	p.Press("ArrowDown")
	p.Press("Enter")
	s = p.until("the verdict to be re-evaluated", func(s status) bool { return s.Violations == 4 })
	equal(t, "allowed", s.Allowed, 3)
	equal(t, "verdict", s.Verdict, "fail")
	equal(t, "reasons", s.Reasons, []string{"4 unexpected changes", "1 leftover process"})
	if len(s.Allowlist) != 2 || s.Allowlist[0] != "logs/" || !regexp.MustCompile(`^symlink-escape.*:cache/passwd$`).MatchString(s.Allowlist[1]) {
		t.Fatalf("allowlist %q, want [logs/ symlink-escape…:cache/passwd]", s.Allowlist)
	}
	allowlist := s.Allowlist
	p.look("allowed", notBlank)

	// n walks the violations; config.json's detail is a coloured text diff.
	for i := 0; i < 6 && p.status().Selected != "config.json"; i++ {
		before := p.status().Selected
		p.Press("n")
		p.waitStatus(5*time.Second, func(s status) bool { return s.Selected != before })
	}
	equal(t, "selected after n", p.status().Selected, "config.json")
	p.look("text-diff", func(img image.Image, c *problems) {
		detail := bt.Rect{X: 450, Y: banner.Y + banner.Height, Width: 560, Height: 500}
		c.that(bt.Count(img, bt.Hex("#dafbe1"), 6, detail) > 2000, "no green (added) diff lines")
		c.that(bt.Count(img, bt.Hex("#ffebe9"), 6, detail) > 2000, "no red (removed) diff lines")
	})

	name, text := p.download("download-allowlist")
	equal(t, "allowlist file name", name, "allowlist.txt")
	var entries []string
	for _, l := range strings.Split(text, "\n") {
		l, _, _ = strings.Cut(l, "#")
		if l = strings.TrimSpace(l); l != "" {
			entries = append(entries, l)
		}
	}
	equal(t, "downloaded allowlist entries", entries, allowlist)
	if !strings.Contains(text, "# verdict with this allowlist: FAIL (4 unexpected changes, 1 leftover process)") {
		t.Fatalf("the allowlist does not tell its verdict:\n%s", text)
	}

	name, text = p.download("download-report")
	if !regexp.MustCompile(`^diffgate-demo-workspace-.*\.json$`).MatchString(name) {
		t.Fatalf("report file name %q", name)
	}
	// The review's Export JSON: the run as it came, the draft in "review".
	var r struct {
		Schema  string `json:"schema"`
		Verdict string `json:"verdict"`
		Review  struct {
			Allowlist  []string `json:"allowlist"`
			Violations int      `json:"violations"`
		} `json:"review"`
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("the downloaded report: %v", err)
	}
	equal(t, "schema", r.Schema, "diffgate.report/v1")
	equal(t, "report verdict", r.Verdict, "fail")
	equal(t, "review allowlist", r.Review.Allowlist, allowlist)
	equal(t, "changes the draft does not allow", r.Review.Violations, 4)
}

func TestPassingReportIsGreenAlsoInTheDark(t *testing.T) {
	sess := newSession(t)
	for _, scheme := range []struct {
		name       string
		dark       bool
		pass, fail bt.RGB
	}{{"light", false, light.pass, light.fail}, {"dark", true, dark.pass, dark.fail}} {
		p := sess.open("", scheme.dark)
		if scheme.dark {
			p.look("welcome-dark", notBlank)
		}
		p.pick("welcome-open", "pass.json")
		s := p.until("pass.json to open", func(s status) bool { return s.Source == "pass.json" })
		equal(t, "verdict", s.Verdict, "pass")
		equal(t, "violations", s.Violations, 0)
		equal(t, "allowed", s.Allowed, 1)
		equal(t, "added", s.Added, 1)
		banner := p.rect("banner").area()
		p.look("pass-report-"+scheme.name, func(img image.Image, c *problems) {
			notBlank(img, c)
			green := bt.Count(img, scheme.pass, 10, banner)
			c.that(green > 800, "PASS banner (%s): %d green pixels", scheme.name, green)
			c.that(bt.Count(img, scheme.fail, 10, banner) < 50, "red in the PASS banner (%s)", scheme.name)
		})
	}
}

func TestLinkedReportThenDroppedReport(t *testing.T) {
	p := newSession(t).open("?report=fixtures/fail.json", false)
	s := p.until("the linked report", func(s status) bool { return s.Source == "fixtures/fail.json" })
	equal(t, "verdict", s.Verdict, "fail")
	equal(t, "violations", s.Violations, 5)
	equal(t, "error", s.Error, "")

	// A drop: dragover shows the drop frame, drop opens the file.
	text, err := os.ReadFile(filepath.Join(fixtures, "pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(string(text))
	shown := bt.Eval[string](p.Tab, fmt.Sprintf(`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File([%s], 'dropped.json', {type: 'application/json'}));
		const canvas = document.querySelector('canvas');
		canvas.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));
		const frame = getComputedStyle(document.getElementById('diffgate-drop')).display;
		canvas.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
		return frame;
	})()`, js))
	equal(t, "the drop frame while dragging", shown, "flex")
	s = p.until("the dropped report", func(s status) bool { return s.Source == "dropped.json" })
	equal(t, "verdict", s.Verdict, "pass")
	equal(t, "the drop frame after the drop",
		bt.Eval[string](p.Tab, `getComputedStyle(document.getElementById('diffgate-drop')).display`), "none")
}

func TestMalformedReportsShowAnError(t *testing.T) {
	p := newSession(t).open("?report=fixtures/not-json.json", false)
	s := p.until("an error", func(s status) bool { return s.Error != "" })
	equal(t, "error", s.Error, "Could not open fixtures/not-json.json: not a diffgate report: the file is not JSON")
	equal(t, "verdict", s.Verdict, "")
	bar := p.rect("error-bar")
	p.look("error-not-json", func(img image.Image, c *problems) {
		notBlank(img, c)
		red := bt.Reddish(img, bar.area())
		c.that(float64(red) > bar.Width*bar.Height*0.6, "the error bar is not red: %d reddish pixels", red)
	})
	if p.maybeRect("welcome-open") == nil {
		t.Fatal("the welcome page is gone")
	}

	p.pick("open", "truncated.json")
	s = p.until("the truncated report error", func(s status) bool { return strings.Contains(s.Error, "truncated.json") })
	equal(t, "error", s.Error, "Could not open truncated.json: not a diffgate report: the JSON is truncated")
	p.look("error-truncated", notBlank)

	p.pick("open", "wrong-schema.json")
	s = p.until("the wrong schema error", func(s status) bool { return strings.Contains(s.Error, "wrong-schema") })
	if !strings.Contains(s.Error, `schema "diffgate.report/v2", want "diffgate.report/v1"`) {
		t.Fatalf("error %q", s.Error)
	}

	p.pick("open", "before.json")
	s = p.until("the manifest error", func(s status) bool { return strings.Contains(s.Error, "before.json") })
	if !strings.Contains(s.Error, "before.json is a snapshot manifest, not a report: use Compare snapshots") {
		t.Fatalf("error %q", s.Error)
	}

	// A good report clears the error; a bad one afterwards keeps it shown.
	p.pick("open", "fail.json")
	s = p.until("fail.json to open", func(s status) bool { return s.Source == "fail.json" })
	equal(t, "error", s.Error, "")
	p.pick("open", "not-json.json")
	s = p.until("an error", func(s status) bool { return s.Error != "" })
	equal(t, "source", s.Source, "fail.json")
	equal(t, "verdict", s.Verdict, "fail")
	banner := p.rect("banner").area()
	p.look("error-over-report", func(img image.Image, c *problems) {
		c.that(bt.Count(img, light.fail, 10, banner) > 800, "the report is gone")
	})
	p.click("error-close")
	p.until("the error to be dismissed", func(s status) bool { return s.Error == "" })
}

func TestLinkedReportMissingOrElsewhere(t *testing.T) {
	sess := newSession(t)
	p := sess.open("?report=fixtures/missing.json", false)
	s := p.until("an error", func(s status) bool { return s.Error != "" })
	equal(t, "error", s.Error, "Could not load fixtures/missing.json: HTTP 404 Not Found")
	p.look("error-404", notBlank)

	p = sess.open("?report="+url.QueryEscape("http://example.invalid/report.json"), false)
	s = p.until("an error", func(s status) bool { return s.Error != "" })
	if !strings.Contains(s.Error, "only reports on this site can be linked") {
		t.Fatalf("error %q", s.Error)
	}
}

func TestCompareSnapshotsWithAllowlist(t *testing.T) {
	p := newSession(t).open("", false)
	p.click("compare")
	p.until("the compare dialog", func(s status) bool { return s.Compare })
	p.pick("compare-before", "seed-before.json")
	p.pick("compare-after", "after.json")
	p.typeInto("compare-allowlist", []string{".cache/", "logs/run.log"}, false)
	p.waitRect("compare-run", "disabled", false, "Compare to be enabled")
	p.look("compare-dialog", notBlank)
	p.click("compare-run")
	s := p.until("the comparison", func(s status) bool { return s.Source == "seed-before.json vs after.json" })
	equal(t, "compare dialog open", s.Compare, false)
	equal(t, "verdict", s.Verdict, "fail")
	equal(t, "allowlist", s.Allowlist, []string{".cache/", "logs/run.log"})
	// A seed snapshot on one side: files only, by size and SHA-256, as the seed's diff.py.
	c := counts(s)
	delete(c, "risky")
	equal(t, "counts", c, map[string]int{"added": 2, "removed": 1, "changed": 1, "violations": 2, "allowed": 2})
	equal(t, "reasons", s.Reasons, []string{"2 unexpected changes"})
	banner := p.rect("banner").area()
	p.look("compare-report", func(img image.Image, c *problems) {
		c.that(bt.Count(img, light.fail, 10, banner) > 800, "FAIL banner not red")
	})

	// Keep drafting in the review view's allowlist editor.
	p.typeInto("allowlist-editor", []string{"build.lock", "config.json"}, true)
	s = p.until("the draft to pass", func(s status) bool { return s.Verdict == "pass" })
	equal(t, "violations", s.Violations, 0)
	p.look("compare-pass", func(img image.Image, c *problems) {
		c.that(bt.Count(img, light.pass, 10, banner) > 800, "PASS banner not green")
	})
}
