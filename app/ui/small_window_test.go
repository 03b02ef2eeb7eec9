package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/core/report"
)

// small is the window's content at the smallest supported size, 1024×700,
// less the desktop driver's menu bar.
var small = fyne.NewSize(1024, 700-menuBarReserve)

// TestSmallWindowDiffRoom: at 1024×700 the diff of the demo's config.json
// takes at least 60% of the detail pane (the before/after table is one
// line until expanded).
func TestSmallWindowDiffRoom(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(small)
	r := openReport(t, u, l, writeDemoReport(t))
	v := u.Review()
	v.Select(changeIndex(t, r, "config.json"))
	l.settle(50 * time.Millisecond)
	if d, pane := diffRoom(t, v); d < 0.6*pane {
		t.Errorf("the diff is %.0f px high, %.0f%% of the detail pane's %.0f px; want 60%% or more", d, 100*d/pane, pane)
	}
}

// changeIndex is the index of the change at path in r.
func changeIndex(t *testing.T, r *report.Report, path string) int {
	t.Helper()
	for i := range r.Changes {
		if r.Changes[i].Path == path {
			return i
		}
	}
	t.Fatalf("no change %q", path)
	return -1
}

// TestSmallWindowHeadlineAndExport: at 1024×700 the verdict headline is
// shown whole (wrapped, not cut with "…"), and the Export buttons lie in
// the window even when the banner lists blocked actions and their hints.
func TestSmallWindowHeadlineAndExport(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(small)
	r := review.DemoReport()
	r.Containment = &report.Containment{Mode: "auto", Contained: true, LandlockABI: 7, Observed: true,
		Layers: []report.Layer{{Name: "filesystem", Requested: true, Enforced: true, How: "landlock v7"}}}
	r.Blocked = []report.Blocked{
		{Kind: "write", Target: "/home/u/.bashrc", PID: 12, Cmd: "sh demo.sh", Op: "openat", Count: 1},
		{Kind: "net", Target: "127.0.0.1:8080", PID: 13, Cmd: "curl http://127.0.0.1:8080/", Op: "connect", Count: 2},
		{Kind: "read", Target: "/home/u/.ssh/id_ed25519", PID: 12, Cmd: "sh demo.sh", Op: "openat", Count: 1},
		{Kind: "fork", Target: "pids.max", PID: 12, Cmd: "sh demo.sh", Op: "pids.max", Count: 1},
	}
	r.Evaluate()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "blocked.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	openReport(t, u, l, path)
	w.Resize(small)
	l.settle(50 * time.Millisecond)
	v := u.Review()
	head := v.Banner().Summary()
	if !strings.HasSuffix(head, "not covered by the allowlist.") {
		t.Fatalf("headline %q", head)
	}
	var drawn []string
	uitest.Walk(v.Banner(), func(o fyne.CanvasObject) {
		if x, ok := o.(*canvas.Text); ok {
			drawn = append(drawn, x.Text)
		}
	})
	all := strings.Join(drawn, " ")
	if strings.Contains(all, "…") && !strings.Contains(strings.Join(strings.Fields(all), " "), head) {
		t.Errorf("the headline %q is cut; the banner draws %q", head, all)
	}
	if !strings.Contains(strings.Join(strings.Fields(all), " "), head) {
		t.Errorf("the headline %q is not drawn whole; the banner draws %q", head, all)
	}
	size := small // the test window grows to its content's minimum; the screen does not
	for _, f := range []review.Format{review.JSON, review.Markdown, review.HTML} {
		b := v.ExportButton(f)
		p := fyne.CurrentApp().Driver().AbsolutePositionForObject(b)
		if !b.Visible() || p.X < 0 || p.Y < 0 || p.X+b.Size().Width > size.Width+0.5 || p.Y+b.Size().Height > size.Height+0.5 {
			t.Errorf("Export %q at %v size %v: not whole in the %v window", b.Text, p, b.Size(), size)
		}
	}
	if m := w.Content().MinSize(); m.Height > small.Height {
		t.Errorf("the review needs %v, higher than %v", m, small)
	}
}

