// Package bytesize reads a byte count given by the user (--memory 512M,
// DIFFGATE_TEXT_BUDGET=256M); report.Size writes one for people.
package bytesize

import (
	"strconv"
	"strings"
)

// Parse parses a byte count: a whole number of bytes, or one followed
// by K, M or G (KiB, MiB, GiB; "512M"). ok is false for anything else,
// negative or too large.
func Parse(s string) (n int64, ok bool) {
	v := strings.TrimSpace(s)
	if v == "" {
		return 0, false
	}
	mult := int64(1)
	switch strings.ToUpper(v[len(v)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, false
	}
	return n * mult, true
}
