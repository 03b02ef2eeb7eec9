package testenv

import (
	"fmt"
	"strings"
)

// NumberedLines is a text file of n numbered lines of 52 bytes each
// ("0061234 the quick brown fox jumps over the lazy dog"): 110,000 lines
// make a 5.5 MiB file, too large for a kept copy, whose line 61,235 a test
// edits with sed 's/^0061234 the quick/0061234 the QUICK/'.
func NumberedLines(n int) string {
	var b strings.Builder
	b.Grow(52 * n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%07d the quick brown fox jumps over the lazy dog\n", i)
	}
	return b.String()
}

// GoSource is a Go file of n one-line functions ("func Fxx() int { return
// c }"), alike enough line by line for tests of rename and diff similarity.
func GoSource(n int) string {
	var b strings.Builder
	b.WriteString("package util\n\n")
	for i := 0; i < n; i++ {
		b.WriteString("func F" + strings.Repeat("x", i%7) + "() int { return " + string(rune('a'+i%26)) + " }\n")
	}
	return b.String()
}
