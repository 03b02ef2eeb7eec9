// Package count words how many of something there are, the one way every
// front end says it: "1 change", "3 changes", "2 entries", "4,604 unexpected
// changes".
package count

import (
	"fmt"
	"strconv"
	"strings"
)

// Of is n and what, in the plural unless n is 1: "1 change", "3 changes",
// "2 entries", "2 processes".
func Of(n int, what string) string {
	return strconv.Itoa(n) + " " + Word(n, what)
}

// Grouped is Of with the thousands grouped: "3,301 changes".
func Grouped(n int, what string) string {
	return Digits(n) + " " + Word(n, what)
}

// Word is what, in the plural unless n is 1 ("line", "lines", "entries",
// "processes"); an empty what stays empty.
func Word(n int, what string) string {
	switch {
	case n == 1 || what == "":
		return what
	case strings.HasSuffix(what, "y") && !strings.HasSuffix(what, "ay") && !strings.HasSuffix(what, "ey") && !strings.HasSuffix(what, "oy"):
		return what[:len(what)-1] + "ies"
	case strings.HasSuffix(what, "s"), strings.HasSuffix(what, "x"), strings.HasSuffix(what, "sh"), strings.HasSuffix(what, "ch"):
		return what + "es"
	}
	return what + "s"
}

// Digits is n with its thousands grouped by commas: "4,604", "-1,000".
func Digits[T ~int | ~int64](n T) string {
	s := fmt.Sprint(n)
	start := 0
	if strings.HasPrefix(s, "-") {
		start = 1
	}
	for i := len(s) - 3; i > start; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
