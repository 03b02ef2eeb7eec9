package review

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/textdiff"
)

// drawnRows groups the texts drawn in o by row (their y), left to right,
// line numbers (right-aligned) left out; the key is the row's text.
func drawnRows(o fyne.CanvasObject) map[string][]*canvas.Text {
	byY := map[float32][]*canvas.Text{}
	for _, t := range uitest.Texts(o) {
		if t.Alignment != fyne.TextAlignTrailing {
			byY[t.Position().Y] = append(byY[t.Position().Y], t)
		}
	}
	out := map[string][]*canvas.Text{}
	for _, ts := range byY {
		sort.Slice(ts, func(a, b int) bool { return ts[a].Position().X < ts[b].Position().X })
		var b strings.Builder
		for _, t := range ts {
			b.WriteString(t.Text)
		}
		out[b.String()] = ts
	}
	return out
}

// drawnLine returns the texts of the one row reading want.
func drawnLine(t *testing.T, o fyne.CanvasObject, want string) []*canvas.Text {
	t.Helper()
	rows := drawnRows(o)
	if ts, ok := rows[want]; ok {
		return ts
	}
	var all []string
	for k := range rows {
		all = append(all, k)
	}
	sort.Strings(all)
	t.Fatalf("no row reads %q; rows: %q", want, all)
	return nil
}

// rects returns the rectangles drawn in o filled with c.
func rects(o fyne.CanvasObject, c color.Color) []*canvas.Rectangle {
	var out []*canvas.Rectangle
	uitest.Walk(o, func(x fyne.CanvasObject) {
		if r, ok := x.(*canvas.Rectangle); ok && uitest.SameColor(r.FillColor, c) {
			out = append(out, r)
		}
	})
	return out
}

// newDiffWindow shows a DiffView of d in a w x h test window, in the
// diffgate theme's light variant.
func newDiffWindow(t *testing.T, d string, w, h float32) (*DiffView, fyne.Window) {
	t.Helper()
	a := test.NewTempApp(t)
	a.Settings().SetTheme(lightOnly{}) // opaque tints: the screenshot shows them as they are
	v := NewDiffView()
	win := test.NewTempWindow(t, v)
	win.Resize(fyne.NewSize(w, h))
	v.setDiff(d)
	return v, win
}

// capture renders the window and keeps the PNG in $DIFFGATE_SHOT_DIR.
func capture(t *testing.T, w fyne.Window, name string) image.Image {
	t.Helper()
	img := w.Canvas().Capture()
	if dir := os.Getenv("DIFFGATE_SHOT_DIR"); dir != "" {
		if f, err := os.Create(filepath.Join(dir, name+".png")); err == nil {
			png.Encode(f, img)
			f.Close()
		}
	}
	return img
}

// countColor counts the pixels of img within 2 of c on every channel.
func countColor(img image.Image, c color.Color) int {
	cr, cg, cb, _ := c.RGBA()
	near := func(a, b uint32) bool { d := int(a>>8) - int(b>>8); return d >= -2 && d <= 2 }
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r, cr) && near(g, cg) && near(bl, cb) {
				n++
			}
		}
	}
	return n
}

// wordDiff is a diff of a changed word, a trailing space removed, CRLF
// turned into LF and spaces turned into a tab.
func wordDiff(t *testing.T) string {
	before := "host = \"api.example.com\"\nname = x \none\r\n    y()\n"
	after := "host = \"10.0.0.5\"\nname = x\none\n\ty()\n"
	d, ok := textdiff.Lines([]byte(before), []byte(after), "x.conf")
	if !ok {
		t.Fatal("no diff")
	}
	return d
}

