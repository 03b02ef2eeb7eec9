package review

import (
	"image/color"
	"image/png"
	"os"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/report"
)

// TestShot renders the view with the demo report to $DIFFGATE_SHOT (a PNG)
// with the software painter; it is a quick look, skipped unless asked for
// (DIFFGATE_SHOT_REPORT names a JSON report to show instead of the demo,
// DIFFGATE_SHOT_SELECT the change to show, DIFFGATE_SHOT_SPLIT shows its
// diff side by side).
func TestShot(t *testing.T) {
	out := os.Getenv("DIFFGATE_SHOT")
	if out == "" {
		t.Skip("set DIFFGATE_SHOT=file.png")
	}
	a := test.NewTempApp(t)
	if os.Getenv("DIFFGATE_SHOT_VARIANT") == "light" {
		a.Settings().SetTheme(lightOnly{})
	} else {
		a.Settings().SetTheme(style.Theme{})
	}
	r := DemoReport()
	if p := os.Getenv("DIFFGATE_SHOT_REPORT"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if r, err = report.Parse(data); err != nil {
			t.Fatal(err)
		}
	}
	v := New(r, Options{OnApprove: func(*report.Report, []string, string) error { return nil },
		OnReject: func(*report.Report, string) error { return nil }, Export: func(*report.Report, Format) {}})
	w := test.NewTempWindow(t, v)
	w.Resize(fyne.NewSize(1400, 860))
	v.Select(2)
	if p := os.Getenv("DIFFGATE_SHOT_SELECT"); p != "" {
		for i, c := range v.Report().Changes {
			if c.Path == p {
				v.Select(i)
			}
		}
	}
	if os.Getenv("DIFFGATE_SHOT_SPLIT") != "" {
		v.detail.bar.setSplit(true)
	}
	f, _ := os.Create(out)
	defer f.Close()
	png.Encode(f, w.Canvas().Capture())
}

// lightOnly is the diffgate theme pinned to its light variant.
type lightOnly struct{ style.Theme }

func (l lightOnly) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return l.Theme.Color(n, theme.VariantLight)
}
