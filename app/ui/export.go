//go:build !js

package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/oneline"
)

// prefExportDir is where the last export was saved.
const prefExportDir = "export.dir"

// export asks where to save r in format f, starting in the report's
// workspace (else where the last export went), writes it off the UI
// goroutine and says in the review where it went, or why it did not.
func (u *UI) export(r *report.Report, f review.Format) {
	start := r.Workspace
	if startDir(start) == "" {
		start = u.app.Preferences().String(prefExportDir)
	}
	saveFile(u.win, start, f.FileName(r), string(f), "Export report as "+f.Label(), func(path string) {
		go func() {
			err := writeExport(path, r, f)
			u.do(func() {
				if err != nil {
					u.log.Warn().Err(err).Str("path", path).Msg("export")
					u.review.SetExported(path, oneline.Flat(err.Error()))
					return
				}
				u.app.Preferences().SetString(prefExportDir, filepath.Dir(path))
				u.review.SetExported(path, "")
			})
		}()
	})
}

func writeExport(path string, r *report.Report, f review.Format) error {
	return createFile(path, func(w io.Writer) error { return f.Write(r, w) })
}

// createFile creates (or truncates) the file at path and writes it with
// write; a write or close that fails is the error.
func createFile(path string, write func(io.Writer) error) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(file); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// openTimeout bounds how long the app waits for the file manager's
// launcher to say whether it failed (the launcher itself may go on).
const openTimeout = time.Minute

// openFolder shows the folder holding path in the system's file manager.
// The launcher runs off the UI goroutine; when it fails, the review's
// export line says so in one line.
func (u *UI) openFolder(path string) {
	dir := filepath.Dir(path)
	opener := u.opts.folderOpener
	if opener == nil {
		opener = folderCommand
	}
	cmd := opener(dir)
	go func() {
		err := runOpener(cmd)
		if err == nil {
			return
		}
		u.log.Warn().Err(err).Str("dir", dir).Msg("open folder") // the launcher's own words
		u.do(func() { u.review.SetExportProblem(openerProblem(cmd, err)) })
	}()
}

// folderCommand is the platform's command to show dir in a file manager.
func folderCommand(dir string) *exec.Cmd {
	switch runtime.GOOS {
	case "darwin":
		return exec.Command("open", dir)
	case "windows":
		return exec.Command("explorer", dir)
	default:
		return exec.Command("xdg-open", dir)
	}
}

// runOpener runs a launcher and waits (bounded) for it: its error, with the
// first line of what it printed, when it could not start or failed.
// explorer.exe exits 1 on success, so on Windows only a start counts.
func runOpener(cmd *exec.Cmd) error {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &limitedBuffer{b: &out, n: 4 << 10}
	cmd.WaitDelay = 2 * time.Second // a file manager that keeps stderr open
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		return nil // still running: it started, that is all we can tell
	}
	var ee *exec.ExitError
	if err == nil || runtime.GOOS == "windows" && errors.As(err, &ee) {
		return nil
	}
	if line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n"); line != "" {
		return fmt.Errorf("%s: %w (%s)", filepath.Base(cmd.Path), err, line)
	}
	return fmt.Errorf("%s: %w", filepath.Base(cmd.Path), err)
}

// openerProblem says in one plain line why the folder did not open; the
// launcher's own output goes to the log only.
func openerProblem(cmd *exec.Cmd, err error) string {
	name := filepath.Base(cmd.Args[0])
	var ee *exec.ExitError
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return "Could not open the folder: " + name + " is not installed."
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return fmt.Sprintf("Could not open the folder: no file manager is set up to open it (%s exited with %d).", name, ee.ExitCode())
	}
	return "Could not open the folder: " + name + " did not start."
}

// limitedBuffer keeps the first n bytes written to it.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
