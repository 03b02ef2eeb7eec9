package ui

import (
	"image"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/keys/keytest"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/internal/version"
)

// sheetShown reports whether the cheat sheet is the top overlay.
func sheetShown(w fyne.Window) bool {
	top := w.Canvas().Overlays().Top()
	return top != nil && strings.Contains(uitest.DrawnText(top), keys.SheetTitle)
}

// closeSheet closes the cheat sheet as its Close button does.
func closeSheet(t *testing.T, u *UI) {
	t.Helper()
	if u.sheet == nil {
		t.Fatal("no cheat sheet to close")
	}
	u.sheet.Hide()
	if u.sheet != nil || u.win.Canvas().Overlays().Top() != nil {
		t.Fatal("the cheat sheet did not close")
	}
}

// popUpMenu is the pop-up menu shown over w, nil when there is none.
func popUpMenu(w fyne.Window) *widget.PopUpMenu {
	var m *widget.PopUpMenu
	if top := w.Canvas().Overlays().Top(); top != nil {
		uitest.Walk(top, func(o fyne.CanvasObject) {
			if x, ok := o.(*widget.PopUpMenu); ok {
				m = x
			}
		})
	}
	return m
}

// TestShortcutsFromEveryField: Alt+1..3 and Ctrl+R work while any text
// field of the window has focus (the Run tab's, the review's note, draft
// allowlist and filter), Escape leaves each field, and the cheat sheet
// opens with ? (not in a text field, where ? is typed), F1 and Ctrl+?
// from anywhere, listing every key of the window.
func TestShortcutsFromEveryField(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(fyne.NewSize(1280, 800))
	openReport(t, u, l, writeDemoReport(t))
	v := u.Review()
	var note *keys.Entry = noteEntry(t, v)
	var search *keys.Entry
	uitest.Walk(v, func(o fyne.CanvasObject) {
		if e, ok := o.(*keys.Entry); ok && e.PlaceHolder == "Filter paths…" {
			search = e
		}
	})
	type field struct {
		name string
		tab  *container.TabItem
		f    fyne.Focusable
	}
	fields := []field{
		{"workspace", u.runItem, u.run.workspace}, {"script", u.runItem, u.run.script},
		{"arguments", u.runItem, u.run.args}, {"timeout", u.runItem, u.run.timeout},
		{"run allowlist", u.runItem, u.run.allow.Entry()},
		{"note", u.reviewItem, note}, {"draft allowlist", u.reviewItem, v.Editor().Entry()}, {"filter", u.reviewItem, search},
	}
	c := w.Canvas()
	for _, f := range fields {
		for i, want := range []*container.TabItem{u.historyItem, u.reviewItem, u.runItem} {
			u.Tabs.Select(f.tab)
			c.Focus(f.f)
			keytest.Shortcut(w, shortcutTabs[2-i])
			if u.Tabs.Selected() != want {
				t.Errorf("%s: Alt+%d selected %q", f.name, 3-i, u.Tabs.Selected().Text)
			}
		}
		u.Tabs.Select(f.tab)
		c.Focus(f.f)
		keytest.Key(w, fyne.KeyEscape)
		got := c.Focused()
		if f.tab == u.reviewItem {
			v.FocusChanges() // where Escape should have left the focus
		}
		if f.tab == u.runItem && got != nil || f.tab == u.reviewItem && (got == nil || got != c.Focused()) {
			t.Errorf("%s: Escape left the focus on %T", f.name, got)
		}

		c.Focus(f.f)
		keytest.Key(w, fyne.KeyF1)
		if !sheetShown(w) {
			t.Errorf("%s: F1 shows no cheat sheet", f.name)
		}
		closeSheet(t, u)
		c.Focus(f.f)
		keytest.Shortcut(w, shortcutSheet)
		if !sheetShown(w) {
			t.Errorf("%s: Ctrl+? shows no cheat sheet", f.name)
		}
		closeSheet(t, u)
	}

	// ? is typed in a text field, and opens the sheet elsewhere: nothing
	// focused, the change list, the run list.
	u.Tabs.Select(u.runItem)
	u.run.args.SetText("")
	c.Focus(u.run.args)
	keytest.Type(w, "?")
	if u.run.args.Text != "?" || sheetShown(w) {
		t.Errorf("? in the arguments: text %q, sheet %v", u.run.args.Text, sheetShown(w))
	}
	for _, where := range []string{"nothing", "changes", "runs"} {
		switch where {
		case "nothing":
			c.Unfocus()
		case "changes":
			keytest.Shortcut(w, shortcutTabs[1])
		case "runs":
			keytest.Shortcut(w, shortcutTabs[2])
		}
		keytest.Type(w, "?")
		if !sheetShown(w) {
			t.Fatalf("? with %s focused (%T): no cheat sheet", where, c.Focused())
		}
		if where == "nothing" {
			// Every key of the window is listed, and a second ? opens no second sheet.
			sheet := uitest.DrawnText(c.Overlays().Top())
			for _, b := range u.Keys().Bindings() {
				if b.Keys != "" && (!strings.Contains(sheet, "\n"+b.Keys+"\n") || !strings.Contains(strings.ReplaceAll(sheet, "\n", " "), b.What)) {
					t.Errorf("the cheat sheet lacks %q (%s)", b.Keys, b.What)
				}
			}
			keytest.Type(w, "?")
			if n := len(c.Overlays().List()); n != 1 {
				t.Errorf("%d overlays after a second ?", n)
			}
		}
		closeSheet(t, u)
	}

	// Ctrl+R from the review's note runs the demo (the Run tab's inputs).
	u.Tabs.Select(u.reviewItem)
	c.Focus(note)
	keytest.Shortcut(w, shortcutRun)
	if u.Tabs.Selected() != u.runItem || !u.run.running {
		t.Fatalf("Ctrl+R from the note: tab %q, running %v", u.Tabs.Selected().Text, u.run.running)
	}
	l.until(t, "the run", 60*time.Second, func() bool { return !u.run.running })
	if r := u.Review().Report(); r == nil || !strings.HasSuffix(r.Script.Path, "demo.sh") {
		t.Errorf("Ctrl+R ran %+v", r)
	}
}

