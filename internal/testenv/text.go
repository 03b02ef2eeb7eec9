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
