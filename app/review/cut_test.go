package review

import (
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/textdiff"
)

// A one-line edit to a 40 KiB minified file shows the removed and the added
// line; the cut lines get no line numbers, and numbering resumes after a cut
// that skipped numbered lines.
func TestParseUnifiedCutLines(t *testing.T) {
	line := strings.Repeat("x=1;", 10<<10)
	d, ok := textdiff.Lines([]byte(line+"\n"), []byte(line+"y\n"), "app.min.js")
	if !ok {
		t.Fatal("no diff")
	}
	var del, add, cut int
	for _, l := range parseUnified(d) {
		switch l.Kind {
		case LineRemoved:
			del++
			if l.Old != 1 {
				t.Errorf("removed line numbered %d", l.Old)
			}
		case LineAdded:
			add++
			if l.New != 1 {
				t.Errorf("added line numbered %d", l.New)
			}
		case LineCut:
			cut++
			if l.Old != 0 || l.New != 0 {
				t.Errorf("cut line %q numbered %d/%d", l.Text, l.Old, l.New)
			}
		case LineContext:
			t.Errorf("context line %.40q", l.Text)
		}
	}
	if del != 1 || add != 1 || cut != 2 {
		t.Fatalf("%d removed, %d added, %d cut", del, add, cut)
	}

	got := parseUnified("@@ -1,10 +1,10 @@\n a\n… cut: 4 more context lines\n-b\n… cut: 2 more removed lines\n+c\n")
	want := [][2]int{{0, 0}, {1, 1}, {0, 0}, {6, 0}, {0, 0}, {0, 6}}
	for i, l := range got {
		if [2]int{l.Old, l.New} != want[i] {
			t.Errorf("line %d %q numbered %d/%d, want %v", i, l.Text, l.Old, l.New, want[i])
		}
	}
}
