//go:build js

package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"syscall/js"

	"fyne.io/fyne/v2"
)

// maxFile is the largest file the app reads (a report of a few million
// changes); larger files are refused with a message rather than exhausting
// the tab's memory.
const maxFile = 512 << 20

// Start builds the app in w with the browser as its host. Besides the
// header's buttons it wires:
//   - drag and drop of a report onto the page;
//   - ?report=URL (same origin), fetched when the app has started;
//   - window.diffgate, the status (see Status), updated on every change;
//   - window.diffgateReady = true (and a "diffgate-ready" event on
//     document) once the UI is up;
//   - in a build with the webtest tag only (the browser tests' build,
//     make web-test), window.diffgateRect(name), a promise of the on-page
//     rectangle of a named control (see App.Named), for the tests to click.
func Start(a fyne.App, w fyne.Window) *App {
	h := &jsHost{}
	x := New(a, w, h, Options{})
	h.app = x
	h.installDrop()
	h.installHooks()
	a.Lifecycle().SetOnStarted(func() {
		// The page's loader times Fyne's start from here
		// (window.diffgateLoad.started).
		js.Global().Get("performance").Call("mark", "diffgate-started")
		go func() {
			// Two frames later the window has been drawn.
			time.Sleep(100 * time.Millisecond)
			fyne.Do(func() {
				js.Global().Set("diffgateReady", true)
				doc.Call("dispatchEvent", js.Global().Get("Event").New("diffgate-ready"))
			})
			h.loadFromQuery()
		}()
		go func() {
			// Selection changes have no callback: look now and then.
			for range time.Tick(250 * time.Millisecond) {
				fyne.Do(x.Publish)
			}
		}()
	})
	return x
}

var doc = js.Global().Get("document")

type jsHost struct {
	app *App
}

// PickFile creates an <input type=file>, clicks it (the browser allows
// that for a while after the user's click on the Fyne button) and reads
// the chosen file.
func (h *jsHost) PickFile(accept string, done func(name string, data []byte, err error)) {
	input := doc.Call("createElement", "input")
	input.Set("type", "file")
	input.Set("accept", accept)
	input.Get("style").Set("display", "none")
	doc.Get("body").Call("appendChild", input)
	var onChange, onCancel js.Func
	release := func() {
		input.Call("remove")
		onChange.Release()
		onCancel.Release()
	}
	onChange = js.FuncOf(func(js.Value, []js.Value) any {
		files := input.Get("files")
		if files.IsNull() || files.Length() == 0 {
			go release()
			return nil
		}
		f := files.Index(0)
		go func() {
			defer release()
			name, data, err := readFile(f)
			done(name, data, err)
		}()
		return nil
	})
	onCancel = js.FuncOf(func(js.Value, []js.Value) any {
		go release()
		return nil
	})
	input.Call("addEventListener", "change", onChange)
	input.Call("addEventListener", "cancel", onCancel)
	input.Call("click")
}

// readFile copies a File's bytes into Go. It blocks: call it on a goroutine
// of its own, never in a js callback.
func readFile(f js.Value) (name string, data []byte, err error) {
	name = f.Get("name").String()
	if size := f.Get("size").Int(); size > maxFile {
		return name, nil, fmt.Errorf("the file is %d MB, more than the %d MB this page reads", size>>20, maxFile>>20)
	}
	buf, err := await(f.Call("arrayBuffer"))
	if err != nil {
		return name, nil, err
	}
	return name, bytesOf(buf), nil
}

func bytesOf(arrayBuffer js.Value) []byte {
	u8 := js.Global().Get("Uint8Array").New(arrayBuffer)
	data := make([]byte, u8.Get("length").Int())
	js.CopyBytesToGo(data, u8)
	return data
}

// await waits for a promise. It must run on its own goroutine: the
// promise settles in a js callback, which only runs while Go waits.
func await(p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	then := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- result{v: args[0]}
		return nil
	})
	catch := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- result{err: jsError(args[0])}
		return nil
	})
	defer then.Release()
	defer catch.Release()
	p.Call("then", then, catch)
	r := <-ch
	return r.v, r.err
}

func jsError(v js.Value) error {
	if v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString {
		return errors.New(v.Get("message").String())
	}
	return errors.New(v.String())
}

// Download offers data as a file: a Blob, an object URL and a click on a
// temporary <a download>.
func (h *jsHost) Download(name, mime string, data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	u8 := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(u8, data)
	blob := js.Global().Get("Blob").New([]any{u8}, map[string]any{"type": mime})
	urlAPI := js.Global().Get("URL")
	href := urlAPI.Call("createObjectURL", blob)
	a := doc.Call("createElement", "a")
	a.Set("href", href)
	a.Set("download", name)
	a.Get("style").Set("display", "none")
	doc.Get("body").Call("appendChild", a)
	a.Call("click")
	a.Call("remove")
	go func() {
		time.Sleep(time.Minute)
		urlAPI.Call("revokeObjectURL", href)
	}()
	return nil
}

