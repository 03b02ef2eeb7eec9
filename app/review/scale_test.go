package review

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
)

// TestNoThemeOverrideInTheView: nothing the view rebuilds sits in a
// ThemeOverride (Fyne loads every font again for each override scope, and a
// refreshed override makes a new one: the detail grew the app by 10-20 MB
// per change looked at).
func TestNoThemeOverrideInTheView(t *testing.T) {
	v, _ := newTestView(t, DemoReport(), Options{})
	for i := range v.Report().Changes {
		v.Select(i)
		walk(v, func(o fyne.CanvasObject) {
			if _, ok := o.(*container.ThemeOverride); ok {
				t.Fatalf("a ThemeOverride is drawn with change %s selected", v.Report().Changes[i].Path)
			}
		})
	}
}
