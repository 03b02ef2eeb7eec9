// Package uitest finds and works the widgets of a Fyne object tree for the
// tests of app/review, app/ui and app/web: it walks what is drawn (into
// containers and widget renderers) and finds objects by type, by drawn
// text, by a button's text or by a field's placeholder, so that a test
// needs no exported accessor of the package it tests. Only tests import it
// (arch_test.go holds the rule).
package uitest

import (
	"image/color"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// Walk visits every visible object drawn under o, o first, descending into
// containers and into widgets through their renderers.
func Walk(o fyne.CanvasObject, visit func(fyne.CanvasObject)) {
	if o == nil || !o.Visible() {
		return
	}
	visit(o)
	switch x := o.(type) {
	case *fyne.Container:
		for _, c := range x.Objects {
			Walk(c, visit)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(x).Objects() {
			Walk(c, visit)
		}
	}
}

// All returns the visible objects of type T under o that match (every one
// when match is nil), in walk order.
func All[T any](o fyne.CanvasObject, match func(T) bool) []T {
	var out []T
	Walk(o, func(c fyne.CanvasObject) {
		if x, ok := c.(T); ok && (match == nil || match(x)) {
			out = append(out, x)
		}
	})
	return out
}

// Find returns the last visible object of type T under o that matches
// (the innermost, for a walk visits outer objects first), failing the test
// when there is none; what names it in the message.
func Find[T any](t testing.TB, o fyne.CanvasObject, what string, match func(T) bool) T {
	t.Helper()
	all := All(o, match)
	if len(all) == 0 {
		t.Fatalf("no %s; texts: %s", what, AllText(o))
	}
	return all[len(all)-1]
}

// Texts returns the canvas texts drawn under o.
func Texts(o fyne.CanvasObject) []*canvas.Text { return All[*canvas.Text](o, nil) }

// TextsReading returns the canvas texts drawn under o that read s.
func TextsReading(o fyne.CanvasObject, s string) []*canvas.Text {
	return All(o, func(t *canvas.Text) bool { return t.Text == s })
}

// Drawn reports whether a text drawn under o reads s.
func Drawn(o fyne.CanvasObject, s string) bool { return len(TextsReading(o, s)) > 0 }

// OneText fails unless exactly one text drawn under o reads s.
func OneText(t testing.TB, o fyne.CanvasObject, s string) *canvas.Text {
	t.Helper()
	found := TextsReading(o, s)
	if len(found) != 1 {
		t.Fatalf("want one rendered text %q, found %d; texts: %s", s, len(found), AllText(o))
	}
	return found[0]
}

// DrawnText is every text drawn under o, one a line.
func DrawnText(o fyne.CanvasObject) string {
	var b strings.Builder
	for _, tx := range Texts(o) {
		b.WriteString(tx.Text + "\n")
	}
	return b.String()
}

// AllText is the non-blank texts drawn under o, joined by " | " (for
// failure messages).
func AllText(o fyne.CanvasObject) string {
	var b []string
	for _, t := range Texts(o) {
		if strings.TrimSpace(t.Text) != "" {
			b = append(b, t.Text)
		}
	}
	return strings.Join(b, " | ")
}

// WidgetText is the text of every label and rich text under o, one a line.
func WidgetText(o fyne.CanvasObject) string {
	var b strings.Builder
	Walk(o, func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Label:
			b.WriteString(x.Text + "\n")
		case *widget.RichText:
			b.WriteString(RichString(x) + "\n")
		}
	})
	return b.String()
}

// RichString is the text of a rich text's segments.
func RichString(t *widget.RichText) string {
	var b strings.Builder
	for _, s := range t.Segments {
		b.WriteString(s.Textual())
	}
	return b.String()
}

// RichTextWhere returns the text of the first rich text under o whose
// text matches ("" when none does).
func RichTextWhere(o fyne.CanvasObject, match func(string) bool) string {
	for _, rt := range All[*widget.RichText](o, nil) {
		if s := RichString(rt); match(s) {
			return s
		}
	}
	return ""
}

// Button returns the visible button under o whose text is s, failing the
// test when there is none.
func Button(t testing.TB, o fyne.CanvasObject, s string) *widget.Button {
	t.Helper()
	return Find(t, o, "button "+s, func(b *widget.Button) bool { return b.Text == s })
}

// ButtonWithPrefix returns the visible button under o whose text starts
// with prefix, failing the test when there is none.
func ButtonWithPrefix(t testing.TB, o fyne.CanvasObject, prefix string) *widget.Button {
	t.Helper()
	return Find(t, o, "button "+prefix+"…", func(b *widget.Button) bool { return strings.HasPrefix(b.Text, prefix) })
}

// HasButton reports whether a visible button under o reads s.
func HasButton(o fyne.CanvasObject, s string) bool {
	return len(All(o, func(b *widget.Button) bool { return b.Text == s })) > 0
}

// Tap taps the visible button under o whose text is s.
func Tap(t testing.TB, o fyne.CanvasObject, s string) {
	t.Helper()
	test.Tap(Button(t, o, s))
}

// TapMenuItem taps the item of the top overlay of c (a pop-up menu) whose
// label contains s.
func TapMenuItem(t testing.TB, c fyne.Canvas, s string) {
	t.Helper()
	top := c.Overlays().Top()
	if top == nil {
		t.Fatal("no popup menu is shown")
	}
	var hit fyne.Tappable
	// Pre-order walk: the last tappable holding the label is the innermost
	// (the menu item, not the popup around it).
	Walk(top, func(o fyne.CanvasObject) {
		tp, ok := o.(fyne.Tappable)
		if !ok {
			return
		}
		for _, tx := range Texts(o) {
			if strings.Contains(tx.Text, s) {
				hit = tp
				return
			}
		}
	})
	if hit == nil {
		t.Fatalf("no menu item %q in %q", s, AllText(top))
	}
	test.Tap(hit)
}

// SameColor reports whether a and b are the same color (both nil counts).
func SameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == b
	}
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}
