//go:build !js

// Command diffgate-app is the desktop review app of diffgate.
package main

import (
	"fmt"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"github.com/go-gl/glfw/v3.4/glfw"
	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/app/ui"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/internal/version"
)

func main() {
	pipeline.Supervise() // first: in the supervisor child it supervises and exits
	flags, err := ui.ParseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		os.Exit(ui.UsageExitCode(err))
	}
	if flags.Version {
		fmt.Println(version.Get())
		return
	}
	log := zerolog.New(os.Stderr).Level(zerolog.WarnLevel).With().Timestamp().Logger()
	if os.Getenv("DIFFGATE_DEV") != "" {
		log = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Logger()
	}
	a := app.NewWithID("io.github.diffgate")
	w := a.NewWindow("diffgate")
	u := ui.Create(a, w, ui.Options{Flags: flags, Log: log, ScreenSize: screenSize})
	w.ShowAndRun()
	os.Exit(u.ExitCode())
}

// screenSize is the work area (the screen less panels and docks) of the
// primary monitor, where the window opens, in pixels; zero when GLFW
// cannot say. Fyne has initialized GLFW by then; it runs on the main
// thread (the app's started hook).
func screenSize() (size fyne.Size) {
	defer func() {
		if recover() != nil { // GLFW reports an error by panicking
			size = fyne.Size{}
		}
	}()
	m := glfw.GetPrimaryMonitor()
	if m == nil {
		return fyne.Size{}
	}
	_, _, w, h := m.GetWorkarea()
	return fyne.NewSize(float32(w), float32(h))
}
