//go:build !js

package ui

import (
	"fmt"
	"image/png"
	"os"
	"time"

	"fyne.io/fyne/v2"

	"github.com/diffgate/diffgate/core/report"
)

// screenshotTimeout bounds --screenshot mode.
const screenshotTimeout = 2 * time.Minute

// startScreenshot runs the demo through the gate once the window is up,
// opens the result in the review view on the config.json diff, captures the
// window to path and quits (exit code 0 on success).
func (u *UI) startScreenshot(path string) {
	u.exitCode = 1
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "diffgate-app: screenshot:", err)
		u.app.Quit()
	}
	u.onRunDone = func(r *report.Report, err error) {
		u.onRunDone = nil
		if err != nil {
			fail(err)
			return
		}
		// Show the most telling change: the edited config with its diff.
		for i := range r.Changes {
			if c := &r.Changes[i]; c.TextDiff != "" && !c.Allowed {
				u.review.Select(i)
				break
			}
		}
		time.AfterFunc(900*time.Millisecond, func() {
			fyne.Do(func() {
				if err := writePNG(path, u.win); err != nil {
					fail(err)
					return
				}
				u.exitCode = 0
				u.app.Quit()
			})
		})
	}
	u.app.Lifecycle().SetOnStarted(func() {
		d, err := u.demo()
		if err != nil {
			fail(err)
			return
		}
		u.run.setInputs(d.Workspace, d.Script, d.Allowlist)
		u.run.start()
	})
	time.AfterFunc(screenshotTimeout, func() {
		fyne.Do(func() { fail(fmt.Errorf("no result after %s", screenshotTimeout)) })
	})
}

func writePNG(path string, w fyne.Window) error {
	img := w.Canvas().Capture()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
