package keys_test

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/keys/keytest"
)

var ctrlR = &desktop.CustomShortcut{KeyName: fyne.KeyR, Modifier: fyne.KeyModifierShortcutDefault}

// window builds a window of two entries (one multi-line), a button and a
// map with a shortcut, a plain key and a character, each counting its runs.
func window(t *testing.T) (fyne.Window, *keys.Entry, *keys.Entry, *widget.Button, map[string]int) {
	t.Helper()
	test.NewTempApp(t)
	runs := map[string]int{}
	one, multi := keys.NewEntry(), keys.NewMultiLineEntry()
	btn := widget.NewButton("Run", func() { runs["tap"]++ })
	w := test.NewTempWindow(t, container.NewVBox(one, multi, btn))
	m := &keys.Map{}
	m.Add(
		keys.Binding{Group: "Window", Keys: "Ctrl+R", What: "run", Shortcut: ctrlR, Run: func() { runs["ctrl+r"]++ }},
		keys.Binding{Group: "Window", Keys: "F1", What: "help", Key: fyne.KeyF1, Run: func() { runs["f1"]++ }},
		keys.Binding{Group: "Window", Keys: "?", What: "help", Rune: '?', Run: func() { runs["?"]++ }},
		keys.Binding{Group: "List", Keys: "Up, Down", What: "move"},
	)
	m.OnRune = func(r rune) { runs["other "+string(r)]++ }
	m.Install(w.Canvas())
	t.Cleanup(func() { keys.Uninstall(w.Canvas()) })
	return w, one, multi, btn, runs
}

// TestShortcutsFromEveryWidget: a window shortcut runs with an entry, a
// multi-line entry, a button or nothing focused, and an entry's own
// shortcuts (select all) still work.
func TestShortcutsFromEveryWidget(t *testing.T) {
	w, one, multi, btn, runs := window(t)
	c := w.Canvas()
	for i, f := range []fyne.Focusable{one, multi, btn, nil} {
		if f == nil {
			c.Unfocus()
		} else {
			c.Focus(f)
		}
		keytest.Shortcut(w, ctrlR)
		if runs["ctrl+r"] != i+1 {
			t.Fatalf("Ctrl+R with %T focused: %d runs", f, runs["ctrl+r"])
		}
	}
	one.SetText("hello")
	c.Focus(one)
	keytest.Shortcut(w, &fyne.ShortcutSelectAll{})
	if one.SelectedText() != "hello" {
		t.Errorf("select all in the entry: %q selected", one.SelectedText())
	}
}

// TestTabLeavesMultiLineEntry: Tab from the multi-line entry moves the
// focus on and types no tab; Ctrl+Tab types none either; Shift+Tab goes back.
func TestTabLeavesMultiLineEntry(t *testing.T) {
	w, one, multi, btn, _ := window(t)
	c := w.Canvas()
	c.Focus(multi)
	keytest.Type(w, "logs/")
	keytest.Shortcut(w, &desktop.CustomShortcut{KeyName: fyne.KeyTab, Modifier: fyne.KeyModifierControl})
	if c.Focused() != multi || multi.Text != "logs/" {
		t.Fatalf("Ctrl+Tab: focus %T, text %q", c.Focused(), multi.Text)
	}
	keytest.Key(w, fyne.KeyTab)
	if c.Focused() != btn {
		t.Errorf("Tab from the multi-line entry focused %T, want the button", c.Focused())
	}
	if strings.Contains(multi.Text, "\t") {
		t.Errorf("a tab was typed: %q", multi.Text)
	}
	keytest.ShiftTab(w)
	keytest.ShiftTab(w)
	if c.Focused() != one {
		t.Errorf("Shift+Tab twice focused %T, want the first entry", c.Focused())
	}
	// A driver that hands Tab to the entry itself still moves on.
	c.Focus(multi)
	multi.TypedKey(&fyne.KeyEvent{Name: fyne.KeyTab})
	if c.Focused() != btn || strings.Contains(multi.Text, "\t") {
		t.Errorf("TypedKey(Tab): focus %T, text %q", c.Focused(), multi.Text)
	}
}

// TestEscapeAndPlainKeys: Escape leaves an entry (and OnEscape can give the
// focus elsewhere), F1 works from an entry and from nothing focused, '?' is
// typed in an entry and runs its binding from nothing focused; other
// characters go to OnRune.
func TestEscapeAndPlainKeys(t *testing.T) {
	w, one, multi, btn, runs := window(t)
	c := w.Canvas()
	c.Focus(one)
	keytest.Key(w, fyne.KeyEscape)
	if c.Focused() != nil {
		t.Errorf("Escape left %T focused", c.Focused())
	}
	multi.OnEscape = func() { c.Focus(btn) }
	c.Focus(multi)
	keytest.Key(w, fyne.KeyEscape)
	if c.Focused() != btn {
		t.Errorf("Escape with OnEscape focused %T", c.Focused())
	}
	c.Focus(one)
	keytest.Key(w, fyne.KeyF1)
	keytest.Type(w, "a?b")
	if runs["f1"] != 1 || one.Text != "a?b" || runs["?"] != 0 {
		t.Errorf("in the entry: F1 %d, '?' %d, text %q", runs["f1"], runs["?"], one.Text)
	}
	c.Unfocus()
	keytest.Key(w, fyne.KeyF1)
	keytest.Type(w, "?x")
	if runs["f1"] != 2 || runs["?"] != 1 || runs["other x"] != 1 {
		t.Errorf("nothing focused: %v", runs)
	}
}

// TestSheetListsEveryKey: the cheat sheet shows each binding with Keys, in
// its group.
func TestSheetListsEveryKey(t *testing.T) {
	w, _, _, _, _ := window(t)
	w.Resize(fyne.NewSize(1024, 700))
	m := keys.For(w.Content())
	if m == nil {
		t.Fatal("no map installed")
	}
	d := keys.ShowSheet(m, w)
	defer d.Hide()
	top := w.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("no dialog shown")
	}
	var labels []string
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Label:
			labels = append(labels, x.Text)
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(top)
	got := strings.Join(labels, "|")
	for _, want := range []string{keys.SheetTitle, "Window", "Ctrl+R|run", "F1|help", "?|help", "List", "Up, Down|move"} {
		if !strings.Contains(got, want) {
			t.Errorf("sheet lacks %q: %s", want, got)
		}
	}
	var _ dialog.Dialog = d
}
