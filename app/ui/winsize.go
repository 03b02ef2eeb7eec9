package ui

import "fyne.io/fyne/v2"

// preferredSize is the window's size where the screen has room for it.
var preferredSize = fyne.NewSize(1400, 900)

// fallbackSize is the window's size when the screen's is not known: it
// fits the smallest supported screen, 1024×700, with a title bar.
var fallbackSize = fyne.NewSize(1024, 700-titleBar)

// titleBar is the room left for the window manager's title bar (and a
// margin) when the window is fitted to a screen's work area.
const titleBar = 40

// WindowSize is the window's size on a screen whose usable area (less
// panels and docks) is screen: the preferred 1400×900 where it fits,
// else as large as the screen has room for; fallbackSize for an unknown
// (zero) screen.
func WindowSize(screen fyne.Size) fyne.Size {
	if screen.Width <= 0 || screen.Height <= 0 {
		return fallbackSize
	}
	return fyne.NewSize(min(preferredSize.Width, screen.Width), min(preferredSize.Height, max(screen.Height-titleBar, screen.Height/2)))
}
