package textdiff

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
)

func TestTextDiffChanged(t *testing.T) {
	before := "a\nb\nc\nd\ne\nf\ng\nh\n"
	after := "a\nb\nc\nD\ne\nf\ng\nh\ni\n"
	got, ok := Lines([]byte(before), []byte(after), "dir/x.txt")
	if !ok {
		t.Fatal("ok = false for two small text files")
	}
	want := "--- a/dir/x.txt\n+++ b/dir/x.txt\n@@ -1,8 +1,9 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n h\n+i\n"
	if got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
	// The diff is a real patch: applying it to before gives after.
	edits := udiff.Lines(before, after)
	if patched, err := udiff.Apply(before, edits); err != nil || patched != after {
		t.Fatalf("udiff sanity: %q %v", patched, err)
	}
}

func TestTextDiffAddedRemovedAndNoNewline(t *testing.T) {
	got, ok := Lines(nil, []byte("one\ntwo\n"), "new.txt")
	if !ok || got != "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n" {
		t.Fatalf("added: ok=%v\n%s", ok, got)
	}
	got, ok = Lines([]byte("gone\n"), nil, "old.txt")
	if !ok || got != "--- a/old.txt\n+++ b/old.txt\n@@ -1 +0,0 @@\n-gone\n" {
		t.Fatalf("removed: ok=%v\n%s", ok, got)
	}
	got, ok = Lines([]byte("x\n"), []byte("x\ny"), "f")
	if !ok || !strings.Contains(got, "+y\n\\ No newline at end of file\n") {
		t.Fatalf("missing final newline not marked: ok=%v\n%s", ok, got)
	}
}

func TestTextDiffIdentical(t *testing.T) {
	got, ok := Lines([]byte("same\n"), []byte("same\n"), "f")
	if !ok || got != "" {
		t.Fatalf("identical: %q, %v; want \"\", true", got, ok)
	}
	if got, ok := Lines(nil, nil, "empty"); !ok || got != "" {
		t.Fatalf("both empty: %q, %v", got, ok)
	}
}

func TestTextDiffRefusesBinaryAndLarge(t *testing.T) {
	text := []byte("hello\n")
	big := []byte(strings.Repeat("0123456789abcde\n", MaxInput/16)) // exactly the limit
	if len(big) != MaxInput {
		t.Fatalf("test setup: %d bytes", len(big))
	}
	for _, tc := range []struct {
		name          string
		before, after []byte
		ok            bool
	}{
		{"NUL after", text, []byte("hel\x00lo\n"), false},
		{"NUL before", []byte("\x00"), text, false},
		{"invalid UTF-8", text, []byte("caf\xe9\n"), false},
		{"truncated rune", []byte("\xe2\x82"), text, false},
		{"too large after", text, append(append([]byte{}, big...), 'x'), false},
		{"too large before", append(append([]byte{}, big...), '\n'), text, false},
		{"at the limit", big, text, true},
		{"UTF-8 text", []byte("héllo wörld ✓\n"), []byte("héllo wörld ✗\n"), true},
		{"control characters are text", []byte("a\tb\x1b[0m\n"), []byte("a\tb\n"), true},
	} {
		got, ok := Lines(tc.before, tc.after, "f")
		if ok != tc.ok {
			t.Errorf("%s: ok = %v, want %v", tc.name, ok, tc.ok)
		}
		if !ok && got != "" {
			t.Errorf("%s: not ok but returned %q", tc.name, got)
		}
		if ok && got == "" {
			t.Errorf("%s: ok but empty diff", tc.name)
		}
	}
}

// A diff over the limit keeps whole hunks while they fit, then one cut line
// saying how many hunks are left out.
func TestTextDiffCutsWholeHunks(t *testing.T) {
	var fb strings.Builder
	fb.WriteString("--- a/big.txt\n+++ b/big.txt\n")
	for i := 0; fb.Len() < 200<<10; i++ {
		fmt.Fprintf(&fb, "@@ -%d,3 +%d,3 @@\n ctx\n-line %06d ✓\n+edit %06d ✗\n ctx\n", 10*i+1, 10*i+1, i, i)
	}
	full := fb.String()
	got := Cut(full, MaxOutput)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	last := lines[len(lines)-1]
	kept := got[:len(got)-len(last)-1]
	if len(kept) > MaxOutput || len(kept) < MaxOutput-60 {
		t.Fatalf("kept %d bytes, limit %d", len(kept), MaxOutput)
	}
	if !strings.HasPrefix(full, kept) {
		t.Fatal("the kept part is not a prefix of the full diff")
	}
	if rest := full[len(kept):]; !strings.HasPrefix(rest, "@@") {
		t.Fatalf("cut inside a hunk: the rest starts %.40q", rest)
	}
	hunks := strings.Count(full[len(kept):], "\n@@") + 1
	want := fmt.Sprintf("%s cut: %d more hunks not shown (%d bytes)", CutPrefix, hunks, len(full)-len(kept))
	if last != want {
		t.Fatalf("cut line %q, want %q", last, want)
	}
	if !IsCutLine(last) || !utf8.ValidString(got) {
		t.Fatal("not a cut line, or invalid UTF-8")
	}
}

