package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

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
	if !v.LoadFullDiffButton().Visible() {
		t.Fatal("no Load full diff")
	}
	test.Tap(v.LoadFullDiffButton())
	l.until(t, "the full diff", 30*time.Second, func() bool { return strings.HasPrefix(v.DiffStatus(), "Full diff") })
	if v.DiffStatus() != "Full diff: 1 hunk." {
		t.Errorf("status %q", v.DiffStatus())
	}
	var got []string
	for _, x := range v.DiffLines() {
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
	test.Tap(v.LoadFullDiffButton())
	l.until(t, "the load to fail", 30*time.Second, func() bool { return strings.HasPrefix(v.DiffStatus(), "Full diff unavailable") })
	if s := v.DiffStatus(); !strings.Contains(s, "the before-content (5.5 MiB) was not kept") {
		t.Errorf("status %q", s)
	}
}
