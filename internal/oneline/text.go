// Package oneline holds the few ways diffgate puts a message on one line, so
// that each is written once: the first line of a text, a text with its
// whitespace flattened, and an error's reason without the path.
package oneline

import (
	"errors"
	"io/fs"
	"strings"
)

// First is s up to its first line break (LF or CR).
func First(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// Flat is s on one line: every run of whitespace, line breaks included,
// becomes one space, and none leads or trails.
func Flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// Reason is err's message without the operation and path an
// *fs.PathError adds, on one line: "permission denied", "no such file or
// directory".
func Reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file or directory"
	}
	return First(err.Error())
}