// The changed words of an edited line are drawn on their own tint, in the
// screenshot too; changed whitespace is drawn as muted markers, so that a
// trailing space or a CRLF -> LF change never shows two identical lines.
func TestDiffViewWordHighlights(t *testing.T) {
	v, w := newDiffWindow(t, wordDiff(t), 900, 400)
	addWord, delWord := themeColor(style.ColorNameAddedWordBackground), themeColor(style.ColorNameRemovedWordBackground)

	add := drawnLine(t, v, `+host = "10.0.0.5"`)
	var word *canvas.Text
	for _, tx := range add {
		if tx.Text == "10.0.0.5" {
			word = tx
		}
	}
	if word == nil {
		t.Fatalf("the changed word is not a text of its own: %d pieces", len(add))
	}
	covered := false
	for _, r := range rects(v, addWord) {
		if r.Position().X <= word.Position().X && r.Position().X+r.Size().Width >= word.Position().X+8*v.content.charWidth()-1 &&
			r.Position().Y <= word.Position().Y && r.Position().Y+r.Size().Height >= word.Position().Y+1 {
			covered = true
		}
	}
	if !covered {
		t.Error("no added-word tint behind 10.0.0.5")
	}
	if n := len(rects(v, delWord)); n < 3 {
		t.Errorf("%d removed-word tints, want the word, the space, the CR and the indentation", n)
	}

	// Whitespace markers, muted, in the changed lines only (a tab's arrow
	// is drawn alone, the rest of its room left blank).
	muted := themeColor(style.Muted)
	for row, marks := range map[string]string{"-name = x·": "·", `-one\r`: `\r`, "-····y()": "····", "+→y()": "→"} {
		var got string
		for _, tx := range drawnLine(t, v, row) {
			if uitest.SameColor(tx.Color, muted) {
				got += tx.Text
			}
		}
		if got != marks {
			t.Errorf("%q: muted markers %q, want %q", row, got, marks)
		}
	}
	for _, row := range []string{"+name = x", "+one"} {
		if ts := drawnLine(t, v, row); len(ts) != 1 {
			t.Errorf("%q is drawn in %d pieces, want 1 (nothing to mark)", row, len(ts))
		}
	}

	img := capture(t, w, "diffview-words")
	if n := countColor(img, addWord); n < 8*7*12 {
		t.Errorf("%d pixels of the added-word tint in the screenshot", n)
	}
	if n := countColor(img, delWord); n < 15*7*12 {
		t.Errorf("%d pixels of the removed-word tint in the screenshot", n)
	}
}

// A one-line edit of a 40 KiB minified file: both lines are there (the
// report keeps 4 KiB of each and says so in a cut line), the cut lines
// carry no line numbers, no drawn text is longer than the view, and
// scrolling right reaches the end of the line.
func TestDiffViewLongLines(t *testing.T) {
	line := strings.Repeat("var a=1;function f(){return a+1};", 40<<10/34)
	d, ok := textdiff.Lines([]byte(line+"\n"), []byte(strings.Replace(line, "a+1", "a+2", 1)+"\n"), "app.min.js")
	if !ok {
		t.Fatal("no diff")
	}
	v, w := newDiffWindow(t, d, 800, 300)
	var add, del int
	for _, l := range v.Lines() {
		switch l.Kind {
		case LineAdded:
			add++
			if !strings.HasPrefix(l.Text, "+var a=1;function f(){return a+2}") {
				t.Errorf("added line %.40q", l.Text)
			}
		case LineRemoved:
			del++
		case LineCut:
			if l.Old != 0 || l.New != 0 {
				t.Errorf("cut line numbered %d/%d", l.Old, l.New)
			}
		}
	}
	if add != 1 || del != 1 {
		t.Fatalf("%d added, %d removed lines", add, del)
	}
	cols := int(800/v.content.charWidth()) + 2
	for _, tx := range uitest.Texts(v) {
		if n := len([]rune(tx.Text)); n > cols {
			t.Errorf("a text of %d characters is drawn (the view holds %d)", n, cols)
		}
	}
	shown := false
	for row := range drawnRows(v) {
		shown = shown || strings.HasPrefix(row, "+var a=1;function f(){return a+2};var a=1;")
	}
	if !shown {
		t.Errorf("the added line is not drawn: %s", uitest.AllText(v))
	}
	// Only the removed and the added line are numbered, not the cut lines.
	var numbers []string
	for _, tx := range uitest.Texts(v) {
		if tx.Alignment == fyne.TextAlignTrailing && tx.Text != "" {
			numbers = append(numbers, tx.Text)
		}
	}
	if strings.Join(numbers, " ") != "1 1" {
		t.Errorf("line numbers drawn: %q, want the removed and the added line's", numbers)
	}
	v.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEnd})
	v.ScrollTo(fyne.NewPos(v.content.MinSize().Width, 0))
	var tail string
	for _, l := range v.Lines() {
		if l.Kind == LineRemoved {
			tail = l.Text[len(l.Text)-30:]
		}
	}
	end := false
	for row := range drawnRows(v) {
		end = end || strings.HasSuffix(row, tail)
	}
	if !end {
		t.Errorf("scrolled to the right, no row shows a line's end: %q", uitest.AllText(v))
	}
	// The cut lines stay in view: what is left out is always said.
	if n := len(uitest.TextsReading(v, "… cut: the line above is shown around its changes (39732 bytes)")); n != 2 {
		t.Errorf("scrolled to the right, %d cut lines in view, want 2: %q", n, uitest.AllText(v))
	}
	capture(t, w, "diffview-long")
}

