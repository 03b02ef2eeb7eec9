package textdiff

import (
	"fmt"
	"strings"
	"testing"
)

// WindowLine keeps each of several changes of a long line, with its
// context, and the same common text on both sides.
func TestWindowLineSeveralChanges(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 40<<10; i++ {
		fmt.Fprintf(&b, "v%d=x%d;", i, i)
	}
	old := b.String()
	cur := strings.Replace(old, "v100=x100;", "v100=A;", 1)
	cur = strings.Replace(cur, "v3000=x3000;", "v3000=B;", 1)
	wa, wb := WindowLine(old, cur, MaxLine)
	for _, want := range []string{"x100;", "x3000;"} {
		if !strings.Contains(wa, want) {
			t.Errorf("old window lacks %q: %s", want, wa)
		}
	}
	for _, want := range []string{"v100=A;", "v3000=B;"} {
		if !strings.Contains(wb, want) {
			t.Errorf("new window lacks %q: %s", want, wb)
		}
	}
	if strings.Count(wa, Ellipsis) != 3 || strings.Count(wb, Ellipsis) != 3 || len(wa) > 600 {
		t.Errorf("windows (%d bytes): %s | %s", len(wa), wa, wb)
	}
	// A line changed everywhere stays within the bound and says what it
	// left out.
	all := strings.ReplaceAll(old, "=x", "=y")
	wa, wb = WindowLine(old, all, MaxLine)
	if len(wa) > MaxLine || len(wb) > MaxLine || !strings.Contains(wa, Ellipsis) {
		t.Errorf("changed everywhere: %d and %d bytes: %.200s", len(wa), len(wb), wa)
	}
}
