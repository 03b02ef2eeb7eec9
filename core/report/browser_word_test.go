//go:build unix

package report

import (
	"testing"

	"github.com/diffgate/diffgate/internal/browsertest"
)

// In Chromium the changed words are drawn in their own, stronger colour,
// and the whitespace that changed shows its markers (· \r →) over it.
func TestBrowserWordDiff(t *testing.T) {
	b := browsertest.Start(t)
	img, _ := screenshot(t, b, wordReport(), "words", false)
	n := countColours(img, tolerance, map[string]rgb{
		"word +": hexColor(t, colorAddWord), "word -": hexColor(t, colorDelWord),
		"line +": hexColor(t, colorDiffAdd), "line -": hexColor(t, colorDiffDel),
	})
	t.Logf("pixels: %v", n)
	// Each marked word or space is at least a character cell (~7x18 px).
	for _, name := range []string{"word +", "word -"} {
		if n[name] < 4*100 {
			t.Errorf("%d pixels of the %s colour", n[name], name)
		}
	}
	if n["line +"] < 4000 || n["line -"] < 4000 {
		t.Errorf("diff lines: %v", n)
	}

	tab := b.NewTab(t, browsertest.TabOptions{Width: 1200, Height: 900})
	tab.Navigate("file://" + writePage(t, wordReport()))
	type mark struct {
		Marker       string  `json:"marker"`
		Width        float64 `json:"width"`
		Top, LineTop float64
	}
	marks := browsertest.Eval[[]mark](tab, `Array.from(document.querySelectorAll(".dl .ws")).map(e => ({
		marker: getComputedStyle(e, "::before").content, width: e.getBoundingClientRect().width,
		Top: e.getBoundingClientRect().top, LineTop: e.closest(".dl").getBoundingClientRect().top}))`)
	want := map[string]bool{`"·"`: false, `"\\r"`: false, `"····"`: false, `"→"`: false}
	for _, m := range marks {
		if _, ok := want[m.Marker]; ok {
			want[m.Marker] = true
		}
		if m.Width < 4 {
			t.Errorf("whitespace %s is %.1f px wide: its marker has no room", m.Marker, m.Width)
		}
		if d := m.Top - m.LineTop; d > 5 || d < -5 { // within its line (an inline box sits a pixel lower)
			t.Errorf("whitespace %s is drawn %.1f px below its line", m.Marker, m.Top-m.LineTop)
		}
	}
	for m, seen := range want {
		if !seen {
			t.Errorf("no whitespace marker %s drawn (markers %v)", m, marks)
		}
	}
}