// TestReviewKeys: a opens Allow… for the selected change (from the change
// list and with nothing focused), and Ctrl+Enter approves from the note
// and from the draft allowlist.
func TestReviewKeys(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(fyne.NewSize(1280, 800))
	openReport(t, u, l, writeDemoReport(t))
	v := u.Review()
	c := w.Canvas()
	if v.Selected() < 0 || v.Report().Changes[v.Selected()].Allowed {
		t.Fatalf("the review does not open on a violation (%d)", v.Selected())
	}
	path := v.Report().Changes[v.Selected()].Path
	v.FocusChanges()
	list := c.Focused()
	if list == nil {
		t.Fatal("FocusChanges focused nothing")
	}
	for _, focused := range []fyne.Focusable{list, nil} {
		if focused == nil {
			c.Unfocus()
		} else {
			c.Focus(focused)
		}
		keytest.Type(w, "a")
		menu := popUpMenu(w)
		if menu == nil {
			t.Fatalf("a with %T focused opened %T, want the Allow… menu", focused, c.Overlays().Top())
		}
		if s := uitest.DrawnText(menu); !strings.Contains(s, path) {
			t.Errorf("Allow… menu for %s: %q", path, s)
		}
		menu.Hide()
	}
	// The menu's first item allows the change.
	keytest.Type(w, "a")
	menu := popUpMenu(w)
	test.Tap(menu.Items[0].(fyne.Tappable))
	if got := v.Draft(); !slices.ContainsFunc(got, func(e string) bool { return strings.HasSuffix(e, path) }) {
		t.Errorf("draft after Allow…: %q", got)
	}

	// Allow every violation: the demo run still fails (its leftover
	// process), so Ctrl+Enter from the note asks first, saying why;
	// Cancel saves nothing, Approve anyway saves version 1.
	for _, e := range policy.Suggest(v.Report().Changes) { // allow every violation
		v.Editor().Append(e)
	}
	c.Focus(noteEntry(t, v))
	keytest.Type(w, "fine")
	ctrlEnter := v.Bindings()[0].Shortcut
	keytest.Shortcut(w, ctrlEnter)
	ask := approvalDialog(t, w)
	if s := strings.ReplaceAll(uitest.DrawnText(ask), "\n", " "); !strings.Contains(s, "1 leftover process: no allowlist allows this") ||
		strings.Contains(s, "the draft does not allow") {
		t.Errorf("approval question: %q", s)
	}
	test.Tap(uitest.Button(t, ask, "Cancel"))
	if d := v.Decision(); d != "" || w.Canvas().Overlays().Top() != nil {
		t.Fatalf("Cancel: decision %q, overlay %v", d, w.Canvas().Overlays().Top())
	}
	keytest.Shortcut(w, ctrlEnter)
	test.Tap(uitest.Button(t, approvalDialog(t, w), "Approve anyway"))
	if d := v.Decision(); !strings.HasPrefix(d, "Approved: allowlist version 1 ") {
		t.Errorf("Ctrl+Enter from the note: decision %q", d)
	}
	c.Focus(v.Editor().Entry())
	keytest.Shortcut(w, ctrlEnter)
	test.Tap(uitest.Button(t, approvalDialog(t, w), "Approve anyway"))
	if d := v.Decision(); !strings.HasPrefix(d, "Approved: allowlist version 2 ") {
		t.Errorf("Ctrl+Enter from the draft allowlist: decision %q", d)
	}
	// Not from another tab.
	u.Tabs.Select(u.runItem)
	c.Focus(u.run.args)
	keytest.Shortcut(w, v.Bindings()[0].Shortcut)
	if d := v.Decision(); !strings.HasPrefix(d, "Approved: allowlist version 2 ") {
		t.Errorf("Ctrl+Enter from the Run tab approved: %q", d)
	}
}

