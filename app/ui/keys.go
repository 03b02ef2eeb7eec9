package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/internal/version"
)

// Shortcuts of the window.
var (
	shortcutRun    = &desktop.CustomShortcut{KeyName: fyne.KeyR, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutOpen   = &desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutSheet  = &desktop.CustomShortcut{KeyName: fyne.KeySlash, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift}
	shortcutSheet2 = &desktop.CustomShortcut{KeyName: fyne.KeySlash, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutTabs   = [3]*desktop.CustomShortcut{
		{KeyName: fyne.Key1, Modifier: fyne.KeyModifierAlt},
		{KeyName: fyne.Key2, Modifier: fyne.KeyModifierAlt},
		{KeyName: fyne.Key3, Modifier: fyne.KeyModifierAlt},
	}
)

// keyMap builds the window's table of keys: the window's own, the
// review's and the History tab's. They work from every field (see
// app/keys); the plain keys nothing takes go to the review while it is shown.
func (u *UI) keyMap() *keys.Map {
	const win = "Window"
	m := &keys.Map{}
	tabs := []*container.TabItem{u.runItem, u.reviewItem, u.historyItem}
	m.Add(
		keys.Binding{Group: win, Keys: "Ctrl+R", What: "Run the script through the gate", Shortcut: shortcutRun, Run: func() {
			u.Tabs.Select(u.runItem)
			u.run.start()
		}},
		keys.Binding{Group: win, Keys: "Ctrl+O", What: "Open a report (JSON)…", Shortcut: shortcutOpen, Run: u.chooseReport},
	)
	names := []string{"Run", "Review", "History"}
	for i, item := range tabs {
		m.Add(keys.Binding{Group: win, Keys: "Alt+" + string(rune('1'+i)), What: "The " + names[i] + " tab", Shortcut: shortcutTabs[i],
			Run: func() { u.selectTab(item) }})
	}
	m.Add(
		keys.Binding{Group: win, Keys: "Tab, Shift+Tab", What: "Next or previous field or button (out of the allowlist and the note too: they take no tab character)"},
		keys.Binding{Group: win, Keys: "Escape", What: "Leave a text field; close a dialog"},
		keys.Binding{Group: win, Keys: "?", What: "This list (outside a text field, where ? is typed)", Rune: '?', Run: u.showKeys},
		keys.Binding{Group: win, Keys: "F1, Ctrl+?", What: "This list, from anywhere", Key: fyne.KeyF1, Run: u.showKeys},
		keys.Binding{Group: win, Shortcut: shortcutSheet, Run: u.showKeys},
		keys.Binding{Group: win, Shortcut: shortcutSheet2, Run: u.showKeys},
	)
	for _, b := range u.review.Bindings() {
		if run := b.Run; run != nil {
			b.Run = func() {
				if u.reviewShown() {
					run()
				}
			}
		}
		m.Add(b)
	}
	m.Add(
		keys.Binding{Group: "History", Keys: "Up, Down", What: "Previous or next run"},
		keys.Binding{Group: "History", Keys: "Enter", What: "Open the selected run in the Review tab"},
	)
	m.OnKey = func(ev *fyne.KeyEvent) {
		if u.reviewShown() {
			u.review.TypedKey(ev)
		}
	}
	m.OnRune = func(r rune) {
		if u.reviewShown() {
			u.review.TypedRune(r)
		}
	}
	return m
}

// mainMenu is the window's menu: the same bindings, so each item shows its
// shortcut.
func (u *UI) mainMenu() *fyne.MainMenu {
	find := func(s fyne.Shortcut) keys.Binding {
		for _, b := range u.keys.Bindings() {
			if b.Shortcut != nil && b.Shortcut.ShortcutName() == s.ShortcutName() {
				return b
			}
		}
		panic("no binding for " + s.ShortcutName())
	}
	return fyne.NewMainMenu(
		fyne.NewMenu("File",
			keys.MenuItem("Open report…", find(shortcutOpen)),
			keys.MenuItem("Run through the gate", find(shortcutRun))),
		fyne.NewMenu("View",
			keys.MenuItem("Run", find(shortcutTabs[0])),
			keys.MenuItem("Review", find(shortcutTabs[1])),
			keys.MenuItem("History", find(shortcutTabs[2]))),
		fyne.NewMenu("Help",
			keys.MenuItem(keys.SheetTitle, find(shortcutSheet)),
			fyne.NewMenuItem("About diffgate", u.showAbout)),
	)
}

// showAbout shows the version and the commit the app was built from.
func (u *UI) showAbout() {
	dialog.ShowInformation("About diffgate", aboutText(), u.win)
}

// aboutText is the About box's text: the line diffgate --version prints.
func aboutText() string {
	return version.Get().String() + "\nThe desktop review app of diffgate,\na filesystem gate around scripts you did not write."
}

// selectTab shows a tab and gives the focus to what its keys drive: the
// change list in the review, the run list in the History tab.
func (u *UI) selectTab(item *container.TabItem) {
	u.Tabs.Select(item)
	switch {
	case item == u.historyItem:
		u.win.Canvas().Focus(u.history.list) // up/down and Enter work at once
	case item == u.reviewItem && u.reviewItem.Content == u.review:
		u.review.FocusChanges()
	default:
		u.win.Canvas().Unfocus()
	}
}

// reviewShown reports whether the Review tab shows a review.
func (u *UI) reviewShown() bool {
	return u.Tabs.Selected() == u.reviewItem && u.reviewItem.Content == u.review
}

// showKeys shows the cheat sheet (once: a second press while it is open
// does nothing).
func (u *UI) showKeys() {
	if u.sheet != nil {
		return
	}
	u.sheet = keys.ShowSheet(u.keys, u.win)
	u.sheet.SetOnClosed(func() { u.sheet = nil })
	u.keys.Modal(u.sheet) // Escape closes it
}

// Keys is the window's table of keys.
func (u *UI) Keys() *keys.Map { return u.keys }
