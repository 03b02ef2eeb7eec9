package review

import (
	"image/png"
	"os"
	"testing"

	"fyne.io/fyne/v2"
)

func tmpShot(t *testing.T, w fyne.Window, name string) {
	if os.Getenv("APP18SHOT") == "" {
		return
	}
	f, _ := os.Create("/tmp/app18-" + name + ".png")
	defer f.Close()
	png.Encode(f, w.Canvas().Capture())
}
