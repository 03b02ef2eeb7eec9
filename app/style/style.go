// Package style keeps every color decision of the diffgate UI in one place:
// which theme color a change kind, a verdict or a diff line is drawn in, and
// the app theme that makes those colors readable on light and dark variants.
//
// Views ask for colors by name (theme.ColorNameSuccess, ColorNameAddedBackground,
// ...) so a different theme, e.g. in the web build, still gets sensible colors.
package style

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
)

// Extra color names the diffgate theme defines. Other themes fall back to a
// tint of the matching foreground color (see Color).
const (
	ColorNameAddedBackground   fyne.ThemeColorName = "diffgate.addedBackground"
	ColorNameRemovedBackground fyne.ThemeColorName = "diffgate.removedBackground"
	ColorNameHunkBackground    fyne.ThemeColorName = "diffgate.hunkBackground"
	// ColorNameAddedWordBackground and ColorNameRemovedWordBackground mark
	// the words that changed inside an added or removed line.
	ColorNameAddedWordBackground   fyne.ThemeColorName = "diffgate.addedWordBackground"
	ColorNameRemovedWordBackground fyne.ThemeColorName = "diffgate.removedWordBackground"
	// Blocked draws the actions containment refused (violet, as in the
	// HTML report); Outside the changes found outside the workspace
	// (orange).
	Blocked fyne.ThemeColorName = "diffgate.blocked"
	Outside fyne.ThemeColorName = "diffgate.outside"
)

// Semantic color names, as used across the UI.
const (
	// Added changes are green.
	Added = theme.ColorNameSuccess
	// Removed changes are red.
	Removed = theme.ColorNameError
	// Changed changes are amber.
	Changed = theme.ColorNameWarning
	// Allowed changes, @@ hunk headers and secondary text are muted. Every
	// theme defines the placeholder color, so text never goes invisible.
	Allowed = theme.ColorNamePlaceHolder
	// Muted is secondary text.
	Muted = theme.ColorNamePlaceHolder
	// PassColor and FailColor draw the verdict.
	PassColor = theme.ColorNameSuccess
	FailColor = theme.ColorNameError
	// Risk marks a risky change.
	Risk = theme.ColorNameError
)

// KindColor is the color name of a change kind.
func KindColor(k diff.Kind) fyne.ThemeColorName {
	switch k {
	case diff.Added:
		return Added
	case diff.Removed:
		return Removed
	case diff.Changed:
		return Changed
	}
	return theme.ColorNameForeground
}

// ChangeColor is the color a change is drawn in: its kind's color, or muted
// when the allowlist allows it.
func ChangeColor(c *diff.Change) fyne.ThemeColorName {
	if c.Allowed {
		return Allowed
	}
	return KindColor(c.Kind)
}

// VerdictColor is the color of a verdict ("pass" or "fail").
func VerdictColor(verdict string) fyne.ThemeColorName {
	if verdict == report.Pass {
		return PassColor
	}
	return FailColor
}

// KindIcon is the icon of a change kind (uncolored; wrap it with Colored).
func KindIcon(k diff.Kind) fyne.Resource {
	switch k {
	case diff.Added:
		return theme.ContentAddIcon()
	case diff.Removed:
		return theme.ContentRemoveIcon()
	case diff.Changed:
		return theme.DocumentCreateIcon()
	}
	return theme.FileIcon()
}

// Colored returns icon drawn in the named theme color.
func Colored(icon fyne.Resource, name fyne.ThemeColorName) fyne.Resource {
	return theme.NewColoredResource(icon, name)
}

// Color looks name up in the theme th for the current variant. For the
// diffgate-specific names it falls back to derived colors when th does not
// define them, so views work under any theme.
func Color(th fyne.Theme, name fyne.ThemeColorName) color.Color {
	v := fyne.CurrentApp().Settings().ThemeVariant()
	if c := th.Color(name, v); !isTransparent(c) {
		return c
	}
	switch name {
	case ColorNameAddedBackground:
		return Tint(th.Color(theme.ColorNameSuccess, v), 0x2a)
	case ColorNameRemovedBackground:
		return Tint(th.Color(theme.ColorNameError, v), 0x2a)
	case ColorNameHunkBackground:
		return Tint(th.Color(theme.ColorNamePrimary, v), 0x1c)
	case ColorNameAddedWordBackground:
		return Tint(th.Color(theme.ColorNameSuccess, v), 0x70)
	case ColorNameRemovedWordBackground:
		return Tint(th.Color(theme.ColorNameError, v), 0x70)
	case Blocked:
		return Theme{}.Color(Blocked, v)
	case Outside:
		return Theme{}.Color(Outside, v)
	}
	return th.Color(name, v)
}

// ColorFor is Color with the theme that applies to the object o.
func ColorFor(o fyne.CanvasObject, name fyne.ThemeColorName) color.Color {
	return Color(theme.CurrentForWidget(o), name)
}

// Tint returns c with the alpha a (straight alpha).
func Tint(c color.Color, a uint8) color.NRGBA {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}

func isTransparent(c color.Color) bool {
	if c == nil {
		return true
	}
	_, _, _, a := c.RGBA()
	return a == 0
}