// approvalDialog is the question asked before approving an allowlist the
// run still fails with.
func approvalDialog(t *testing.T, w fyne.Window) fyne.CanvasObject {
	t.Helper()
	top := w.Canvas().Overlays().Top()
	if top == nil || !strings.Contains(uitest.DrawnText(top), "Approve an allowlist the run still fails with?") {
		t.Fatalf("no approval question shown (%T)", top)
	}
	return top
}

// tabCycle presses Tab from nothing focused until the focus comes back
// round, and returns what had it, in order.
func tabCycle(t *testing.T, w fyne.Window) []fyne.Focusable {
	t.Helper()
	w.Canvas().Unfocus()
	var seen []fyne.Focusable
	for range 500 {
		keytest.Key(w, fyne.KeyTab)
		f := w.Canvas().Focused()
		if f == nil || slices.Contains(seen, f) {
			return seen
		}
		seen = append(seen, f)
	}
	t.Fatal("Tab never came round")
	return nil
}

// buttonPixel is the color drawn just inside b's left edge, halfway down.
func buttonPixel(w fyne.Window, b *widget.Button) (img image.Image, x, y int) {
	img = w.Canvas().Capture()
	p := fyne.CurrentApp().Driver().AbsolutePositionForObject(b)
	s := w.Canvas().Scale()
	return img, int((p.X + 3) * s), int((p.Y + b.Size().Height/2) * s)
}

// wantDrawnFocused checks that b looks different with the focus.
func wantDrawnFocused(t *testing.T, w fyne.Window, b *widget.Button) {
	t.Helper()
	c := w.Canvas()
	c.Focus(b)
	img, x, y := buttonPixel(w, b)
	focused := img.At(x, y)
	c.Unfocus()
	img, x, y = buttonPixel(w, b)
	if uitest.SameColor(focused, img.At(x, y)) {
		t.Errorf("%q is drawn the same focused and not (%v at %d,%d)", b.Text, focused, x, y)
	}
}

// TestTabReachesEveryButton: Tab goes round every button that matters —
// Run; in the review of a staged run Approve, Reject, Apply and each
// export; in the History tab Open in Review — each drawn focused; Tab
// moves out of the allowlist editors without typing a tab.
//
// It runs in a process of its own: after the package's other tests, Fyne's
// software painter (test.Capture) panics inside golang.org/x/image/vector
// drawing a rounded rectangle (an empty mask buffer), which the GL painter
// of the real app never meets; alone it draws.
func TestTabReachesEveryButton(t *testing.T) {
	if inOwnProcess(t) {
		return
	}
	u, l, w, _ := stagedRun(t)
	w.Resize(fyne.NewSize(1280, 800))
	l.settle(50 * time.Millisecond)
	v := u.Review()

	u.Tabs.Select(u.runItem)
	cycle := tabCycle(t, w)
	if !slices.Contains(cycle, fyne.Focusable(u.run.runBtn)) {
		t.Errorf("Tab never reaches Run in the Run tab (%d stops)", len(cycle))
	}
	wantDrawnFocused(t, w, u.run.runBtn)
	k := slices.Index(cycle, fyne.Focusable(u.run.allow.Entry()))
	if k < 0 {
		t.Fatal("Tab never reaches the Run tab's allowlist")
	}
	w.Canvas().Focus(u.run.allow.Entry())
	before := u.run.allow.Text()
	keytest.Key(w, fyne.KeyTab)
	if w.Canvas().Focused() != cycle[(k+1)%len(cycle)] || u.run.allow.Text() != before {
		t.Errorf("Tab in the allowlist: focus %T, text %q -> %q", w.Canvas().Focused(), before, u.run.allow.Text())
	}

	u.Tabs.Select(u.reviewItem)
	cycle = tabCycle(t, w)
	buttons := []*widget.Button{uitest.Button(t, v, "Approve allowlist"), uitest.Button(t, v, "Reject"), uitest.ButtonWithPrefix(t, v, "Apply ")}
	for _, f := range []string{"HTML", "Markdown", "JSON"} {
		buttons = append(buttons, uitest.Button(t, v, f))
	}
	for _, b := range buttons {
		if !slices.Contains(cycle, fyne.Focusable(b)) {
			t.Errorf("Tab never reaches %q in the review", b.Text)
		}
		wantDrawnFocused(t, w, b)
	}
	w.Canvas().Focus(v.Editor().Entry())
	before = v.Editor().Text()
	keytest.Key(w, fyne.KeyTab)
	if w.Canvas().Focused() == v.Editor().Entry() || v.Editor().Text() != before {
		t.Errorf("Tab in the draft allowlist: focus %T, text %q -> %q", w.Canvas().Focused(), before, v.Editor().Text())
	}

	u.Tabs.Select(u.historyItem)
	l.until(t, "the run list", 10*time.Second, func() bool { return len(u.history.rows) == 1 && !u.history.openBtn.Disabled() })
	cycle = tabCycle(t, w)
	if !slices.Contains(cycle, fyne.Focusable(u.history.openBtn)) {
		t.Error("Tab never reaches Open in Review in the History tab")
	}
	wantDrawnFocused(t, w, u.history.openBtn)
}

