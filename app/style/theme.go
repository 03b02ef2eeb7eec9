package style

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
)

// Theme is the diffgate theme: Fyne's default theme with success, error and
// warning tuned so green, red and amber text stays readable on both the light
// and the dark variant, plus the diff background colors.
type Theme struct{}

var _ fyne.Theme = Theme{}

type pair struct{ light, dark color.NRGBA }

var palette = map[fyne.ThemeColorName]pair{
	theme.ColorNameSuccess:         {rgb(0x1a7f37), rgb(0x3fb950)},
	theme.ColorNameError:           {rgb(0xcf222e), rgb(0xf85149)},
	theme.ColorNameWarning:         {rgb(0x9a6700), rgb(0xd29922)},
	theme.ColorNamePlaceHolder:     {rgb(0x6e7781), rgb(0x8b949e)},
	ColorNameAddedBackground:       {rgba(0xdafbe1ff), rgba(0x2ea04326)},
	ColorNameRemovedBackground:     {rgba(0xffebe9ff), rgba(0xf8514926)},
	ColorNameHunkBackground:        {rgba(0xddf4ffff), rgba(0x388bfd1a)},
	ColorNameAddedWordBackground:   {rgba(0x8ce99aff), rgba(0x2ea04380)},
	ColorNameRemovedWordBackground: {rgba(0xffa19aff), rgba(0xf8514980)},
	Blocked:                        {rgb(0x8250df), rgb(0xa371f7)},
	Outside:                        {rgb(0xbc4c00), rgb(0xdb6d28)},
	// The focus fill of buttons, entries and checks: Fyne's (16% blue)
	// was too faint to find the focus by.
	theme.ColorNameFocus:               {rgba(0x006cff66), rgba(0x4f9affb0)},
	theme.ColorNameForegroundOnSuccess: {rgb(0xffffff), rgb(0x0d1117)},
	theme.ColorNameForegroundOnError:   {rgb(0xffffff), rgb(0x0d1117)},
	theme.ColorNameForegroundOnWarning: {rgb(0xffffff), rgb(0x0d1117)},
}

// Color implements fyne.Theme.
func (Theme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if p, ok := palette[n]; ok {
		if v == theme.VariantLight {
			return p.light
		}
		return p.dark
	}
	return theme.DefaultTheme().Color(n, v)
}

// Font implements fyne.Theme.
func (Theme) Font(s fyne.TextStyle) fyne.Resource { return theme.DefaultTheme().Font(s) }

// Icon implements fyne.Theme.
func (Theme) Icon(n fyne.ThemeIconName) fyne.Resource { return theme.DefaultTheme().Icon(n) }

// Size implements fyne.Theme.
func (Theme) Size(n fyne.ThemeSizeName) float32 { return theme.DefaultTheme().Size(n) }

func rgb(v uint32) color.NRGBA {
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

func rgba(v uint32) color.NRGBA {
	return color.NRGBA{R: uint8(v >> 24), G: uint8(v >> 16), B: uint8(v >> 8), A: uint8(v)}
}

// Tight returns the text widget o (a Label or a RichText) drawn with 2 px
// of inner padding around its text instead of the theme's InnerPadding, for
// dense tables.
//
// It stands in for a container.ThemeOverride with a compact theme, which
// must not be used for content that is rebuilt or refreshed: Fyne gives a
// ThemeOverride a new theme scope whenever it is created or refreshed, and
// loads and keeps every font again for each scope it draws (10–20 MB each
// time). The review's detail, refreshed on every selection, grew the app by
// that much per change looked at.
func Tight(o fyne.CanvasObject) fyne.CanvasObject { return container.New(tightLayout{}, o) }

// tightLayout draws its objects over its bounds grown by the inner padding
// they would waste, less tightPad.
type tightLayout struct{}

const tightPad = 2

func (tightLayout) bleed(o fyne.CanvasObject) float32 {
	return max(0, theme.CurrentForWidget(o).Size(theme.SizeNameInnerPadding)-tightPad)
}

func (l tightLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	for _, o := range objs {
		d := l.bleed(o)
		o.Move(fyne.NewPos(-d, -d))
		o.Resize(fyne.NewSize(s.Width+2*d, s.Height+2*d))
	}
}

func (l tightLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objs {
		d := l.bleed(o)
		ms := o.MinSize()
		m = m.Max(fyne.NewSize(max(0, ms.Width-2*d), max(0, ms.Height-2*d)))
	}
	return m
}

// Compact is the current app theme with tighter padding.
//
// Deprecated: do not wrap content that is rebuilt or refreshed in a
// container.ThemeOverride with it (see Tight, which replaces it).
type Compact struct{}

func (Compact) base() fyne.Theme { return fyne.CurrentApp().Settings().Theme() }

// Color implements fyne.Theme.
func (c Compact) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	return c.base().Color(n, v)
}

// Font implements fyne.Theme.
func (c Compact) Font(s fyne.TextStyle) fyne.Resource { return c.base().Font(s) }

// Icon implements fyne.Theme.
func (c Compact) Icon(n fyne.ThemeIconName) fyne.Resource { return c.base().Icon(n) }

// Size implements fyne.Theme.
func (c Compact) Size(n fyne.ThemeSizeName) float32 {
	switch n {
	case theme.SizeNameInnerPadding, theme.SizeNamePadding:
		return tightPad
	}
	return c.base().Size(n)
}
