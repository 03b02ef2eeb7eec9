//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/quote"
)

// reportTarget is a --report FILE checked before the run (no directory
// handle here: written by path).
type reportTarget struct{ path string }

func openReport(path string) (*reportTarget, error) {
	if err := report.CheckPath(path); err != nil {
		return nil, err
	}
	if err := checkReportWritable(path); err != nil {
		return nil, err
	}
	return &reportTarget{path: path}, nil
}

func (t *reportTarget) write(r *report.Report) error { return r.WriteFile(t.path) }

func (t *reportTarget) close() {}

// checkReportWritable returns an error when a report could not be written
// to path by report.WriteFile: its directory is missing or not writable
// (tried with a temporary file, as WriteFile does), or path is a directory.
func checkReportWritable(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("report %s: is a directory", quote.Path(path))
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".diffgate-report-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("report %s: cannot write in %s: %v", quote.Path(path), quote.Path(dir), err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
