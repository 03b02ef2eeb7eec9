//go:build js

// Command diffgate-app, built for the browser (GOOS=js GOARCH=wasm, see
// `make web`): the review view of the desktop app as a web page, to open a
// report, draft an allowlist and compare two snapshots. No history, no
// native dialogs, no running scripts: those stay in main.go (!js).
package main

import (
	"os"
	"syscall/js"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"github.com/diffgate/diffgate/app/web"
)

func main() {
	// The page's loader times the start from here (window.diffgateLoad.main).
	js.Global().Get("performance").Call("mark", "diffgate-main")
	// A browser has no file system for Fyne's cache: drop the errors it
	// logs about that (six console lines a load), keep any other.
	var a fyne.App
	web.WithoutCacheNoise(os.Stderr, func() { a = app.NewWithID("io.github.diffgate") })
	w := a.NewWindow("diffgate review")
	web.Start(a, w)
	w.ShowAndRun()
}