// TestSmallWindowSideBySide: at 1024×700 side by side is shown, not
// refused as too narrow: turning it on widens the detail pane.
func TestSmallWindowSideBySide(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(small)
	r := openReport(t, u, l, writeDemoReport(t))
	v := u.Review()
	v.Select(changeIndex(t, r, "config.json"))
	l.settle(50 * time.Millisecond)
	v.SetSideBySide(true)
	w.Resize(small)
	l.settle(50 * time.Millisecond)
	// (The button says "Side by side: too narrow" exactly when it is not
	// shown; at this width it is drawn as an icon.)
	if d := detailDiff(t, v); !d.SideBySideShown() {
		t.Errorf("side by side refused at 1024×700 (the diff is %.0f px wide)", d.Size().Width)
	}
}

// TestSmallWindowRunOutput: after a run at 1024×700 the Run tab's Output
// is in the window and shows several lines.
func TestSmallWindowRunOutput(t *testing.T) {
	u, _, w, _ := stagedRun(t)
	u.Tabs.Select(u.runItem)
	w.Resize(small.SubtractWidthHeight(0, 36)) // less a title bar too: the tightest case
	size := w.Canvas().Size()
	o := u.run.output.view
	p := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	lines := o.Size().Height / 18 // a monospace line is about 18 px (3 at least: a NOT CONTAINED run, in a chroot, has a longer enforced line)
	if !o.Visible() || p.Y < 0 || p.Y+o.Size().Height > size.Height+0.5 || lines < 3 {
		t.Errorf("the output at %v, %v in a %v window: %.1f lines", p, o.Size(), size, lines)
	}
}

// TestSmallWindowDiffRoomStagedRun: at 1024×700 (less the menu bar) a real
// staged run's review, strip shown, leaves the diff of its edited file at
// least 60% of the detail pane.
func TestSmallWindowDiffRoomStagedRun(t *testing.T) {
	u, l, w, _ := stagedRun(t)
	w.Resize(small)
	v := u.Review()
	if stageText(v) == "" {
		t.Fatal("no staged strip")
	}
	v.Select(changeIndex(t, v.Report(), "a.txt"))
	l.settle(50 * time.Millisecond)
	d, pane := diffRoom(t, v)
	t.Logf("diff %.0f px of %.0f (%.0f%%), strip %q", d, pane, 100*d/pane, stageText(v))
	if d < 0.6*pane {
		t.Errorf("the diff is %.0f px high, %.0f%% of the detail pane's %.0f px; want 60%% or more", d, 100*d/pane, pane)
	}
}

// TestSmallWindowFocusStaysInside: at 1024×700 every Tab stop of the
// review of a staged run and of the Run tab lies inside the window (the
// focus never lands on a button the reviewer cannot see).
func TestSmallWindowFocusStaysInside(t *testing.T) {
	u, l, w, _ := stagedRun(t)
	w.Resize(small)
	l.settle(50 * time.Millisecond)
	size := w.Canvas().Size()
	d := fyne.CurrentApp().Driver()
	for _, tab := range []string{"review", "run"} {
		if tab == "run" {
			u.Tabs.Select(u.runItem)
		}
		cycle := tabCycle(t, w)
		if len(cycle) < 8 {
			t.Errorf("%s tab: %d Tab stops", tab, len(cycle))
		}
		for _, f := range cycle {
			o, ok := f.(fyne.CanvasObject)
			if !ok {
				continue
			}
			p, s := d.AbsolutePositionForObject(o), o.Size()
			if p.X < -0.5 || p.Y < -0.5 || p.X+s.Width > size.Width+0.5 || p.Y+s.Height > size.Height+0.5 {
				t.Errorf("%s tab: Tab stops on a %T at %v, %v: outside the %v window", tab, f, p, s, size)
			}
		}
	}
}

// diffRoom is the height of the review's diff and of the detail pane it is
// in (the leading side of the split between the detail and the sidebar).
func diffRoom(t *testing.T, v fyne.CanvasObject) (diff, pane float32) {
	t.Helper()
	d := detailDiff(t, v)
	for _, s := range uitest.All[*container.Split](v, nil) {
		if lead, ok := s.Leading.(*fyne.Container); ok && len(lead.Objects) == 1 &&
			slices.Contains(uitest.All[*review.DiffView](lead.Objects[0], nil), d) {
			return d.Size().Height, lead.Objects[0].Size().Height
		}
	}
	t.Fatal("no detail pane around the diff")
	return 0, 0
}
