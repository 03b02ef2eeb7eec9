package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/diffgate/diffgate/internal/quote"
)

// Formats maps a report file extension to its writer.
var Formats = map[string]func(*Report, io.Writer) error{
	".json": (*Report).WriteJSON,
	".html": (*Report).WriteHTML,
	".htm":  (*Report).WriteHTML,
	".md":   (*Report).WriteMarkdown,
}

// CheckPath returns an error when path's extension names no known format.
func CheckPath(path string) error {
	if _, ok := Formats[strings.ToLower(filepath.Ext(path))]; !ok {
		return fmt.Errorf("report %s: unknown format (want .json, .html or .md)", quote.Path(path))
	}
	return nil
}

// WriteFile writes the report to path in the format its extension names,
// atomically (a temporary file renamed into place).
func (r *Report) WriteFile(path string) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	write := Formats[strings.ToLower(filepath.Ext(path))]
	f, err := os.CreateTemp(filepath.Dir(path), ".diffgate-report-*")
	if err != nil {
		return fmt.Errorf("report %s: %w", quote.Path(path), err)
	}
	defer os.Remove(f.Name())
	if err := write(r, f); err != nil {
		f.Close()
		return fmt.Errorf("report %s: %w", quote.Path(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report %s: %w", quote.Path(path), err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
