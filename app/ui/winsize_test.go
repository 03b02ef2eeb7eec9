package ui

import (
	"testing"

	"fyne.io/fyne/v2"
)

func TestWindowSize(t *testing.T) {
	for _, c := range []struct{ screen, want fyne.Size }{
		{fyne.NewSize(1920, 1080), fyne.NewSize(1400, 900)},
		{fyne.NewSize(1024, 700), fyne.NewSize(1024, 660)},
		{fyne.NewSize(1366, 740), fyne.NewSize(1366, 700)}, // a 1366×768 laptop less its panel
		{fyne.NewSize(1280, 720), fyne.NewSize(1280, 680)}, // 1920×1080 at 1.5×
		{fyne.Size{}, fyne.NewSize(1024, 660)},             // unknown: fits 1024×700
	} {
		got := WindowSize(c.screen)
		if got != c.want {
			t.Errorf("WindowSize(%v) = %v, want %v", c.screen, got, c.want)
		}
		if c.screen.Width > 0 && (got.Width > c.screen.Width || got.Height > c.screen.Height) {
			t.Errorf("WindowSize(%v) = %v: larger than the screen", c.screen, got)
		}
	}
}
