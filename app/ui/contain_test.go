//go:build !js

package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/internal/quote"
)

// TestRunTabContainsTheScript: the Run tab states the policy in plain
// words, runs the script contained (it cannot write outside its workspace;
// the run says what was enforced and what was blocked), and its switches
// change the policy: the network, extra writable folders, and "Not
// contained", which says so in red.
func TestRunTabContainsTheScript(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(fyne.NewSize(1400, 900)) // the list row below shows the temp folder whole
	c := u.run.contain
	base, err := os.MkdirTemp("/tmp", "dg-app-contain-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(outside, 0o755)
	script := writeScript(t, t.TempDir(), "echo x > "+outside+"/escaped\necho ok > inside\n")
	u.run.setInputs(ws, script, []string{"inside"})

	if c.Mode() != pipeline.ContainAuto || uitest.RichString(c.policy) != "Network: off · Writes: this folder only · Secrets: hidden · .git hooks: read-only" {
		t.Fatalf("mode %s, policy %q", c.Mode(), uitest.RichString(c.policy))
	}
	test.Tap(u.run.runBtn)
	l.until(t, "the run", 60*time.Second, func() bool { return !u.run.running && u.Review().Report() != nil })
	r := u.Review().Report()
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
		t.Fatal("the contained script wrote outside its workspace")
	}
	if r.Containment == nil || r.Containment.Mode != "auto" || !r.Containment.Observed {
		t.Fatalf("containment %+v", r.Containment)
	}
	found := false
	for _, b := range r.Blocked {
		found = found || b.Kind == "create" && b.Target == filepath.Join(outside, "escaped")
	}
	if !found {
		t.Errorf("blocked %+v", r.Blocked)
	}
	// The review lists it in its Blocked group, first, and opens on it.
	drawn := uitest.DrawnText(u.Review())
	escaped := "create " + base // the row cuts the path short
	if !strings.Contains(drawn, "Blocked actions\n") || !strings.Contains(drawn, "\n"+escaped) ||
		strings.Index(drawn, escaped) > strings.Index(drawn, "\ninside\n") {
		t.Errorf("the review's list:\n%s", drawn)
	}
	if !strings.Contains(drawn, "\nBLOCKED CREATE\n") || uitest.RichTextWhere(u.Review(), func(s string) bool { return s == filepath.Join(outside, "escaped") }) == "" || u.Review().Selected() != -1 {
		t.Errorf("the review does not open on the blocked action (change %d selected)", u.Review().Selected())
	}
	if c.enforced.Hidden || !strings.HasPrefix(uitest.RichString(c.enforced), "Enforced: ") {
		t.Errorf("enforced line %q hidden %v", uitest.RichString(c.enforced), c.enforced.Hidden)
	}
	want := style.FailColor
	if r.Containment.Contained {
		want = style.PassColor
	}
	if got := c.enforced.Segments[0].(*widget.TextSegment).Style.ColorName; got != want {
		t.Errorf("enforced line in %s, want %s (contained %v)", got, want, r.Containment.Contained)
	}

	// The switches.
	c.net.SetChecked(true)
	c.setWritable([]string{outside})
	if got := uitest.RichString(c.policy); got != "Network: on · Writes: this folder and "+quote.Path(homeRel(outside))+" · Secrets: hidden · .git hooks: read-only" {
		t.Errorf("policy %q", got)
	}
	test.Tap(u.run.runBtn)
	l.until(t, "the second run", 60*time.Second, func() bool { return !u.run.running })
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err != nil {
		t.Errorf("with %s writable the script could not write there: %v", outside, err)
	}
	c.mode.SetSelectedIndex(2)
	if c.Mode() != pipeline.ContainOff || !strings.HasPrefix(uitest.RichString(c.policy), "Not contained") || !c.net.Disabled() {
		t.Errorf("off: mode %s policy %q", c.Mode(), uitest.RichString(c.policy))
	}
	if got := c.policy.Segments[0].(*widget.TextSegment).Style.ColorName; got != style.FailColor {
		t.Errorf("Not contained is drawn in %s, not as loudly as a failure", got)
	}
	// Preferences keep the network and folders for the next start, but
	// never "Not contained": the next start is contained.
	prefs := u.app.Preferences()
	if prefs.String(prefContainMode) == "off" || !prefs.Bool(prefContainNet) || len(prefs.StringList(prefContainWritable)) != 1 {
		t.Errorf("preferences %q %v %v", prefs.String(prefContainMode), prefs.Bool(prefContainNet), prefs.StringList(prefContainWritable))
	}
}

// TestNotContainedDoesNotOutliveTheSession: choosing "Not contained" (and
// a preference an older version saved as "off") starts the next session
// contained; the strict mode keeps its choice and says what it refuses.
func TestNotContainedDoesNotOutliveTheSession(t *testing.T) {
	u, _, _ := newTestUI(t, Options{})
	ws := func() string { return "" }
	c := u.run.contain
	c.mode.SetSelectedIndex(1)
	if got := c.mode.Selected; got != "Contained (refuse if a layer is missing)" {
		t.Errorf("strict mode is named %q", got)
	}
	c.mode.SetSelectedIndex(2)
	if c.Mode() != pipeline.ContainOff {
		t.Fatalf("mode %s", c.Mode())
	}
	if next := newContainControls(u, ws); next.Mode() != pipeline.ContainOn {
		t.Errorf("after Not contained the next start is %s, want the last contained mode (on)", next.Mode())
	}
	u.app.Preferences().SetString(prefContainMode, "off")
	if next := newContainControls(u, ws); next.Mode() != pipeline.ContainAuto {
		t.Errorf("a saved \"off\" starts %s, want auto", next.Mode())
	}
}

// TestContainModeShownWhole: each containment mode's name is drawn whole
// in the selector, at 1920 and at 1024 px ("Not contai…" was cut).
func TestContainModeShownWhole(t *testing.T) {
	u, _, w := newTestUI(t, Options{})
	c := u.run.contain
	for _, width := range []float32{1920, 1024} {
		w.Resize(fyne.NewSize(width, 660))
		for i, m := range containModes {
			c.mode.SetSelectedIndex(i)
			var drawn []string
			uitest.Walk(c.mode, func(o fyne.CanvasObject) {
				if x, ok := o.(*canvas.Text); ok {
					drawn = append(drawn, x.Text)
				}
			})
			if !slices.Contains(drawn, m.label) {
				t.Errorf("%.0f px: mode %q drawn as %q", width, m.label, drawn)
			}
		}
	}
}
