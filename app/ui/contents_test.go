package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/internal/testenv"
)

// Load full diff in the desktop app, on the real gate and pipeline: a
// 5.5 MiB text file with one changed line. In a staged run (the desktop's
// default) the report already carries the diff; its text diff is left out
// here, as in a report of an older diffgate, and Load full diff computes it
// from the workspace (before) and the stage (after). In a direct run the
// before-content was never kept: the bar says so.
func TestLoadFullDiffInTheApp(t *testing.T) {
	u, l, _ := newTestUI(t, Options{})
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "big.log"), []byte(testenv.NumberedLines(110_000)), 0o644); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, t.TempDir(), "sed -i 's/^0061234 the quick/0061234 the QUICK/' big.log\n")
	u.run.setInputs(ws, script, nil)
	test.Tap(u.run.runBtn)
	l.until(t, "the review tab", 60*time.Second, func() bool { return u.Tabs.Selected() == u.reviewItem })
	v := u.Review()
	r := v.Report()
	if len(r.Changes) != 1 || r.Stage == nil || !strings.Contains(r.Changes[0].TextDiff, "+0061234 the QUICK") {
		t.Fatalf("staged run: stage %v, changes %+v", r.Stage, r.Changes)
	}
	r.Changes[0].TextDiff, r.Changes[0].DiffNote = "", "too-large"
	u.showReview(r) // as a report of an older diffgate, without the diff, shows
	v.Select(0)
	uitest.Tap(t, v, "Load full diff")
	l.until(t, "the full diff", 30*time.Second, func() bool { return strings.HasPrefix(diffStatus(v), "Full diff") })
	if diffStatus(v) != "Full diff: 1 hunk." {
		t.Errorf("status %q", diffStatus(v))
	}
	var got []string
	for _, x := range detailDiff(t, v).Lines() {
		if x.Kind == review.LineAdded || x.Kind == review.LineRemoved {
			got = append(got, fmt.Sprintf("%d/%d %s", x.Old, x.New, x.Text))
		}
	}
	want := "61235/0 -0061234 the quick brown fox jumps over the lazy dog|0/61235 +0061234 the QUICK brown fox jumps over the lazy dog"
	if strings.Join(got, "|") != want {
		t.Errorf("full diff lines %q", got)
	}

	// A direct run: no copy of the before-content.
	u.run.stage.SetChecked(false)
	test.Tap(u.run.runBtn)
	l.until(t, "the second review", 60*time.Second, func() bool { return v.Report() != r && v.Report() != nil })
	r = v.Report()
	if c := r.Changes[0]; c.TextDiff != "" || c.DiffNote != "too-large" {
		t.Fatalf("direct run: note %q, diff %.60q", c.DiffNote, c.TextDiff)
	}
	v.Select(0)
	uitest.Tap(t, v, "Load full diff")
	l.until(t, "the load to fail", 30*time.Second, func() bool { return strings.HasPrefix(diffStatus(v), "Full diff unavailable") })
	if s := diffStatus(v); !strings.Contains(s, "the before-content (5.5 MiB) was not kept") {
		t.Errorf("status %q", s)
	}
}

// diffStatus is the first line of what the bar above the review's diff
// says about the full diff ("" when it says nothing of it).
func diffStatus(v fyne.CanvasObject) string {
	for _, rt := range uitest.All[*widget.RichText](v, nil) {
		if len(rt.Segments) > 0 && strings.HasPrefix(rt.Segments[0].Textual(), "Full diff") {
			return rt.Segments[0].Textual()
		}
	}
	return ""
}

// detailDiff is the diff drawn in the review's detail.
func detailDiff(t *testing.T, v fyne.CanvasObject) *review.DiffView {
	t.Helper()
	return uitest.Find(t, v, "diff in the detail", func(*review.DiffView) bool { return true })
}
