// Package keys is the keyboard model of the diffgate windows, shared by the
// desktop app and the browser build: a window's table of keys (Map), the
// text entries that keep it (Entry, SelectEntry) and the cheat sheet that
// lists it (ShowSheet).
//
// A key comes in one of three forms:
//
//   - a shortcut (a key with Ctrl or Alt: Ctrl+R, Alt+1): it works from
//     every widget, a focused text entry included (Fyne hands a focused
//     entry every shortcut; this package's entries pass on those they do
//     not use themselves);
//   - a plain key (F1): it works when nothing has focus, and from the
//     package's entries and the widgets that pass keys on (Key);
//   - a character ('?'): it works when nothing has focus and from the
//     widgets that pass characters on (Rune), never from a text entry, which
//     types it.
//
// Tab and Shift+Tab move to the next and previous widget from every entry
// of this package, a multi-line one included: an allowlist or a note never
// needs a tab character, so none can be typed (Ctrl+Tab types none either).
// Escape leaves an entry.
package keys

import (
	"sync"

	"fyne.io/fyne/v2"
)

// Binding is one key of a window and what it does.
type Binding struct {
	// Group names the part of the window the key belongs to in the cheat
	// sheet ("Window", "Review").
	Group string
	// Keys is how the cheat sheet writes the key ("Ctrl+R"); "" leaves the
	// binding out of the sheet (a second spelling of a listed key).
	Keys string
	// What the key does, for the cheat sheet.
	What string

	// Shortcut, Key or Rune is the key: at most one is set. A binding
	// without any is listed in the cheat sheet only: a key a widget
	// handles itself (Up and Down in a list).
	Shortcut fyne.Shortcut
	Key      fyne.KeyName
	Rune     rune

	// Run does it (nil for a binding that is only listed).
	Run func()
}

// Map is a window's table of keys. Install it on the window's canvas.
type Map struct {
	list []*Binding
	// modals are the dialogs shown over the window that Escape closes,
	// the newest last (Modal).
	mu     sync.Mutex
	modals []Closer

	// OnKey and OnRune receive the plain keys and characters typed while
	// nothing has focus that no binding takes (the desktop app routes them
	// to the review view).
	OnKey  func(*fyne.KeyEvent)
	OnRune func(rune)
}

// Add appends bindings to the table.
func (m *Map) Add(bs ...Binding) {
	for i := range bs {
		b := bs[i]
		m.list = append(m.list, &b)
	}
}

// Bindings returns the table in the order it was built.
func (m *Map) Bindings() []Binding {
	out := make([]Binding, len(m.list))
	for i, b := range m.list {
		out[i] = *b
	}
	return out
}

// Closer is a dialog Escape can close (dialog.Dialog is one).
type Closer interface {
	Hide()
	SetOnClosed(func())
}

// Modal makes Escape close d (its Hide: Cancel, Close) while it is shown,
// from an entry of this package or with nothing focused; the newest dialog
// closes first. A nil Map does nothing.
func (m *Map) Modal(d Closer) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.modals = append(m.modals, d)
	m.mu.Unlock()
	d.SetOnClosed(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for i, x := range m.modals {
			if x == d {
				m.modals = append(m.modals[:i], m.modals[i+1:]...)
				break
			}
		}
	})
}

// Escape closes the newest dialog Modal registered and reports whether
// there was one.
func (m *Map) Escape() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	n := len(m.modals)
	var d Closer
	if n > 0 {
		d = m.modals[n-1]
	}
	m.mu.Unlock()
	if d == nil {
		return false
	}
	d.Hide() // its OnClosed drops it
	return true
}

// Shortcut runs the binding of shortcut s and reports whether there was one.
func (m *Map) Shortcut(s fyne.Shortcut) bool {
	if s == nil {
		return false
	}
	name := s.ShortcutName()
	return m.run(func(b *Binding) bool { return b.Shortcut != nil && b.Shortcut.ShortcutName() == name })
}

// Key runs the binding of plain key k and reports whether there was one.
func (m *Map) Key(k fyne.KeyName) bool {
	return k != "" && m.run(func(b *Binding) bool { return b.Key == k })
}

// Rune runs the binding of character r and reports whether there was one.
func (m *Map) Rune(r rune) bool {
	return r != 0 && m.run(func(b *Binding) bool { return b.Rune == r })
}

// run runs the first binding that is and does something, and reports
// whether there was one.
func (m *Map) run(is func(*Binding) bool) bool {
	if m == nil {
		return false
	}
	for _, b := range m.list {
		if b.Run != nil && is(b) {
			b.Run()
			return true
		}
	}
	return false
}

// MenuItem is a menu item that runs b and shows its shortcut.
func MenuItem(label string, b Binding) *fyne.MenuItem {
	it := fyne.NewMenuItem(label, b.Run)
	it.Shortcut = b.Shortcut
	return it
}

// installed maps a canvas to its Map: the package's entries and the widgets
// that pass keys on find the table of the window they are in through it.
var installed sync.Map // fyne.Canvas -> *Map

// Install makes m the table of canvas c: its shortcuts are added to the
// canvas (for when no entry has focus) and the keys nothing takes go to
// m's bindings, then to OnKey and OnRune.
func (m *Map) Install(c fyne.Canvas) {
	installed.Store(c, m)
	for _, b := range m.list {
		if b.Shortcut != nil && b.Run != nil {
			run := b.Run
			c.AddShortcut(b.Shortcut, func(fyne.Shortcut) { run() })
		}
	}
	c.SetOnTypedKey(func(ev *fyne.KeyEvent) {
		if ev.Name == fyne.KeyEscape && m.Escape() {
			return
		}
		if !m.Key(ev.Name) && m.OnKey != nil {
			m.OnKey(ev)
		}
	})
	c.SetOnTypedRune(func(r rune) {
		if !m.Rune(r) && m.OnRune != nil {
			m.OnRune(r)
		}
	})
}

// Uninstall forgets the table of canvas c (when its window closes).
func Uninstall(c fyne.Canvas) { installed.Delete(c) }

// For returns the table of the window o is in (nil when none is installed).
func For(o fyne.CanvasObject) *Map {
	app := fyne.CurrentApp()
	if app == nil {
		return nil
	}
	c := app.Driver().CanvasForObject(o)
	if c == nil {
		return nil
	}
	m, _ := installed.Load(c)
	mm, _ := m.(*Map)
	return mm
}

// PassShortcut runs the window binding of s for o, a widget that has no use
// for s itself, and reports whether there was one.
func PassShortcut(o fyne.CanvasObject, s fyne.Shortcut) bool { return For(o).Shortcut(s) }

// PassKey runs the window binding of plain key k for o (see PassShortcut).
func PassKey(o fyne.CanvasObject, k fyne.KeyName) bool { return For(o).Key(k) }

// PassFunctionKey runs the window binding of ev for o when ev is a function
// key (F1: the cheat sheet), for a widget that takes plain keys (a list)
// but none of F1 to F12, and reports whether it ran one.
func PassFunctionKey(o fyne.CanvasObject, ev *fyne.KeyEvent) bool {
	return isFunctionKey(ev.Name) && PassKey(o, ev.Name)
}

// PassRune runs the window binding of character r for o, a widget that types
// no text (see PassShortcut).
func PassRune(o fyne.CanvasObject, r rune) bool { return For(o).Rune(r) }