// Side by side: the old lines on the left, the new on the right, an edited
// line's two versions on one row (with their word marks); a view too
// narrow for two panes shows the diff unified.
func TestDiffViewSideBySide(t *testing.T) {
	d, ok := textdiff.Lines([]byte("a\nkeep\nold line one\nremoved only\nz\n"), []byte("a\nkeep\ninserted\nnew line one\nz\n"), "f.txt")
	if !ok {
		t.Fatal("no diff")
	}
	v, w := newDiffWindow(t, d, 1000, 400)
	var shown []bool
	v.onSplitShown = func(on bool) { shown = append(shown, on) }
	v.SetSideBySide(true)
	if !v.SideBySideShown() {
		t.Fatal("1000 px: not side by side")
	}
	ys := map[string]float32{}
	xs := map[string]float32{}
	keep := 0 // the context line, on each side
	for _, tx := range uitest.Texts(v) {
		if tx.Alignment != fyne.TextAlignTrailing {
			ys[tx.Text], xs[tx.Text] = tx.Position().Y, tx.Position().X
			if tx.Text == " keep" && tx.Position().X < 500 {
				keep |= 1
			} else if tx.Text == " keep" {
				keep |= 2
			}
		}
	}
	// "old line one" and "new line one" are paired: one row, left and right.
	if ys["-old line one"] == 0 && ys["old"] == 0 {
		t.Fatalf("the removed line is not drawn: %s", uitest.AllText(v))
	}
	yOld, yNew := ys["old"], ys["new"]
	if yOld == 0 || yOld != yNew || xs["old"] >= 500 || xs["new"] < 500 {
		t.Errorf("old (%v, y %v) and new (%v, y %v) are not one row, left and right", xs["old"], yOld, xs["new"], yNew)
	}
	if ys["+inserted"] == yNew || ys["-removed only"] == yNew {
		t.Error("an unpaired line shares the edited line's row")
	}
	if keep != 3 {
		t.Error("the context line is not on both sides")
	}
	capture(t, w, "diffview-split")

	w.Resize(fyne.NewSize(360, 400))
	v.Refresh()
	if v.SideBySideShown() || !v.sideBySide() {
		t.Error("360 px: side by side is still shown (or forgotten)")
	}
	if len(uitest.TextsReading(v, "-removed only")) != 1 {
		t.Errorf("narrow: not unified: %s", uitest.AllText(v))
	}
	if !shown[0] || shown[1] {
		t.Errorf("OnSplitShown calls %v, want shown, then not", shown)
	}
}

// The diff bar's mode toggle: side by side is kept for the next change
// shown, and where the pane is too narrow the button says so (the diff is
// shown unified).
func TestDiffBarSideBySide(t *testing.T) {
	v, w := newTestView(t, DemoReport(), Options{})
	v.Select(indexOf(t, v.Report(), "config.json"))
	test.Tap(v.detail.bar.split)
	if !v.detail.diff.SideBySideShown() || v.detail.bar.split.Text != "Side by side" {
		t.Fatalf("1400 px: shown %v, button %q", v.detail.diff.SideBySideShown(), v.detail.bar.split.Text)
	}
	v.Select(indexOf(t, v.Report(), "src/app.py"))
	v.Select(indexOf(t, v.Report(), "config.json"))
	if !v.detail.diff.sideBySide() {
		t.Error("side by side forgotten after another change was shown")
	}
	w.Resize(fyne.NewSize(800, 700))
	v.detail.diff.Refresh()
	if v.detail.diff.SideBySideShown() || v.detail.bar.split.Text != "Side by side: too narrow" {
		t.Errorf("800 px: shown %v, button %q", v.detail.diff.SideBySideShown(), v.detail.bar.split.Text)
	}
	test.Tap(v.detail.bar.unified)
	if v.detail.diff.sideBySide() || v.detail.bar.split.Text != "Side by side" {
		t.Errorf("unified: %v %q", v.detail.diff.sideBySide(), v.detail.bar.split.Text)
	}
}
