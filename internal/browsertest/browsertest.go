// Package browsertest drives the system Chromium (Debian's chromium
// package) from Go tests with chromedp: headless, no sandbox, WebGL through
// SwiftShader, each tab in a browser context of its own. It needs no Node,
// no npm and no browser download: only /usr/bin/chromium (or $CHROMIUM).
//
// Without the browser the calling test is skipped, unless CI is set: then a
// missing browser fails the test.
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/inspector"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// DefaultPath is where Debian's chromium package puts the browser.
const DefaultPath = "/usr/bin/chromium"

// Timeout bounds one wait for the browser (a start, a page load, an event):
// generous, for loaded CI machines. Each wait ends at its event; the
// deadline is only a safety net.
const Timeout = 2 * time.Minute

// Path returns the browser to drive: $CHROMIUM, else /usr/bin/chromium. When
// it is missing the test is skipped, or fails when CI is set.
func Path(t testing.TB) string {
	t.Helper()
	p := os.Getenv("CHROMIUM")
	if p == "" {
		p = DefaultPath
	}
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatalf("CI=%s but %s is missing (make test-deps installs chromium)", ci, p)
	}
	t.Skipf("%s not found (set CI=true to make this a failure)", p)
	return ""
}

// Browser is a headless Chromium started for one test.
type Browser struct {
	ctx context.Context
	out *tailBuffer
}

// Start starts a headless Chromium for t, with its own profile, home and
// cache; it is killed (with its helpers) when t ends.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin := Path(t)
	home := t.TempDir()
	out := &tailBuffer{max: 16 << 10}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox,
		chromedp.Flag("use-angle", "swiftshader"),
		chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Env("HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
			"XDG_CACHE_HOME="+filepath.Join(home, "cache")),
		chromedp.CombinedOutput(out),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := attach(ctx); err != nil {
		t.Fatalf("start %s: %v\n%s", bin, err, out.String())
	}
	b := &Browser{ctx: ctx, out: out}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the browser's output (last lines):\n%s", out.String())
		}
	})
	return b
}

// attach runs the first action on a chromedp context: it starts the browser
// or opens the tab, whose life it binds to ctx itself (a deadline on it would
// end them), so the wait is bounded by Timeout here; on a timeout ctx's
// browser or tab is cancelled.
func attach(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(Timeout):
		chromedp.Cancel(ctx)
		return fmt.Errorf("no answer within %s", Timeout)
	}
}

// TabOptions shape a new tab.
type TabOptions struct {
	// Width and Height of the viewport in CSS pixels (device scale 1, so
	// screenshot pixels are CSS pixels).
	Width, Height int
	// Dark emulates prefers-color-scheme: dark (light otherwise).
	Dark bool
}

// Tab is a page in a browser context of its own, with the file chooser
// intercepted (PickFile) and downloads saved to a directory of the test
// (Download).
type Tab struct {
	Ctx       context.Context
	t         testing.TB
	downloads string

	// choosers and refused get the file choosers the page opens and the
	// ones Chrome refuses (see PickFile).
	choosers chan *page.EventFileChooserOpened
	refused  chan struct{}

	mu       sync.Mutex
	console  []string
	problems []string
}

// NewTab opens an empty tab; it is closed, and its browser context disposed
// of, when t ends.
func (b *Browser) NewTab(t testing.TB, o TabOptions) *Tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	tab := &Tab{Ctx: ctx, t: t, downloads: t.TempDir(),
		choosers: make(chan *page.EventFileChooserOpened, 8), refused: make(chan struct{}, 8)}
	if err := attach(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	if err := chromedp.Listen(ctx, tab.record); err != nil {
		t.Fatalf("listen to the tab: %v", err)
	}
	scheme := "light"
	if o.Dark {
		scheme = "dark"
	}
	c := chromedp.FromContext(ctx)
	Call(tab, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(o.Width), Height: int64(o.Height), DeviceScaleFactor: 1})
	Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
	Call(tab, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true})
	on := true
	bctx, bcancel := tab.bounded()
	defer bcancel()
	if _, err := chromedp.CallBrowser(bctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, BrowserContextID: c.BrowserContextID,
		DownloadPath: tab.downloads, EventsEnabled: &on}); err != nil {
		t.Fatalf("set the download behaviour: %v", err)
	}
	return tab
}

// record keeps the page's console lines, uncaught exceptions and crashes,
// and passes file choosers on to PickFile. It runs in the tab's event loop:
// it never blocks.
func (tab *Tab) record(ev any) {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		var parts []string
		for _, a := range ev.Args {
			var s string
			if a.Type == runtime.RemoteObjectTypeString && json.Unmarshal(a.Value, &s) == nil {
				parts = append(parts, s)
			} else if a.Description != "" {
				parts = append(parts, a.Description)
			} else {
				parts = append(parts, string(a.Value))
			}
		}
		tab.console = append(tab.console, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(parts, " ")))
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg += " " + d.Exception.Description
		}
		tab.problems = append(tab.problems, "page error: "+msg)
	case *cdplog.EventEntryAdded:
		tab.console = append(tab.console, fmt.Sprintf("browser %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
		if strings.Contains(ev.Entry.Text, noActivation) {
			select {
			case tab.refused <- struct{}{}:
			default: // PickFile is not waiting; the drain drops it anyway
			}
		}
	case *page.EventFileChooserOpened:
		select {
		case tab.choosers <- ev:
		default:
		}
	case *inspector.EventTargetCrashed:
		tab.problems = append(tab.problems, "the page crashed")
	}
}

