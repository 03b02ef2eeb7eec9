package report

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
	got, ok := TextDiff([]byte(before), []byte(after), "dir/x.txt")
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
	got, ok := TextDiff(nil, []byte("one\ntwo\n"), "new.txt")
	if !ok || got != "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n" {
		t.Fatalf("added: ok=%v\n%s", ok, got)
	}
	got, ok = TextDiff([]byte("gone\n"), nil, "old.txt")
	if !ok || got != "--- a/old.txt\n+++ b/old.txt\n@@ -1 +0,0 @@\n-gone\n" {
		t.Fatalf("removed: ok=%v\n%s", ok, got)
	}
	got, ok = TextDiff([]byte("x\n"), []byte("x\ny"), "f")
	if !ok || !strings.Contains(got, "+y\n\\ No newline at end of file\n") {
		t.Fatalf("missing final newline not marked: ok=%v\n%s", ok, got)
	}
}

func TestTextDiffIdentical(t *testing.T) {
	got, ok := TextDiff([]byte("same\n"), []byte("same\n"), "f")
	if !ok || got != "" {
		t.Fatalf("identical: %q, %v; want \"\", true", got, ok)
	}
	if got, ok := TextDiff(nil, nil, "empty"); !ok || got != "" {
		t.Fatalf("both empty: %q, %v", got, ok)
	}
}

func TestTextDiffRefusesBinaryAndLarge(t *testing.T) {
	text := []byte("hello\n")
	big := []byte(strings.Repeat("0123456789abcde\n", MaxTextDiffInput/16)) // exactly the limit
	if len(big) != MaxTextDiffInput {
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
		got, ok := TextDiff(tc.before, tc.after, "f")
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

func TestTextDiffTruncates(t *testing.T) {
	var b, a strings.Builder
	for i := 0; b.Len() < 200<<10; i++ {
		fmt.Fprintf(&b, "before line %06d ✓\n", i)
		fmt.Fprintf(&a, "after  line %06d ✗\n", i)
	}
	full := udiff.Unified("a/big.txt", "b/big.txt", b.String(), a.String())
	if len(full) <= MaxTextDiffOutput {
		t.Fatalf("test setup: full diff only %d bytes", len(full))
	}
	got, ok := TextDiff([]byte(b.String()), []byte(a.String()), "big.txt")
	if !ok {
		t.Fatal("ok = false")
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, TruncatedMarker) {
		t.Fatalf("last line %q does not start with %q", last, TruncatedMarker)
	}
	kept := got[:len(got)-len(last)-1]
	if len(kept) > MaxTextDiffOutput {
		t.Fatalf("kept %d bytes, limit %d", len(kept), MaxTextDiffOutput)
	}
	if len(kept) < MaxTextDiffOutput-200 {
		t.Fatalf("kept only %d bytes of %d allowed", len(kept), MaxTextDiffOutput)
	}
	if !strings.HasPrefix(full, kept) || !strings.HasSuffix(kept, "\n") {
		t.Fatal("the kept part is not a line-aligned prefix of the full diff")
	}
	omittedLines := strings.Count(full[len(kept):], "\n")
	wantLast := fmt.Sprintf("%s: %d more diff lines (%d bytes) not shown", TruncatedMarker, omittedLines, len(full)-len(kept))
	if last != wantLast {
		t.Fatalf("marker %q, want %q", last, wantLast)
	}
	if !utf8.ValidString(got) {
		t.Fatal("truncated diff is not valid UTF-8")
	}
}

func TestTruncateDiffOneHugeLine(t *testing.T) {
	d := strings.Repeat("é", 100) // 200 bytes, no newline
	got := truncateDiff(d, 51)    // 51 falls inside a rune
	if !utf8.ValidString(got) {
		t.Fatalf("cut inside a rune: %q", got)
	}
	first, rest, _ := strings.Cut(got, "\n")
	if first != strings.Repeat("é", 25) {
		t.Fatalf("kept %q", first)
	}
	if !strings.HasPrefix(rest, TruncatedMarker+": 1 more diff lines (150 bytes)") {
		t.Fatalf("marker %q", rest)
	}
	if truncateDiff("short\n", 64) != "short\n" {
		t.Fatal("a short diff was changed")
	}
}

func TestTextDiffQuotesOddNames(t *testing.T) {
	got, ok := TextDiff([]byte("a\n"), []byte("b\n"), "evil\n+++ b/x\xff")
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
// the gate calls TextDiff for every changed text file.
func TestTextDiffWorstCaseIsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	// Many short lines and an insertion after every one of them: a long
	// edit script and many hunks.
	b := strings.Repeat("a\n", MaxTextDiffInput/2)
	a := strings.Repeat("a\nb\n", MaxTextDiffInput/4)
	start := time.Now()
	got, ok := TextDiff([]byte(b), []byte(a), "f")
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("took %v", el)
	}
	if !ok || !strings.Contains(got, TruncatedMarker) {
		t.Fatalf("ok=%v, truncated=%v", ok, strings.Contains(got, TruncatedMarker))
	}
}
