//go:build !unix

package main

import "github.com/diffgate/diffgate/core/report"

// reportTarget is a --report FILE checked before the run (no directory
// handle here: written by path).
type reportTarget struct{ path string }

func openReport(path string) (*reportTarget, error) {
	if err := report.CheckPath(path); err != nil {
		return nil, err
	}
	if err := report.CheckWritable(path); err != nil {
		return nil, err
	}
	return &reportTarget{path: path}, nil
}

func (t *reportTarget) write(r *report.Report) error { return r.WriteFile(t.path) }

func (t *reportTarget) close() {}
