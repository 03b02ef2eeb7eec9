package review

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/core/report"
)

// smallReview is the room the review tab has in a 1024×700 window: less
// the menu bar (40 px) and the tab bar (40 px) above it.
var smallReview = fyne.NewSize(1024, 700-40-40)

// TestSmallWindowDiffGetsTheRoom: at 1024×700 the diff of the demo's
// config.json takes at least 60% of the detail pane's height; the
// before/after table is one summary line, and Details expands it.
func TestSmallWindowDiffGetsTheRoom(t *testing.T) {
	v, w := newTestView(t, DemoReport(), Options{})
	w.Resize(smallReview)
	v.Select(indexOf(t, v.Report(), "config.json"))
	d := v.detail
	if got, pane := d.diff.Size().Height, d.root.Size().Height; got < 0.6*pane {
		t.Errorf("the diff is %.0f px high, %.0f%% of the detail pane's %.0f px; want 60%% or more", got, 100*got/pane, pane)
	}
	if d.meta.Visible() {
		t.Error("the before/after table is expanded by default")
	}
	sum := segmentsText(d.metaSum)
	if !strings.Contains(sum, "Size 162 B") || !strings.Contains(sum, "214 B") {
		t.Errorf("summary line %q does not say what changed", sum)
	}
	tapLink(d.metaBtn)
	if !d.meta.Visible() || d.metaSum.Visible() {
		t.Fatal("Details does not expand the table")
	}
	uitest.OneText(t, d.meta, "SHA-256")
	v.Select(indexOf(t, v.Report(), "src/app.py")) // the choice holds
	if sum := segmentsText(d.metaSum); !strings.Contains(sum, "Mode") || !strings.Contains(sum, "0755") {
		t.Errorf("summary of a chmod %q", sum)
	}
	if !d.meta.Visible() {
		t.Error("the table collapsed again on the next change")
	}
	tapLink(d.metaBtn)
	if d.meta.Visible() {
		t.Error("Hide details does not collapse the table")
	}
}

// tapLink taps link l in the middle of its text.
func tapLink(l *widget.Hyperlink) {
	test.TapAt(l, fyne.NewPos(l.MinSize().Width/2, l.Size().Height/2))
}

func TestCutMiddle(t *testing.T) {
	width := func(n int) func(string) bool { return func(s string) bool { return len([]rune(s)) <= n } }
	for _, c := range []struct {
		path string
		n    int
		want string
	}{
		{"src/app.py", 20, "src/app.py"},
		{"node_modules/pkg/lib/index.js", 20, "node_modul…/index.js"},
		{"node_modules/pkg/lib/index.js", 12, "no…/index.js"},
		{"node_modules/pkg/lib/index.js", 10, "…/index.js"},
		{"assets/a-very-long-file-name.min.js", 16, "a-very-…e.min.js"},
		{"a-very-long-file-name.min.js", 12, "a-v…e.min.js"},
		{"x/a-very-long-file-name.min.js", 5, "…n.js"},
	} {
		got := cutMiddle(c.path, width(c.n))
		if got != c.want {
			t.Errorf("CutMiddle(%q, %d) = %q, want %q", c.path, c.n, got, c.want)
		}
		if n := len([]rune(got)); n > c.n {
			t.Errorf("CutMiddle(%q, %d) = %q: %d runes", c.path, c.n, got, n)
		}
	}
}

// TestListCutsPathsInTheMiddle: in list mode, a path too long for a narrow
// changes pane keeps its file name and loses the middle.
func TestListCutsPathsInTheMiddle(t *testing.T) {
	r := DemoReport()
	long := "node_modules/some-package/dist/esm/internal/index.js"
	r.Changes[0].Path = long
	v, w := newTestView(t, r, Options{})
	v.setTreeMode(false)
	w.Resize(smallReview)
	var cut string
	for _, x := range uitest.Texts(v.changes.list) {
		if strings.HasSuffix(x.Text, "/index.js") {
			cut = x.Text
		}
	}
	if cut == "" || cut == long || !strings.HasPrefix(cut, "node_modules/") || !strings.Contains(cut, "…/index.js") {
		t.Errorf("list row shows %q for %q; want the middle cut, the file name kept (rows: %s)", cut, long, uitest.AllText(v.changes.list))
	}
}

// TestTitleWrapsAtSlash: a long path in the detail's title wraps after a
// "/", never inside a name ("app.min. js").
func TestTitleWrapsAtSlash(t *testing.T) {
	r := DemoReport()
	i := indexOf(t, r, "config.json")
	r.Changes[i].Path = "assets/javascripts/vendor/bundle/app.min.js"
	v, w := newTestView(t, r, Options{})
	w.Resize(smallReview)
	v.Select(i)
	parts := map[string]bool{"assets/": true, "javascripts/": true, "vendor/": true, "bundle/": true, "app.min.js": true}
	lines := map[float32]bool{}
	for _, x := range uitest.Texts(v.detail.title) {
		if x.Text == "" {
			continue
		}
		lines[x.Position().Y] = true
		if !parts[x.Text] {
			t.Errorf("the title draws %q: a path cut inside a name", x.Text)
		}
	}
	if len(lines) < 2 {
		t.Logf("the title fits on one line at this width (%v)", v.detail.title.Size())
	}
}

