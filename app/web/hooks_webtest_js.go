//go:build js && webtest

package web

import (
	"fmt"

	"syscall/js"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
)

// installHooks defines window.diffgateRect(name) for the browser tests: a
// promise of {x, y, width, height, kind, text, disabled} in CSS pixels of
// the named control (kind is its Go type), or null when it is not shown.
func (h *jsHost) installHooks() {
	js.Global().Set("diffgateRect", js.FuncOf(func(_ js.Value, args []js.Value) any {
		name := ""
		if len(args) > 0 {
			name = args[0].String()
		}
		var resolve js.Value
		exec := js.FuncOf(func(_ js.Value, a []js.Value) any {
			resolve = a[0]
			return nil
		})
		p := js.Global().Get("Promise").New(exec)
		exec.Release()
		go fyne.Do(func() { resolve.Invoke(h.rect(name)) })
		return p
	}))
}

func (h *jsHost) rect(name string) any {
	o := h.app.Named(name)
	if o == nil {
		return nil
	}
	d := fyne.CurrentApp().Driver()
	c := d.CanvasForObject(o)
	if c == nil {
		return nil
	}
	pos := d.AbsolutePositionForObject(o)
	x1, y1 := c.PixelCoordinateForPosition(pos)
	x2, y2 := c.PixelCoordinateForPosition(pos.Add(o.Size()))
	el := doc.Call("querySelector", "canvas")
	if el.IsNull() {
		return nil
	}
	box := el.Call("getBoundingClientRect")
	ratio := el.Get("width").Float() / box.Get("width").Float()
	out := map[string]any{
		"x":      box.Get("left").Float() + float64(x1)/ratio,
		"y":      box.Get("top").Float() + float64(y1)/ratio,
		"width":  float64(x2-x1) / ratio,
		"height": float64(y2-y1) / ratio,
		"kind":   fmt.Sprintf("%T", o),
	}
	switch w := o.(type) {
	case *widget.Button:
		out["text"] = w.Text
		out["disabled"] = w.Disabled()
	case *widget.Entry:
		out["text"] = w.Text
	case *keys.Entry:
		out["text"] = w.Text
	}
	return out
}
