package keys

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// Entry is a text entry that keeps the window's keyboard model (see the
// package comment): Tab moves on, Escape leaves, and the window's
// shortcuts and plain keys work while it has focus.
type Entry struct {
	widget.Entry
	// OnEscape is called after Escape has taken the focus from the entry
	// (to give it to another widget); nil leaves nothing focused.
	OnEscape func()
}

// NewEntry returns a single-line entry.
func NewEntry() *Entry {
	e := &Entry{}
	e.Wrapping = fyne.TextWrap(fyne.TextTruncateClip)
	e.ExtendBaseWidget(e)
	return e
}

// NewMultiLineEntry returns a multi-line entry; Tab leaves it as it leaves
// any other.
func NewMultiLineEntry() *Entry {
	e := NewEntry()
	e.MultiLine = true
	return e
}

// AcceptsTab implements fyne.Tabbable: never, so Tab moves the focus.
func (e *Entry) AcceptsTab() bool { return false }

// TypedKey implements fyne.Focusable.
func (e *Entry) TypedKey(ev *fyne.KeyEvent) {
	if !typedKey(e, ev, e.OnEscape) {
		e.Entry.TypedKey(ev)
	}
}

// TypedShortcut implements fyne.Shortcutable: the window's shortcuts first.
func (e *Entry) TypedShortcut(s fyne.Shortcut) {
	if !PassShortcut(e, s) {
		e.Entry.TypedShortcut(s)
	}
}

// SelectEntry is a widget.SelectEntry (an entry with a list of choices)
// that keeps the window's keyboard model, as Entry does.
type SelectEntry struct {
	widget.SelectEntry
	// OnEscape is as Entry's.
	OnEscape func()
}

// NewSelectEntry returns a select entry offering options.
func NewSelectEntry(options []string) *SelectEntry {
	e := &SelectEntry{}
	e.Wrapping = fyne.TextWrap(fyne.TextTruncateClip)
	e.ExtendBaseWidget(e)
	e.SetOptions(options)
	return e
}

// AcceptsTab implements fyne.Tabbable: never, so Tab moves the focus.
func (e *SelectEntry) AcceptsTab() bool { return false }

// TypedKey implements fyne.Focusable.
func (e *SelectEntry) TypedKey(ev *fyne.KeyEvent) {
	if !typedKey(e, ev, e.OnEscape) {
		e.SelectEntry.TypedKey(ev)
	}
}

// TypedShortcut implements fyne.Shortcutable: the window's shortcuts first.
func (e *SelectEntry) TypedShortcut(s fyne.Shortcut) {
	if !PassShortcut(e, s) {
		e.SelectEntry.TypedShortcut(s)
	}
}

// typedKey handles the keys an entry of this package takes before Fyne's
// entry: Tab (move on; a driver that does not move the focus itself hands
// it to the entry), Escape (leave) and function keys (the window's). It
// reports whether it took ev.
func typedKey(o fyne.CanvasObject, ev *fyne.KeyEvent, onEscape func()) bool {
	switch {
	case ev.Name == fyne.KeyTab:
		if c := canvasOf(o); c != nil {
			if shiftHeld() {
				c.FocusPrevious()
			} else {
				c.FocusNext()
			}
		}
		return true
	case ev.Name == fyne.KeyEscape:
		Leave(o, onEscape)
		return true
	case isFunctionKey(ev.Name):
		return PassKey(o, ev.Name)
	}
	return false
}

// Leave takes the focus from o, then calls then (when not nil), which may
// give it to another widget.
func Leave(o fyne.CanvasObject, then func()) {
	if c := canvasOf(o); c != nil {
		c.Unfocus()
	}
	if then != nil {
		then()
	}
}

func canvasOf(o fyne.CanvasObject) fyne.Canvas {
	if app := fyne.CurrentApp(); app != nil {
		return app.Driver().CanvasForObject(o)
	}
	return nil
}

func shiftHeld() bool {
	if d, ok := fyne.CurrentApp().Driver().(desktop.Driver); ok {
		return d.CurrentKeyModifiers()&fyne.KeyModifierShift != 0
	}
	return false
}

// isFunctionKey reports whether k is F1 to F12.
func isFunctionKey(k fyne.KeyName) bool {
	s := string(k)
	return len(s) >= 2 && len(s) <= 3 && s[0] == 'F' && strings.Trim(s[1:], "0123456789") == ""
}