// Console returns the lines the page logged so far ("console.log: text").
func (tab *Tab) Console() []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return append([]string(nil), tab.console...)
}

// Problems returns the page's uncaught exceptions and crashes so far.
func (tab *Tab) Problems() []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return append([]string(nil), tab.problems...)
}

// bounded returns the tab's context bounded by Timeout.
func (tab *Tab) bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(tab.Ctx, Timeout)
}

// Do runs actions in the tab, failing the test on an error.
func (tab *Tab) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tab.t.Helper()
	ctx, cancel := tab.bounded()
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tab.t.Fatalf("%s: %v", what, err)
	}
}

// Run runs one action in tab and returns its value, failing the test on an
// error.
func Run[T any](tab *Tab, what string, a chromedp.Action[T]) T {
	tab.t.Helper()
	ctx, cancel := tab.bounded()
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		tab.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// Call runs a protocol command in the tab and returns its result, failing
// the test on an error.
func Call[P, R any](tab *Tab, cmd cdp.Command[P, R], params P) R {
	tab.t.Helper()
	ctx, cancel := tab.bounded()
	defer cancel()
	r, err := chromedp.Call(ctx, cmd, params)
	if err != nil {
		tab.t.Fatalf("%s: %v", cmd.Method, err)
	}
	return r
}

// Navigate loads url and waits for its load event.
func (tab *Tab) Navigate(url string) {
	tab.t.Helper()
	tab.Do("load "+url, chromedp.Navigate(url))
}

// Eval evaluates a JavaScript expression (promises are awaited) and decodes
// its value into T.
func Eval[T any](tab *Tab, expr string) T {
	tab.t.Helper()
	return Run(tab, "evaluate "+expr, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// Screenshot captures the viewport as PNG.
func (tab *Tab) Screenshot() []byte {
	tab.t.Helper()
	return Run(tab, "screenshot", chromedp.CaptureScreenshot())
}

// NextFrame waits until the page has painted twice more (a change made now
// is on screen after that).
func (tab *Tab) NextFrame() {
	tab.t.Helper()
	Eval[chromedp.Void](tab, `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
}

// Click moves the mouse to (x, y) in CSS pixels and clicks there with the
// left button, as a person does: the button goes up a frame after it went
// down. (A busy page that handles input on goroutines of its own, as a Go
// wasm app does, can otherwise see the release before the press, and no
// click.)
func (tab *Tab) Click(x, y float64) {
	tab.t.Helper()
	what := fmt.Sprintf("click at %.0f,%.0f", x, y)
	button := func(p *input.DispatchMouseEventParams) {
		p.Button, p.Buttons, p.ClickCount = input.MouseButtonLeft, 1, 1
	}
	tab.Do(what, chromedp.MouseEvent(chromedp.MouseMoved, x, y),
		chromedp.MouseEvent(chromedp.MousePressed, x, y, button))
	tab.NextFrame()
	tab.Do(what, chromedp.MouseEvent(chromedp.MouseReleased, x, y, button,
		func(p *input.DispatchMouseEventParams) { p.Buttons = 0 }))
}

// Press presses and releases a key: a character ("n"), a key name
// ("Enter", "ArrowDown", "End") or modifiers and a key ("Control+End"),
// with the events a keyboard makes (as Playwright's keyboard.press).
func (tab *Tab) Press(key string) {
	tab.t.Helper()
	names := strings.Split(key, "+")
	var mods int64
	var held []*kb.Key
	for _, m := range names[:len(names)-1] {
		k, bit := lookupKey(tab.t, m), modifierBit(tab.t, m)
		held = append(held, k)
		mods |= bit
		tab.key(input.DispatchKeyEventTypeRawKeyDown, k, mods)
	}
	k := lookupKey(tab.t, names[len(names)-1])
	keyMods := mods
	if k.Shift {
		keyMods |= int64(chromedp.ModifierShift)
	}
	down := input.DispatchKeyEventTypeRawKeyDown
	if k.Print && keyMods&^int64(chromedp.ModifierShift) == 0 {
		down = input.DispatchKeyEventTypeKeyDown // with text: the page gets a keypress too
	}
	tab.key(down, k, keyMods)
	tab.key(input.DispatchKeyEventTypeKeyUp, k, keyMods)
	for i := len(held) - 1; i >= 0; i-- {
		mods &^= modifierBit(tab.t, names[i])
		tab.key(input.DispatchKeyEventTypeKeyUp, held[i], mods)
	}
}

func (tab *Tab) key(typ input.DispatchKeyEventType, k *kb.Key, mods int64) {
	tab.t.Helper()
	p := input.DispatchKeyEventParams{Type: typ, Modifiers: mods, Key: k.Key, Code: k.Code,
		WindowsVirtualKeyCode: k.Windows, NativeVirtualKeyCode: k.Windows}
	if typ == input.DispatchKeyEventTypeKeyDown {
		p.Text, p.UnmodifiedText = k.Text, k.Unmodified
	}
	Call(tab, input.DispatchKeyEvent, p)
}

var keyNames = map[string]string{
	"Enter": kb.Enter, "Escape": kb.Escape, "Tab": kb.Tab, "Backspace": kb.Backspace,
	"ArrowDown": kb.ArrowDown, "ArrowUp": kb.ArrowUp, "ArrowLeft": kb.ArrowLeft, "ArrowRight": kb.ArrowRight,
	"End": kb.End, "Home": kb.Home, "Control": kb.Control, "Shift": kb.Shift, "Alt": kb.Alt,
}

func lookupKey(t testing.TB, name string) *kb.Key {
	t.Helper()
	s := name
	if v, ok := keyNames[name]; ok {
		s = v
	}
	r := []rune(s)
	if len(r) != 1 {
		t.Fatalf("unknown key %q", name)
	}
	k, ok := kb.Keys[r[0]]
	if !ok {
		t.Fatalf("unknown key %q", name)
	}
	return k
}

func modifierBit(t testing.TB, name string) int64 {
	t.Helper()
	switch name {
	case "Alt":
		return int64(chromedp.ModifierAlt)
	case "Control":
		return int64(chromedp.ModifierCtrl)
	case "Shift":
		return int64(chromedp.ModifierShift)
	}
	t.Fatalf("unknown modifier %q", name)
	return 0
}

// noActivation is what Chrome logs when a page asks for a file chooser
// without a fresh user gesture (within about 5 s of the click).
const noActivation = "File chooser dialog can only be shown with a user activation"

// PickFile runs trigger, which makes the page open its file chooser (a click
// on an upload button), waits for the chooser and picks file in it.
//
// A page that handles the click late (a wasm app on a loaded machine) asks
// for the chooser after the gesture expired: Chrome then refuses and logs
// noActivation. PickFile runs trigger again then, as a person clicks again,
// up to 5 times; the test log tells how often.
func (tab *Tab) PickFile(file string, trigger func()) {
	tab.t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		tab.t.Fatal(err)
	}
	for drained := false; !drained; {
		select {
		case <-tab.choosers:
		case <-tab.refused:
		default:
			drained = true
		}
	}
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	trigger()
	for tries := 1; ; {
		select {
		case ev := <-tab.choosers:
			if ev.BackendNodeID == 0 {
				tab.t.Fatalf("the file chooser has no <input type=file>")
			}
			Call(tab, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{abs}, BackendNodeID: ev.BackendNodeID})
			return
		case <-tab.refused:
			if tries == 5 {
				tab.t.Fatalf("picking %s: %d times the page asked for the file chooser too late after the click (%q)",
					filepath.Base(file), tries, noActivation)
			}
			tries++
			tab.t.Logf("picking %s: the page asked for the file chooser too late after the click; clicking again", filepath.Base(file))
			trigger()
		case <-timer.C:
			tab.t.Fatalf("no file chooser opened within %s to pick %s; the page's console:\n%s",
				Timeout, filepath.Base(file), strings.Join(tab.Console(), "\n"))
		case <-tab.Ctx.Done():
			tab.t.Fatalf("picking %s: %v", filepath.Base(file), tab.Ctx.Err())
		}
	}
}

// Download runs trigger, which makes the page download a file, waits until
// the download is complete and returns its suggested name and contents.
func (tab *Tab) Download(trigger func()) (name string, data []byte) {
	tab.t.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, Timeout)
	defer cancel()
	begins := chromedp.BrowserEvents(ctx, browser.DownloadWillBegin)
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	trigger()
	var guid string
	for ev, err := range begins {
		if err != nil {
			tab.t.Fatalf("waiting for a download: %v", err)
		}
		guid, name = ev.GUID, ev.SuggestedFilename
		break
	}
	for ev, err := range progress {
		if err != nil {
			tab.t.Fatalf("waiting for the download of %s: %v", name, err)
		}
		if ev.GUID != guid {
			continue
		}
		switch ev.State {
		case browser.DownloadProgressStateCompleted:
			// allowAndName saves the file under its GUID.
			data, err := os.ReadFile(filepath.Join(tab.downloads, guid))
			if err != nil {
				tab.t.Fatalf("the download of %s: %v", name, err)
			}
			return name, data
		case browser.DownloadProgressStateCanceled:
			tab.t.Fatalf("the download of %s was cancelled", name)
		}
	}
	tab.t.Fatalf("the download of %s did not finish", name)
	return "", nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = w.b[len(w.b)-w.max:]
	}
	return len(p), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(bytes.TrimSpace(w.b))
}