// TestSmallWindowDiffRoomStaged: at 1024×700 a staged run's strip (the
// state, the scope, Apply and Discard) still leaves the diff 60% of the
// detail pane, contained or not, and Applying… does not move the page.
func TestSmallWindowDiffRoomStaged(t *testing.T) {
	for _, contained := range []bool{true, false} {
		r := DemoReport()
		r.Stage = &report.Stage{Mechanism: "overlay", State: report.StagePending}
		r.Containment = &report.Containment{Mode: "auto", Contained: true, Observed: true,
			Layers: []report.Layer{{Name: "filesystem", Requested: true, Enforced: true, How: "landlock v7"}}}
		if !contained { // as on a machine without a private mount tree: the banner says more
			r.Containment = &report.Containment{Mode: "auto", Why: "blocked actions not observable: no private mount tree",
				Layers: []report.Layer{{Name: "filesystem", Requested: true, Enforced: true, How: "landlock v7"},
					{Name: "metadata", Requested: true, Why: "no private mount tree"},
					{Name: "workspace", Requested: true, Why: "no private mount tree"}}}
		}
		r.Evaluate()
		var done func(string, error)
		v, w := newTestView(t, r, Options{
			OnApply:   func(_ *report.Report, _ ApplyRequest, d func(string, error)) { done = d },
			OnDiscard: func(_ *report.Report, d func(string, error)) { done = d },
		})
		w.Resize(smallReview)
		v.Select(indexOf(t, v.Report(), "config.json"))
		d := v.detail
		got, pane := d.diff.Size().Height, d.root.Size().Height
		t.Logf("contained %v: diff %.0f of %.0f px (%.0f%%)", contained, got, pane, 100*got/pane)
		if got < 0.6*pane {
			t.Errorf("contained %v: the diff is %.0f px high, %.0f%% of the detail pane's %.0f px; want 60%% or more",
				contained, got, 100*got/pane, pane)
		}
		strip := v.stage.root.MinSize().Height
		v.setApplyScope(scopeAllowed)
		test.Tap(v.applyButton())
		if done == nil {
			t.Fatal("Apply did not reach the host")
		}
		if !strings.Contains(v.stageText(), "Applying…") {
			t.Errorf("strip while applying %q", v.stageText())
		}
		if h := v.stage.root.MinSize().Height; h != strip {
			t.Errorf("Applying… made the strip %.0f px high, was %.0f: the page moves", h, strip)
		}
		done(report.StagePartiallyApplied, nil)
	}
}

// TestSummaryLineFitsANarrowDetail: the summary line (summary, Show
// details, the diff's modes) does not draw one over the other in a detail
// pane as narrow as the app's at 1024 px: the modes drop their labels
// there, and keep them in a wide pane.
func TestSummaryLineFitsANarrowDetail(t *testing.T) {
	v, w := newTestView(t, DemoReport(), Options{})
	v.Select(indexOf(t, v.Report(), "config.json"))
	d := v.detail
	if !d.bar.wide.Visible() || d.bar.narrow.Visible() {
		t.Error("a wide detail: the modes without their labels")
	}
	w.Resize(smallReview)
	v.mainSplit.SetOffset(0.31)
	v.innerSplit.SetOffset(0.5) // the detail about 340 px, as in the app at 1024
	if dw := d.root.Size().Width; dw > 360 {
		t.Fatalf("detail %.0f px wide", dw)
	}
	drv := fyne.CurrentApp().Driver()
	sumRight := drv.AbsolutePositionForObject(d.metaSum).X + d.metaSum.Size().Width
	linkLeft := drv.AbsolutePositionForObject(d.metaBtn).X
	modesLeft := drv.AbsolutePositionForObject(d.bar.modes).X
	linkRight := linkLeft + d.metaBtn.Size().Width
	if sumRight > linkLeft+1 || linkRight > modesLeft+1 {
		t.Errorf("summary ends at %.0f, Show details %.0f–%.0f, modes from %.0f: they overlap", sumRight, linkLeft, linkRight, modesLeft)
	}
	if d.metaSum.Size().Width < 120 {
		t.Errorf("the summary has %.0f px", d.metaSum.Size().Width)
	}
	if d.bar.wide.Visible() || !d.bar.narrow.Visible() {
		t.Error("a narrow detail: the modes keep their labels")
	}
}