// TestEscapeClosesDialogsAndF1FromLists: F1 opens the cheat sheet while
// the change list or the run list has the focus (as they do after Alt+2
// and Alt+3); Escape closes the cheat sheet, the writable-folders dialog
// and the approve question (which then saves nothing).
func TestEscapeClosesDialogsAndF1FromLists(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(fyne.NewSize(1024, 700))
	openReport(t, u, l, writeDemoReport(t))
	c := w.Canvas()
	escape := func(what string) {
		t.Helper()
		keytest.Key(w, fyne.KeyEscape)
		if top := c.Overlays().Top(); top != nil {
			t.Errorf("Escape did not close %s", what)
			top.Hide()
		}
	}
	for _, tab := range []*container.TabItem{u.reviewItem, u.historyItem} {
		u.selectTab(tab)
		if c.Focused() == nil {
			t.Fatalf("%s tab: nothing has the focus", tab.Text)
		}
		keytest.Key(w, fyne.KeyF1)
		if !sheetShown(w) {
			t.Errorf("%s tab: F1 from %T shows no cheat sheet", tab.Text, c.Focused())
			continue
		}
		escape("the cheat sheet")
		if u.sheet != nil {
			t.Error("the cheat sheet is still recorded as open")
		}
	}

	u.selectTab(u.runItem)
	u.run.contain.editFolders()
	if top := c.Overlays().Top(); top == nil || !strings.Contains(uitest.DrawnText(top), "Writable folders") {
		t.Fatal("no writable-folders dialog")
	}
	escape("the writable-folders dialog")

	u.selectTab(u.reviewItem)
	uitest.Button(t, u.Review(), "Approve allowlist").OnTapped()
	approvalDialog(t, w)
	escape("the approve question")
	if d := u.Review().Decision(); d != "" {
		t.Errorf("Escape on the approve question decided %q", d)
	}
}

// ownProcessEnv marks the test process inOwnProcess started.
const ownProcessEnv = "DIFFGATE_TEST_OWN_PROCESS"

// inOwnProcess runs the calling test again in a new process of the test
// binary (only that test) and returns true, failing t with its output if it
// fails; in that process it returns false and the test runs there.
func inOwnProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(ownProcessEnv) != "" {
		return false
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), ownProcessEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("in its own process: %v\n%s", err, out)
	}
	return true
}

// TestAboutShowsVersion: Help > About diffgate shows the line diffgate
// --version prints (version and commit).
func TestAboutShowsVersion(t *testing.T) {
	u, _, w := newTestUI(t, Options{})
	var about *fyne.MenuItem
	for _, m := range u.mainMenu().Items {
		for _, it := range m.Items {
			if it.Label == "About diffgate" {
				about = it
			}
		}
	}
	if about == nil {
		t.Fatal("no About diffgate in the menu")
	}
	about.Action()
	top := w.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("About showed nothing")
	}
	want := version.Get().String()
	if s := uitest.DrawnText(top); !strings.Contains(s, want) {
		t.Errorf("About shows %q, want %q", s, want)
	}
}
