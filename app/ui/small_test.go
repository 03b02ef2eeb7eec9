package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/style"
)

// menuBarReserve is the height the desktop driver's menu bar takes above
// the content on Linux (the test window draws none): 36 px with this theme
// in the screenshots, rounded up.
const menuBarReserve = 40

// placed is a button and where it is drawn in the window; inScroll says
// it lies in a scrolled area (which may hold it out of view).
type placed struct {
	b        *widget.Button
	pos      fyne.Position
	inScroll bool
}

// buttonsIn lists the visible buttons under o with their window positions
// (an entry's drop-down button, the entry's to lay out, left out).
func buttonsIn(o fyne.CanvasObject) []placed {
	scrolled, dropDowns := map[fyne.CanvasObject]bool{}, map[fyne.CanvasObject]bool{}
	uitest.Walk(o, func(x fyne.CanvasObject) {
		switch x := x.(type) {
		case *container.Scroll:
			uitest.Walk(x.Content, func(y fyne.CanvasObject) { scrolled[y] = true })
		case *keys.SelectEntry:
			dropDowns[x.ActionItem] = true
		}
	})
	var out []placed
	uitest.Walk(o, func(x fyne.CanvasObject) {
		if b, ok := x.(*widget.Button); ok && !dropDowns[b] {
			out = append(out, placed{b, fyne.CurrentApp().Driver().AbsolutePositionForObject(b), scrolled[b]})
		}
	})
	return out
}

// TestSmallWindowShowsEveryButton: at 1024×700 and at 1920×1080 with
// FYNE_SCALE=1.5 (1280×720), less the menu bar, the window's minimum size
// fits, and in each tab every button is drawn whole inside the window (none
// cut off or squeezed below its minimum size); the buttons a review needs
// are among them. The review is at its tallest: a staged run (Apply and
// Discard), a filter hiding rows (the bar saying so), a decision and an
// export line, and an edited draft (Reset).
func TestSmallWindowShowsEveryButton(t *testing.T) {
	u, l, w, _ := stagedRun(t)
	v := u.Review()
	f := v.Filter()
	f.Text = "a.txt"
	v.SetFilter(f)
	if hiddenText(v) == "" {
		t.Fatal("the filter hides nothing")
	}
	v.SetDecision("Rejected: recorded on run 1.", style.FailColor)
	v.SetExported("/tmp/somewhere/diffgate-report.html", "")
	v.Editor().SetText("logs/\nbuild/\n") // an edited draft: Reset shows
	showHistory(t, u, l)
	want := map[*container.TabItem][]string{
		u.runItem:     {"Run through the gate", "Cancel", "Browse…", "Load demo", "Writable folders…"},
		u.reviewItem:  {"Approve allowlist", "Reject", "Apply 1 change", "Discard", "HTML", "Markdown", "JSON", "Open folder", "Clear", "Suggest allowlist", "Reset"},
		u.historyItem: {"Open in Review", "Refresh"},
	}
	for _, screen := range []struct {
		name string
		size fyne.Size
	}{{"1024×700", fyne.NewSize(1024, 700)}, {"1920×1080 at 1.5×", fyne.NewSize(1280, 720)}} {
		avail := screen.size.Subtract(fyne.NewSize(0, menuBarReserve))
		for _, tab := range []*container.TabItem{u.runItem, u.reviewItem, u.historyItem} {
			u.Tabs.Select(tab)
			w.Resize(avail)
			// The window pads its content on each side.
			if m := w.Content().MinSize().Add(fyne.NewSquareSize(2 * theme.Padding())); m.Width > avail.Width || m.Height > avail.Height {
				t.Errorf("%s, %s tab: the window needs %v, more than %v (the tab's content %v)", screen.name, tab.Text, m, avail, tab.Content.MinSize())
			}
			size := w.Canvas().Size()
			seen := map[string]bool{}
			for _, p := range buttonsIn(w.Content()) {
				b := p.b
				seen[b.Text] = true
				if p.inScroll {
					continue
				}
				whole := p.pos.X >= 0 && p.pos.Y >= 0 && p.pos.X+b.Size().Width <= size.Width+0.5 && p.pos.Y+b.Size().Height <= size.Height+0.5
				if !whole || b.Size().Width < b.MinSize().Width-0.5 || b.Size().Height < b.MinSize().Height-0.5 {
					t.Errorf("%s, %s tab: %q at %v, %v (min %v), not whole in %v", screen.name, tab.Text, b.Text, p.pos, b.Size(), b.MinSize(), size)
				}
			}
			for _, name := range want[tab] {
				if !seen[name] {
					t.Errorf("%s, %s tab: no %q button shown (%s)", screen.name, tab.Text, name, strings.Join(keysOf(seen), ", "))
				}
			}
		}
	}
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
