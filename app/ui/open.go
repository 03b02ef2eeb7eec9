//go:build !js

package ui

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/oneline"
)

// maxReportFile bounds a report file the app reads (a 5,000-change report
// is a few MB).
const maxReportFile = 512 << 20

// sniffSize is how much of a dropped file is read to tell a report from a
// script: a report's schema is its first field.
const sniffSize = 4 << 10

// chooseReport asks for a report file (File ▸ Open report…, Ctrl+O),
// starting in the folder of the last one opened, else the workspace.
func (u *UI) chooseReport() {
	start := u.app.Preferences().String(prefReportDir)
	if !exists(start) {
		start = u.run.workspace.Text
	}
	pickFile(u.win, start, "Open a diffgate report (JSON)", "json", u.openReportFile)
}

// dropped takes files and folders dropped on the window: a file that is a
// diffgate report opens in the review, a folder becomes the workspace and
// any other file the script (see runTab.dropped).
func (u *UI) dropped(uris []fyne.URI) {
	var rest []fyne.URI
	for _, uri := range uris {
		if p := uri.Path(); isReportFile(p) {
			u.openReportFile(p)
			continue
		}
		rest = append(rest, uri)
	}
	if len(rest) > 0 {
		u.Tabs.Select(u.runItem)
		u.run.dropped(rest)
	}
}

// isReportFile reports whether path is a regular file that starts as a
// diffgate JSON report does (an object naming a diffgate.report schema). A
// truncated or damaged report still counts: opening it says what is wrong.
func isReportFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	head, _ := io.ReadAll(io.LimitReader(f, sniffSize))
	head = bytes.TrimSpace(head)
	return len(head) > 0 && head[0] == '{' && bytes.Contains(head, []byte(`"diffgate.report/`))
}

// openReportFile reads and parses a JSON report off the UI goroutine and
// shows it in the review tab; a newer open wins over a slower older one. A
// file that cannot be read or is not a report is one line in an error
// dialog.
func (u *UI) openReportFile(path string) {
	u.loadReport(path, func(_ *report.Report, err error) {
		if err != nil {
			dialog.ShowError(errors.New(oneline.Flat(err.Error())), u.win)
		}
	})
}

// loadReport is openReportFile with what to do once the report is shown
// (or why it is not), on the UI goroutine; a superseded open calls nothing.
func (u *UI) loadReport(path string, done func(*report.Report, error)) {
	u.openN++
	gen := u.openN
	go func() {
		r, err := readReport(path)
		u.do(func() {
			if gen != u.openN || u.closed {
				return
			}
			if err != nil {
				u.log.Warn().Err(err).Str("path", path).Msg("open report")
				done(nil, err)
				return
			}
			u.app.Preferences().SetString(prefReportDir, filepath.Dir(path))
			u.reviewID = 0
			u.showReview(r)
			done(r, nil)
		})
	}()
}

// readReport reads the report at path: bounded, parsed, every error one line
// naming the file.
func readReport(path string) (*report.Report, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot open %s: %v", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, fmt.Errorf("cannot open %s: %v", name, err)
	case st.IsDir():
		return nil, fmt.Errorf("cannot open %s: it is a folder, not a report", name)
	case st.Size() > maxReportFile:
		return nil, fmt.Errorf("cannot open %s: %s is larger than a report can be (at most %s)", name, report.Size(st.Size()), report.Size(maxReportFile))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxReportFile+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", name, err)
	}
	r, err := report.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %v", name, err)
	}
	return r, nil
}
