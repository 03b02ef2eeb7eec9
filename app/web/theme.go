package web

import (
	_ "embed"

	"fyne.io/fyne/v2"

	"github.com/diffgate/diffgate/app/style"
)

//go:generate /usr/bin/python3 fonts/symbols.py

// symbolsTTF is fonts/symbols.ttf: the symbols the review shows that Noto
// Sans, Fyne's text font, has not (⚠ − → and a few more), cut from DejaVu
// Sans (see fonts/symbols.py).
//
//go:embed fonts/symbols.ttf
var symbolsTTF []byte

// Symbols is the web app's symbol font.
var Symbols = fyne.NewStaticResource("diffgate-symbols.ttf", symbolsTTF)

// Theme is the diffgate theme (style.Theme) with Symbols as the first font
// of every text face: Fyne looks a character up in the theme's font, then
// in Noto Sans, then in its symbol and emoji fonts and the system's. The
// browser has no system fonts for Fyne, and the web build has no emoji font
// (-tags no_emoji: 4.2 MB of the wasm), so without Symbols a risk badge's ⚠
// would be a replacement character. Symbols has Noto Sans's metrics and
// space: lines measure as they did. Monospace text keeps Fyne's DejaVu Sans
// Mono, which has these symbols itself.
type Theme struct{ style.Theme }

// Font implements fyne.Theme.
func (t Theme) Font(s fyne.TextStyle) fyne.Resource {
	if s.Monospace || s.Symbol {
		return t.Theme.Font(s)
	}
	return Symbols
}