// A one-line edit to a 40 KiB minified file shows the removed AND the added
// line (each cut to MaxLine, the cut marked on a line of its own).
func TestTextDiffLongLineEditShowsBothSides(t *testing.T) {
	line := strings.Repeat("var a=1;function f(){return a+1};", 40<<10/34)
	before := line + "\n"
	after := strings.Replace(line, "a+1", "a+2", 1) + "\n"
	got, ok := Lines([]byte(before), []byte(after), "app.min.js")
	if !ok {
		t.Fatal("ok = false")
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	var del, add, cuts int
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
			del++
			if !strings.HasPrefix(l, "-var a=1;function f(){return a+1}") {
				t.Errorf("removed line starts %.40q", l)
			}
		case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"):
			add++
			if !strings.HasPrefix(l, "+var a=1;function f(){return a+2}") {
				t.Errorf("added line starts %.40q", l)
			}
		case IsCutLine(l):
			cuts++
			if o, n := CutSkips(l); o != 0 || n != 0 || !strings.HasPrefix(lines[i-1], "-") && !strings.HasPrefix(lines[i-1], "+") {
				t.Errorf("cut line %q after %.20q skips %d/%d", l, lines[i-1], o, n)
			}
		}
		if len(l) > MaxLine {
			t.Errorf("line of %d bytes", len(l))
		}
	}
	if del != 1 || add != 1 || cuts != 2 {
		t.Fatalf("%d removed, %d added, %d cut lines:\n%.2000s", del, add, cuts, got)
	}
	if len(got) > MaxOutput {
		t.Fatalf("%d bytes", len(got))
	}
}

// One hunk too large to keep whole keeps the first lines of every run, the
// removed and the added ones, and says how many of each it left out.
func TestCutDiffShrinksOneHunk(t *testing.T) {
	var b, a strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "old %04d\n", i)
		fmt.Fprintf(&a, "new %04d\n", i)
	}
	full := udiff.Unified("a/f", "b/f", b.String(), a.String())
	got := Cut(full, 4<<10)
	if len(got) > 4<<10 {
		t.Fatalf("%d bytes", len(got))
	}
	if !strings.Contains(got, "\n-old 0000\n") || !strings.Contains(got, "\n+new 0000\n") {
		t.Fatalf("a side is missing:\n%s", got)
	}
	var skipOld, skipNew, del, add int
	for _, l := range strings.Split(got, "\n") {
		o, n := CutSkips(l)
		skipOld, skipNew = skipOld+o, skipNew+n
		if strings.HasPrefix(l, "-old") {
			del++
		}
		if strings.HasPrefix(l, "+new") {
			add++
		}
	}
	if del+skipOld != 5000 || add+skipNew != 5000 || del != add {
		t.Fatalf("kept %d-/%d+, cut %d-/%d+:\n%s", del, add, skipOld, skipNew, got)
	}
	if Cut("short\n", 64) != "short\n" {
		t.Fatal("a short diff was changed")
	}
}

func TestTextDiffQuotesOddNames(t *testing.T) {
	got, ok := Lines([]byte("a\n"), []byte("b\n"), "evil\n+++ b/x\xff")
	if !ok {
		t.Fatal("ok = false")
	}
	lines := strings.Split(got, "\n")
	if lines[0] != `--- a/evil\n+++ b/x\xff` || lines[1] != `+++ b/evil\n+++ b/x\xff` || lines[2] != "@@ -1 +1 @@" {
		t.Fatalf("headers not quoted:\n%s", got)
	}
	if !utf8.ValidString(got) {
		t.Fatal("diff with an invalid UTF-8 name is not valid UTF-8")
	}
}

// The worst case at the input limit (every line differs) must stay fast:
// the gate calls Lines for every changed text file.
func TestTextDiffWorstCaseIsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	// Many short lines and an insertion after every one of them: a long
	// edit script and many hunks.
	b := strings.Repeat("a\n", MaxInput/2)
	a := strings.Repeat("a\nb\n", MaxInput/4)
	start := time.Now()
	got, ok := Lines([]byte(b), []byte(a), "f")
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("took %v", el)
	}
	if !ok || !strings.Contains(got, "\n"+CutPrefix+" cut: ") {
		t.Fatalf("ok=%v, cut=%v", ok, strings.Contains(got, CutPrefix))
	}
}