// Publish sets window.diffgate and dispatches "diffgate-status" on document.
func (h *jsHost) Publish(s Status) {
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	v := js.Global().Get("JSON").Call("parse", string(b))
	js.Global().Set("diffgate", v)
	doc.Call("dispatchEvent", js.Global().Get("CustomEvent").New("diffgate-status", map[string]any{"detail": v}))
}

// installDrop opens a report dropped anywhere on the page, with a dashed
// frame over the page while a file is dragged over it.
func (h *jsHost) installDrop() {
	overlay := doc.Call("createElement", "div")
	overlay.Set("id", "diffgate-drop")
	overlay.Set("textContent", "Drop a diffgate report to open it")
	st := overlay.Get("style")
	for k, v := range map[string]string{
		"position": "fixed", "inset": "12px", "display": "none", "zIndex": "1000",
		"pointerEvents": "none", "border": "3px dashed #0969da", "borderRadius": "14px",
		"background": "rgba(9,105,218,0.10)", "color": "#0969da",
		"font": "600 22px system-ui, sans-serif", "alignItems": "center", "justifyContent": "center",
	} {
		st.Set(k, v)
	}
	doc.Get("body").Call("appendChild", overlay)
	show := func(on bool) {
		if on {
			st.Set("display", "flex")
		} else {
			st.Set("display", "none")
		}
	}
	hasFiles := func(ev js.Value) bool {
		dt := ev.Get("dataTransfer")
		if dt.IsNull() || dt.IsUndefined() {
			return false
		}
		types := dt.Get("types")
		for i := 0; i < types.Length(); i++ {
			if types.Index(i).String() == "Files" {
				return true
			}
		}
		return false
	}
	doc.Call("addEventListener", "dragover", js.FuncOf(func(_ js.Value, args []js.Value) any {
		ev := args[0]
		if !hasFiles(ev) {
			return nil
		}
		ev.Call("preventDefault")
		ev.Get("dataTransfer").Set("dropEffect", "copy")
		show(true)
		return nil
	}))
	doc.Call("addEventListener", "dragleave", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if rt := args[0].Get("relatedTarget"); rt.IsNull() || rt.IsUndefined() {
			show(false)
		}
		return nil
	}))
	doc.Call("addEventListener", "drop", js.FuncOf(func(_ js.Value, args []js.Value) any {
		ev := args[0]
		ev.Call("preventDefault")
		show(false)
		files := ev.Get("dataTransfer").Get("files")
		if files.Length() == 0 {
			return nil
		}
		f := files.Index(0)
		go func() {
			name, data, err := readFile(f)
			fyne.Do(func() {
				if err != nil {
					h.app.Fail(fmt.Sprintf("Could not read %s: %v", name, err))
					return
				}
				h.app.LoadReport(name, data)
			})
		}()
		return nil
	}))
}

// loadFromQuery fetches ?report=URL (same origin only: a CI artifact next to
// the page) and opens it. It runs on its own goroutine.
func (h *jsHost) loadFromQuery() {
	loc := js.Global().Get("location")
	q := js.Global().Get("URLSearchParams").New(loc.Get("search")).Call("get", "report")
	if q.IsNull() || q.String() == "" {
		return
	}
	ref := q.String()
	fail := func(err error) {
		fyne.Do(func() { h.app.Fail(fmt.Sprintf("Could not load %s: %v", ref, err)) })
	}
	u, err := resolveURL(ref, loc.Get("href").String())
	if err != nil {
		fail(err)
		return
	}
	if u.Get("origin").String() != loc.Get("origin").String() {
		fail(fmt.Errorf("only reports on this site can be linked (the page is %s)", loc.Get("origin").String()))
		return
	}
	fyne.Do(func() { h.app.Loading(ref) })
	resp, err := await(js.Global().Call("fetch", u.Get("href"), map[string]any{"credentials": "same-origin"}))
	if err != nil {
		fail(err)
		return
	}
	if !resp.Get("ok").Bool() {
		fail(fmt.Errorf("HTTP %d %s", resp.Get("status").Int(), resp.Get("statusText").String()))
		return
	}
	buf, err := await(resp.Call("arrayBuffer"))
	if err != nil {
		fail(err)
		return
	}
	data := bytesOf(buf)
	fyne.Do(func() { h.app.LoadReport(ref, data) })
}

// resolveURL is new URL(ref, base); a malformed ref is an error, not a panic.
func resolveURL(ref, base string) (u js.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("not a valid URL: %q", ref)
		}
	}()
	return js.Global().Get("URL").New(ref, base), nil
}
