// Package quote makes paths and untrusted text safe to print on a terminal
// or in a report: a path is quoted (Go %q) when printing it raw could
// mislead (Path), free text has its odd bytes and runes escaped (Text), and
// script output is cleaned of escape sequences and control characters
// (Clean).
package quote

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Path prints a path as the CLI does: quoted (Go %q) when it is not
// valid UTF-8, contains a rune that %q escapes (a control character such as
// newline, TAB, ESC, NUL, DEL or a C1 control; a format character such as
// U+202E; any rune strconv.IsPrint rejects other than the space), or starts
// with a double quote (so a quoted path is never ambiguous); raw otherwise.
// A quoted path never puts a raw control character on a terminal.
func Path(p string) string {
	if needsQuote(p) {
		return strconv.Quote(p)
	}
	return p
}

func needsQuote(p string) bool {
	if strings.HasPrefix(p, `"`) || !utf8.ValidString(p) {
		return true
	}
	for _, r := range p {
		if r != ' ' && !strconv.IsPrint(r) {
			return true
		}
	}
	return false
}

// Text returns free text (a message, a command line) with each byte
// that is not valid UTF-8 and each rune Path would quote escaped as %q
// escapes it (\x1b, \t, \u202e, \xff), everything else unchanged.
func Text(s string) string {
	if !needsQuote(strings.TrimPrefix(s, `"`)) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r != ' ' && !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Clean makes untrusted text (script output, a diff read from a report)
// safe to show: invalid UTF-8 becomes U+FFFD, terminal escape sequences are
// dropped, CR LF and lone CR become LF and any other control character but
// tab becomes U+FFFD.
func Clean(s string) string {
	if s == "" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b: // ESC: skip a CSI, OSC or two-byte sequence
			i = SkipEscape(s, i)
			continue
		case c == '\r':
			b.WriteByte('\n')
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
			continue
		case c == '\n' || c == '\t':
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || unicode.IsControl(r) {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// SkipEscape returns the index after the terminal escape sequence that
// starts at s[i] (an ESC): a CSI (ESC [ ... final byte), an OSC (ESC ] ...
// BEL or ESC \), or a two-byte ESC x; the end of s if it is cut short.
func SkipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[': // CSI: parameters and intermediates, then a final byte 0x40-0x7e
		for i++; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
		return i
	case ']': // OSC: up to BEL or ESC \
		for i++; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return i
	}
	return i + 1
}
