//go:build !js

package ui

import (
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/software"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/core/report"
)

// screenshotTimeout bounds --screenshot mode.
const screenshotTimeout = 2 * time.Minute

// startScreenshot runs the demo (or, with --workspace and --script, that
// script in that workspace, with the allowlist last approved for it in the
// history, if any; or, with --report, opens that report) through the gate
// once the window is up, opens the result in the review view on its most
// telling change (or the --screenshot-* flags' choice), captures the
// window to path and quits (exit code 0 on success).
func (u *UI) startScreenshot(path string) {
	u.exitCode = 1
	shot := u.opts.Flags.Shot
	if shot.Width > 0 {
		u.win.Resize(fyne.NewSize(float32(shot.Width), float32(shot.Height)))
	}
	u.onRunDone = func(r *report.Report, err error) {
		u.onRunDone = nil
		if err != nil {
			u.shotFailed(err)
			return
		}
		u.arrangeShot(r, shot)
		time.AfterFunc(900*time.Millisecond, func() { u.do(func() { u.takeShot(path) }) })
	}
	u.app.Lifecycle().SetOnStarted(func() {
		if shot.Width == 0 {
			u.fitScreen()
		}
		u.startShotRun()
	})
	time.AfterFunc(screenshotTimeout, func() {
		u.do(func() { u.shotFailed(fmt.Errorf("no result after %s", screenshotTimeout)) })
	})
}

// shotFailed ends --screenshot mode with err (exit code 1).
func (u *UI) shotFailed(err error) {
	fmt.Fprintln(os.Stderr, "diffgate-app: screenshot:", err)
	u.Close() // the demo's copy and stage: Quit may end the process before OnStopped
	u.app.Quit()
}

// startShotRun opens --report, or runs --script in --workspace, or the
// demo; onRunDone gets the outcome.
func (u *UI) startShotRun() {
	if f := u.opts.Flags.Report; f != "" {
		u.loadReport(f, func(r *report.Report, err error) {
			if err != nil {
				u.shotFailed(err)
				return
			}
			u.onRunDone(r, nil)
		})
		return
	}
	if f := u.opts.Flags; f.Workspace != "" && f.Script != "" {
		u.run.setInputs(f.Workspace, f.Script, nil)
	} else {
		d, err := u.demo()
		if err != nil {
			u.shotFailed(err)
			return
		}
		u.run.setInputs(d.Workspace, d.Script, d.Allowlist)
	}
	u.run.start()
}

// arrangeShot shows r as shot asks: the most telling change (an edited
// text file with its diff and, for a staged run, the Apply and Discard
// buttons beside it) or the one it selects, on the tab it names.
func (u *UI) arrangeShot(r *report.Report, shot ShotFlags) {
	i := tellingChange(r)
	if shot.Select != "" {
		for k := range r.Changes {
			if r.Changes[k].Path == shot.Select {
				i = k
			}
		}
	}
	if i >= 0 {
		u.review.Select(i)
	}
	switch shot.Tab {
	case ShotRun:
		u.Tabs.Select(u.runItem)
	case ShotHistory:
		u.Tabs.Select(u.historyItem)
	}
	if shot.Split {
		u.review.SetSideBySide(true)
	}
}

// takeShot writes the window to path and quits (exit code 0).
func (u *UI) takeShot(path string) {
	if err := writePNG(path, u.win); err != nil {
		u.shotFailed(err)
		return
	}
	u.exitCode = 0
	u.Close()
	u.app.Quit()
}

// capture grabs the window. Where the GL front buffer cannot be read back
// (Xvfb with software GL returns a blank image) it renders the window's
// content again with Fyne's software painter, at the window's size and
// where the window lays it out: below the menu bar, which the software
// canvas cannot draw, so a stand-in with the menus' titles takes its place.
func capture(w fyne.Window) image.Image {
	img := w.Canvas().Capture()
	if !blank(img) {
		return img
	}
	size := w.Canvas().Size()
	content := w.Content()
	pos, csize := content.Position(), content.Size()
	var titles []fyne.CanvasObject
	if mm := w.MainMenu(); mm != nil {
		for _, m := range mm.Items {
			titles = append(titles, widget.NewLabel(m.Label))
		}
	}
	bar := container.NewStack(canvas.NewRectangle(theme.Color(theme.ColorNameHeaderBackground)), container.NewHBox(titles...))
	c := software.NewCanvas()
	c.SetPadded(false)
	c.SetScale(w.Canvas().Scale()) // FYNE_SCALE=1.5: the window's pixels
	c.SetContent(container.NewWithoutLayout(bar, content))
	c.Resize(size)
	bar.Move(fyne.Position{})
	bar.Resize(fyne.NewSize(size.Width, max(0, pos.Y-theme.Padding())))
	content.Move(pos)
	content.Resize(csize)
	return c.Capture()
}

// blank reports whether every sampled pixel of img has the same color.
func blank(img image.Image) bool {
	b := img.Bounds()
	if b.Empty() {
		return true
	}
	first := img.At(b.Min.X, b.Min.Y)
	r0, g0, b0, a0 := first.RGBA()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, a := img.At(x, y).RGBA()
			if r != r0 || g != g0 || bl != b0 || a != a0 {
				return false
			}
		}
	}
	return true
}

func writePNG(path string, w fyne.Window) error {
	img := capture(w)
	return createFile(path, func(f io.Writer) error { return png.Encode(f, img) })
}

// tellingChange picks the change a first look should land on: a violation
// that edits a text file (it has a diff), else any violation with a diff.
func tellingChange(r *report.Report) int {
	best := -1
	for i := range r.Changes {
		c := &r.Changes[i]
		if c.Allowed || c.TextDiff == "" {
			continue
		}
		if c.Kind == "changed" {
			return i
		}
		if best < 0 {
			best = i
		}
	}
	return best
}
