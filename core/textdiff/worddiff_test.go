package textdiff

import (
	"fmt"
	"strings"
	"testing"
)

// marked renders a line's text with its spans in [brackets].
func marked(text string, spans []Span) string {
	var b strings.Builder
	at := 0
	for _, s := range spans {
		b.WriteString(text[at:s.Start] + "[" + text[s.Start:s.End] + "]")
		at = s.End
	}
	return b.String() + text[at:]
}

func TestWordDiff(t *testing.T) {
	for _, tc := range []struct{ old, new, wantOld, wantNew string }{
		{`  "debug": false,`, `  "debug": true,`, `  "debug": [false],`, `  "debug": [true],`},
		{"foo ", "foo", "foo[ ]", "foo"},
		{"foo\r", "foo", "foo[\r]", "foo"},
		{"a = 1", "a = 1 + b", "a = 1", "a = 1[ + b]"},
		{"return x", "return y", "return [x]", "return [y]"},
		{"héllo wörld", "héllo welt", "héllo [wörld]", "héllo [welt]"},
		{"same", "same", "same", "same"},
		// Two changed words next to each other read as one change.
		{"one two three", "one 2 3", "one [two three]", "one [2 3]"},
		{`"https://api.example.com",`, `"http://10.0.0.5:8080",`, `"[https://api.example.com]",`, `"[http://10.0.0.5:8080]",`},
		// Common words between changes are not swallowed.
		{"alpha beta gamma delta", "ALPHA beta gamma DELTA", "[alpha] beta gamma [delta]", "[ALPHA] beta gamma [DELTA]"},
	} {
		o, n := Words(tc.old, tc.new)
		if got := marked(tc.old, o); got != tc.wantOld {
			t.Errorf("%q -> %q: old %q, want %q", tc.old, tc.new, got, tc.wantOld)
		}
		if got := marked(tc.new, n); got != tc.wantNew {
			t.Errorf("%q -> %q: new %q, want %q", tc.old, tc.new, got, tc.wantNew)
		}
	}
}

// Removed and added lines are paired by similarity, in order: an inserted
// line does not steal the edited line's partner, and unrelated lines are
// not paired.
func TestIntralinePairs(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(`--- a/x
+++ b/x
@@ -1,4 +1,5 @@
 ctx
-func add(a, b int) int {
-	return a + b
+// add adds.
+func add(a, b, c int) int {
+	return a + b + c
 }
-old unrelated line
+completely different words here
`, "\n"), "\n")
	marks, pair := Intraline(lines)
	want := map[int]int{4: 7, 5: 8, 7: 4, 8: 5}
	for i := range lines {
		if w, ok := want[i]; ok != (pair[i] >= 0) || ok && pair[i] != w {
			t.Errorf("line %d %q paired with %d, want %v", i, lines[i], pair[i], want[i])
		}
	}
	if got := marked(lines[7][1:], marks[7]); got != "func add(a, b[, c] int) int {" {
		t.Errorf("marks %q", got)
	}
	if got := marked(lines[8][1:], marks[8]); got != "\treturn a + b[ + c]" {
		t.Errorf("marks %q", got)
	}
	if marks[6] != nil || marks[11] != nil {
		t.Errorf("unpaired lines marked: %v %v", marks[6], marks[11])
	}
}

// A change split by cut lines (a long line cut, Cut) still pairs its
// removed and added line: the added line of a one-line edit to a minified
// file is marked where it differs.
func TestIntralineAcrossCuts(t *testing.T) {
	line := strings.Repeat("x=1;", 10<<10)
	d, _ := Lines([]byte(line+"\n"), []byte(strings.Replace(line, "x=1;", "y=2;", 1)+"\n"), "app.min.js")
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	marks, pair := Intraline(lines)
	var del, add int
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
			del = i
		case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"):
			add = i
		}
	}
	if pair[del] != add || pair[add] != del {
		t.Fatalf("lines %d and %d not paired: %v", del, add, pair)
	}
	if got := marked(lines[add][1:], marks[add]); !strings.HasPrefix(got, "[y=2];x=1;") {
		t.Errorf("added line marked %.40q", got)
	}
	if got := marked(lines[del][1:], marks[del]); !strings.HasPrefix(got, "[x=1];x=1;") {
		t.Errorf("removed line marked %.40q", got)
	}
}

func TestPiecesShowWhitespace(t *testing.T) {
	show := func(ps []Piece) string {
		var b strings.Builder
		for _, p := range ps {
			s := p.Text
			if p.Space {
				s = VisibleSpace(s)
			}
			if p.Changed {
				s = "[" + s + "]"
			}
			b.WriteString(s)
		}
		return b.String()
	}
	for _, tc := range []struct {
		text  string
		spans []Span
		want  string
	}{
		{"foo ", []Span{{3, 4}}, "foo[·]"},
		{"foo\r", []Span{{3, 4}}, "foo[\\r]"},
		{"a b\tc", nil, "a b\tc"},                 // inner whitespace of an unchanged part stays
		{"x = 1  ", nil, "x = 1··"},               // trailing whitespace is shown
		{"\tif x {", []Span{{0, 1}}, "[→]if x {"}, // an indentation change
		{"a  b", []Span{{1, 3}}, "a[··]b"},
		{"crlf\r", nil, "crlf\\r"},
		{"{ return }", []Span{{1, 9}}, "{[ return ]}"}, // a word added: its spaces stay spaces
		{"x  ", []Span{{0, 3}}, "[x][··]"},             // trailing spaces are shown, changed or not
	} {
		if got := show(Pieces(tc.text, tc.spans)); got != tc.want {
			t.Errorf("Pieces(%q, %v) = %q, want %q", tc.text, tc.spans, got, tc.want)
		}
	}
	// The pieces hold the text as it is.
	ps := Pieces("a  b ", []Span{{1, 3}})
	var all string
	for _, p := range ps {
		all += p.Text
	}
	if all != "a  b " {
		t.Errorf("pieces join to %q", all)
	}
}

// Alignment stays bounded for a huge change (in order, no quadratic table).
func TestIntralineLargeChange(t *testing.T) {
	var lines []string
	lines = append(lines, "@@ -1,3000 +1,3000 @@")
	for i := 0; i < 3000; i++ {
		lines = append(lines, fmt.Sprintf("-value %d old", i))
	}
	for i := 0; i < 3000; i++ {
		lines = append(lines, fmt.Sprintf("+value %d new", i))
	}
	_, pair := Intraline(lines)
	if pair[1] != 3001 || pair[3000] != 6000 {
		t.Errorf("in-order pairing: %d %d", pair[1], pair[3000])
	}
}
