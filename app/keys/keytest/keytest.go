// Package keytest presses keys in a fyne/test window the way Fyne's desktop
// driver (internal/driver/glfw, window.go: processKeyPressed,
// triggersShortcut, processCharInput) delivers them, which the test driver
// does not: a shortcut goes to the main menu first, then to the focused
// widget when it takes shortcuts, then to the canvas; Tab moves the focus
// unless the focused widget accepts tabs; any other key or character goes to
// the focused widget, or to the canvas when nothing has focus.
package keytest

import (
	"reflect"

	"fyne.io/fyne/v2"
)

// Shortcut presses shortcut s in w.
func Shortcut(w fyne.Window, s fyne.Shortcut) {
	if mm := w.MainMenu(); mm != nil {
		for _, m := range mm.Items {
			if inMenu(m, s) {
				return
			}
		}
	}
	c := w.Canvas()
	if f, ok := c.Focused().(fyne.Shortcutable); ok {
		f.TypedShortcut(s)
		return
	}
	canvasShortcut(c, s)
}

func inMenu(m *fyne.Menu, s fyne.Shortcut) bool {
	for _, it := range m.Items {
		if it.Shortcut != nil && it.Shortcut.ShortcutName() == s.ShortcutName() && it.Action != nil {
			it.Action()
			return true
		}
		if it.ChildMenu != nil && inMenu(it.ChildMenu, s) {
			return true
		}
	}
	return false
}

// canvasShortcut hands s to the canvas' own shortcut handler (the one
// Canvas.AddShortcut fills). The test canvas wraps a software canvas that
// has it; the desktop canvas has it itself.
func canvasShortcut(c fyne.Canvas, s fyne.Shortcut) {
	type handler interface{ TypedShortcut(fyne.Shortcut) }
	if h, ok := c.(handler); ok {
		h.TypedShortcut(s)
		return
	}
	v := reflect.ValueOf(c)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		if f := v.FieldByName("WindowlessCanvas"); f.IsValid() {
			if h, ok := f.Interface().(handler); ok {
				h.TypedShortcut(s)
				return
			}
		}
	}
	panic("keytest: the canvas takes no shortcuts")
}

// Key presses the plain key k in w (Tab included, without Shift).
func Key(w fyne.Window, k fyne.KeyName) {
	c := w.Canvas()
	if k == fyne.KeyTab {
		if t, ok := c.Focused().(fyne.Tabbable); ok && t.AcceptsTab() {
			t.(fyne.Focusable).TypedKey(&fyne.KeyEvent{Name: k})
			return
		}
		c.FocusNext()
		return
	}
	ev := &fyne.KeyEvent{Name: k}
	if f := c.Focused(); f != nil {
		f.TypedKey(ev)
	} else if h := c.OnTypedKey(); h != nil {
		h(ev)
	}
}

// ShiftTab presses Shift+Tab in w.
func ShiftTab(w fyne.Window) {
	c := w.Canvas()
	if t, ok := c.Focused().(fyne.Tabbable); ok && t.AcceptsTab() {
		return // a widget that takes tabs types none on Shift+Tab
	}
	c.FocusPrevious()
}

// Type types the characters of s in w.
func Type(w fyne.Window, s string) {
	c := w.Canvas()
	for _, r := range s {
		if f := c.Focused(); f != nil {
			f.TypedRune(r)
		} else if h := c.OnTypedRune(); h != nil {
			h(r)
		}
	}
}
