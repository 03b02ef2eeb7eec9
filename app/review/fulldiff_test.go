package review

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/testenv"
)

func fileEntry(content []byte) *snapshot.Entry {
	h := sha256.Sum256(content)
	return &snapshot.Entry{Type: snapshot.File, Perm: 0o644, Size: int64(len(content)), SHA256: hex.EncodeToString(h[:])}
}

// largeEdit is a 5.5 MiB text file with one line changed, as the gate
// reports it: no text diff, too large.
func largeEdit() (before, after []byte, c diff.Change) {
	text := testenv.NumberedLines(110_000)
	before = []byte(text)
	after = []byte(strings.Replace(text, "0061234 the quick", "0061234 the QUICK", 1))
	return before, after, diff.Change{Path: "data/big.log", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
		Before: fileEntry(before), After: fileEntry(after), DiffNote: diff.NoteTooLarge}
}

// uiLoop stands in for the UI goroutine: the view hands it what fyne.Do
// would run, and the test runs it, so a background load's outcome arrives
// as an event, never by timing.
type uiLoop chan func()

func (q uiLoop) do(f func()) { q <- f }

// next runs the next function handed to the UI goroutine.
func (q uiLoop) next() { (<-q)() }

// loader serves contents by change path; before serving it reports the
// call on started and waits for release or the context's end.
type loader struct {
	contents        map[string][2][]byte
	started, ended  chan string
	release         chan struct{}
	blockUntilEnded bool
}

func (l *loader) load(ctx context.Context, _ *report.Report, c *diff.Change) ([]byte, []byte, error) {
	l.started <- c.Path
	if l.blockUntilEnded {
		<-ctx.Done()
		l.ended <- c.Path
		return nil, nil, ctx.Err()
	}
	<-l.release
	kv, ok := l.contents[c.Path]
	if !ok {
		return nil, nil, fmt.Errorf("the before-content of %s was not kept", c.Path)
	}
	return kv[0], kv[1], nil
}

func newLoader() *loader {
	return &loader{contents: map[string][2][]byte{}, started: make(chan string, 4), ended: make(chan string, 4), release: make(chan struct{})}
}

// Load full diff on a 5.5 MiB file with one changed line: the button says
// its bound, the load runs off the UI goroutine (the tap returns while the
// loader waits), and the changed line is shown, numbered.
func TestLoadFullDiffLargeFile(t *testing.T) {
	before, after, c := largeEdit()
	r := &report.Report{Verdict: report.Fail, Changes: []diff.Change{c}}
	r.Evaluate()
	l := newLoader()
	l.contents[c.Path] = [2][]byte{before, after}
	v, _ := newTestView(t, r, Options{LoadContents: l.load})
	ui := make(uiLoop, 4)
	v.detail.do = ui.do
	v.Select(0)
	bar := v.detail.bar
	if !bar.load.Visible() || !strings.Contains(bar.Status(), "files up to 64 MiB, the diff shown up to 500 hunks") {
		t.Fatalf("no Load full diff with its bound: visible %v, status %q", bar.load.Visible(), bar.Status())
	}
	if !strings.Contains(uitest.AllText(v.detail.body), "Content changed; no text diff: over the 256 KiB limit for kept copies") {
		t.Errorf("the card does not say why there is no diff: %s", uitest.AllText(v.detail.body))
	}
	test.Tap(bar.load)
	if p := <-l.started; p != c.Path {
		t.Fatalf("loading %s", p)
	}
	// The tap returned while the loader waits: it does not run on the UI
	// goroutine. The bar says what is going on and offers Cancel.
	if !bar.cancel.Visible() || bar.load.Visible() || !strings.HasPrefix(bar.Status(), "Loading the full diff of data/big.log") {
		t.Errorf("while loading: cancel %v, load %v, status %q", bar.cancel.Visible(), bar.load.Visible(), bar.Status())
	}
	close(l.release)
	ui.next()
	var del, add *DiffLine
	for i, x := range v.detail.diff.Lines() {
		switch x.Kind {
		case LineRemoved:
			del = &v.detail.diff.Lines()[i]
		case LineAdded:
			add = &v.detail.diff.Lines()[i]
		}
	}
	if del == nil || add == nil || add.Text != "+0061234 the QUICK brown fox jumps over the lazy dog" || add.New != 61235 || del.Old != 61235 {
		t.Fatalf("full diff lines: %v", v.detail.diff.Lines())
	}
	if bar.Status() != "Full diff: 1 hunk." || !bar.modes.Visible() || bar.load.Visible() {
		t.Errorf("after the load: status %q, modes %v, load %v", bar.Status(), bar.modes.Visible(), bar.load.Visible())
	}
	// Shown again (the allowlist re-evaluated), it keeps the full diff.
	v.Allow("data/")
	if len(v.detail.diff.Lines()) == 0 || bar.Status() != "Full diff: 1 hunk." {
		t.Errorf("after Allow: %d lines, status %q", len(v.detail.diff.Lines()), bar.Status())
	}
	drawnLine(t, v.detail.diff, "+0061234 the QUICK brown fox jumps over the lazy dog")
}

// Moving the selection cancels a load under way, and its late outcome is
// dropped: the other change stays shown.
func TestLoadFullDiffCancelledBySelection(t *testing.T) {
	_, _, c := largeEdit()
	other := diff.Change{Path: "z.txt", Kind: diff.Added, After: fileEntry([]byte("z\n")), TextDiff: "--- /dev/null\n+++ b/z.txt\n@@ -0,0 +1 @@\n+z\n"}
	r := &report.Report{Verdict: report.Fail, Changes: []diff.Change{c, other}}
	r.Evaluate()
	l := newLoader()
	l.blockUntilEnded = true
	v, _ := newTestView(t, r, Options{LoadContents: l.load})
	ui := make(uiLoop, 4)
	v.detail.do = ui.do
	v.Select(0)
	test.Tap(v.detail.bar.load)
	<-l.started
	v.Select(1)
	if p := <-l.ended; p != c.Path {
		t.Fatalf("ended %s", p)
	}
	ui.next() // the cancelled load's outcome: dropped
	if v.detail.change != 1 || len(uitest.TextsReading(v.detail.diff, "+z")) != 1 {
		t.Errorf("the selected change is not shown: %s", uitest.AllText(v.detail.diff))
	}
	if v.detail.bar.Status() != "" {
		t.Errorf("status %q for a change with nothing to load", v.detail.bar.Status())
	}
	// Back on the large file, it can be loaded again; a loader's error is
	// said as it is.
	l.blockUntilEnded = false
	v.Select(0)
	if !v.detail.bar.load.Visible() || v.detail.bar.Status() != "Cancelled." {
		t.Errorf("back on the cancelled change: load %v, status %q", v.detail.bar.load.Visible(), v.detail.bar.Status())
	}
	test.Tap(v.detail.bar.load)
	<-l.started
	l.release <- struct{}{}
	ui.next()
	if s := v.detail.bar.Status(); s != "Full diff unavailable: the before-content of data/big.log was not kept." {
		t.Errorf("status %q", s)
	}
}

// A one-line edit of a 40 KiB minified file: the report cut each line at
// 4 KiB (said by a cut line) and both lines are shown; the full diff shows
// both lines whole.
func TestLoadFullDiffLongLine(t *testing.T) {
	line := strings.Repeat("var a=1;function f(){return a+1};", 40<<10/34)
	before, after := []byte(line+"\n"), []byte(strings.Replace(line, "a+1};var a=1;function", "a+2};var a=1;function", 1)+"\n")
	d, _ := textdiff.Lines(before, after, "app.min.js")
	c := diff.Change{Path: "app.min.js", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
		Before: fileEntry(before), After: fileEntry(after), TextDiff: d}
	r := &report.Report{Verdict: report.Fail, Changes: []diff.Change{c}}
	r.Evaluate()
	l := newLoader()
	l.contents[c.Path] = [2][]byte{before, after}
	close(l.release)
	v, _ := newTestView(t, r, Options{LoadContents: l.load})
	ui := make(uiLoop, 4)
	v.detail.do = ui.do
	v.Select(0)
	var added string
	for _, x := range v.detail.diff.Lines() {
		if x.Kind == LineAdded {
			added = x.Text
		}
	}
	if !strings.HasPrefix(added, "+var a=1;function f(){return a+2};") {
		t.Fatalf("the added line is not shown: %.60q", added)
	}
	if !v.detail.bar.load.Visible() {
		t.Fatal("a cut diff offers no Load full diff")
	}
	test.Tap(v.detail.bar.load)
	<-l.started
	ui.next()
	var cuts int
	added = ""
	for _, x := range v.detail.diff.Lines() {
		switch x.Kind {
		case LineAdded:
			added = x.Text
		case LineCut:
			cuts++
		}
	}
	if added != "+"+string(after[:len(after)-1]) || cuts != 0 {
		t.Errorf("full diff: added line of %d bytes (want %d), %d cut lines", len(added), len(after), cuts)
	}
}

// The browser has only the report: no Load full diff, and the card says
// where a full diff can be had.
func TestNoLoadFullDiffWithoutContents(t *testing.T) {
	_, _, c := largeEdit()
	r := &report.Report{Verdict: report.Fail, Changes: []diff.Change{c}}
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	v.Select(0)
	if v.detail.bar.load.Visible() {
		t.Error("Load full diff without a content loader")
	}
	said := false
	uitest.Walk(v.detail.body, func(o fyne.CanvasObject) {
		if rt, ok := o.(*widget.RichText); ok && rt.String() == noFullDiff {
			said = true
		}
	})
	if !said {
		t.Errorf("the card does not say where a full diff can be had: %s", uitest.AllText(v.detail.body))
	}
}

// A full diff loaded in one report is never shown for another report's
// change at the same position: opening another report forgets it, and it
// is kept by the change's path, not its place in the list.
func TestFullDiffNotShownForAnotherReport(t *testing.T) {
	line := strings.Repeat("var a=1;function f(){return a+1};", 40<<10/34)
	before, after := []byte(line+"\n"), []byte(strings.Replace(line, "a+1};var a=1;function", "a+2};var a=1;function", 1)+"\n")
	d, _ := textdiff.Lines(before, after, "assets/app.min.js")
	minified := diff.Change{Path: "assets/app.min.js", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
		Before: fileEntry(before), After: fileEntry(after), TextDiff: d}
	a := &report.Report{Verdict: report.Fail, Changes: []diff.Change{minified}}
	a.Evaluate()
	l := newLoader()
	l.contents[minified.Path] = [2][]byte{before, after}
	close(l.release)
	v, _ := newTestView(t, a, Options{LoadContents: l.load})
	ui := make(uiLoop, 4)
	v.detail.do = ui.do
	v.Select(0)
	test.Tap(v.detail.bar.load)
	<-l.started
	ui.next()
	if h := header(v.detail.diff); h != "--- a/assets/app.min.js" {
		t.Fatalf("the full diff of the first report: header %q", h)
	}

	// Another run: its first change is a binary file (no diff, nothing to
	// load), its second a text edit.
	logo := diff.Change{Path: "docs/logo.png", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
		Before: fileEntry([]byte{0, 1}), After: fileEntry([]byte{0, 2}), DiffNote: diff.NoteBinary}
	conf := diff.Change{Path: "src/conf.txt", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
		Before: fileEntry([]byte("a\n")), After: fileEntry([]byte("b\n")),
		TextDiff: "--- a/src/conf.txt\n+++ b/src/conf.txt\n@@ -1 +1 @@\n-a\n+b\n"}
	b := &report.Report{Verdict: report.Fail, Changes: []diff.Change{logo, conf}}
	b.Evaluate()
	v.SetReport(b)
	v.Select(0)
	if txt := uitest.AllText(v.detail.body); strings.Contains(txt, "app.min.js") {
		t.Errorf("the other report's first change shows the first report's diff: %.200s", txt)
	}
	if s := v.detail.bar.Status(); strings.Contains(s, "Full diff") {
		t.Errorf("the bar of the other report says %q", s)
	}
	v.Select(1)
	if h := header(v.detail.diff); h != "--- a/src/conf.txt" {
		t.Errorf("the other report's second change: header %q", h)
	}

	// The same run opened again (a new report, as reopening gives): the
	// full diff is not carried over either.
	a2 := a.Clone()
	v.SetReport(a2)
	v.Select(0)
	if !v.detail.bar.load.Visible() || strings.Contains(v.detail.bar.Status(), "Full diff:") {
		t.Errorf("reopened: load %v, status %q", v.detail.bar.load.Visible(), v.detail.bar.Status())
	}
	if h := header(v.detail.diff); h != "--- a/assets/app.min.js" {
		t.Errorf("reopened: header %q", h)
	}
}

// header is the first header line of the diff shown ("" for none).
func header(dv *DiffView) string {
	for _, l := range dv.Lines() {
		if l.Kind == LineHeader {
			return l.Text
		}
	}
	return ""
}

// A one-token edit in the middle of a 40 KiB line, as the gate reports it:
// the app shows the removed and the added line around the change, the old
// and the new token marked as changed words.
func TestLongLineEditVisibleInApp(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 40<<10; i++ {
		fmt.Fprintf(&sb, "v%d=x%d;", i, i)
	}
	line := sb.String()
	before, after := []byte(line+"\n"), []byte(strings.Replace(line, "v1200=x1200;", "v1200=EDITED;", 1)+"\n")
	d, _ := textdiff.Lines(before, after, "assets/app.min.js")
	c := diff.Change{Path: "assets/app.min.js", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
		Before: fileEntry(before), After: fileEntry(after), TextDiff: d}
	r := &report.Report{Verdict: report.Fail, Changes: []diff.Change{c}}
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	v.Select(0)
	var del, add string
	for _, l := range v.diffLines() {
		var marked string
		for _, p := range l.pieces {
			if p.changed {
				marked += p.text
			}
		}
		switch l.Kind {
		case LineRemoved:
			del = marked
			if !strings.HasPrefix(l.Text, "-…") || !strings.Contains(l.Text, "v1200=x1200;") {
				t.Errorf("removed line %.80q", l.Text)
			}
		case LineAdded:
			add = marked
			if !strings.HasPrefix(l.Text, "+…") || !strings.Contains(l.Text, "v1200=EDITED;") {
				t.Errorf("added line %.80q", l.Text)
			}
		}
	}
	if !strings.Contains(del, "x1200") || !strings.Contains(add, "EDITED") {
		t.Errorf("changed words: removed %q, added %q", del, add)
	}
}

// Load full diff of a one-token edit far along a 40 KiB line: the changed
// words are out of view until ] goes to the change, which brings them in
// view (the view scrolls along the line); [ comes back to the start.
func TestFullDiffNextChangeKey(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 40<<10; i++ {
		fmt.Fprintf(&sb, "v%d=x%d;", i, i)
	}
	line := sb.String()
	before, after := []byte(line+"\n"), []byte(strings.Replace(line, "v3000=x3000;", "v3000=EDITED;", 1)+"\n")
	d, _ := textdiff.Lines(before, after, "assets/app.min.js")
	c := diff.Change{Path: "assets/app.min.js", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
		Before: fileEntry(before), After: fileEntry(after), TextDiff: d}
	r := &report.Report{Verdict: report.Fail, Changes: []diff.Change{c}}
	r.Evaluate()
	l := newLoader()
	l.contents[c.Path] = [2][]byte{before, after}
	close(l.release)
	v, _ := newTestView(t, r, Options{LoadContents: l.load})
	ui := make(uiLoop, 4)
	v.detail.do = ui.do
	v.Select(0)
	test.Tap(v.detail.bar.load)
	<-l.started
	ui.next()
	dv := v.detail.diff
	drawn := func() string {
		var b strings.Builder
		for _, tx := range uitest.Texts(dv) {
			b.WriteString(tx.Text)
		}
		return b.String()
	}
	if strings.Contains(drawn(), "EDITED") {
		t.Fatal("the change is in view before ]")
	}
	dv.TypedRune(']')
	s, ok := dv.Stop()
	if !ok || dv.Lines()[s.Line].Kind != LineRemoved || !strings.Contains(drawn(), "EDITED") || !strings.Contains(drawn(), "x3000") {
		t.Fatalf("after ]: stop %+v %v, offset %v, drawn %.200q", s, ok, dv.scroll.Offset, drawn())
	}
	if dv.nextChange(1) {
		t.Error("a second change in a diff of one")
	}
	// Shown again (the full diff kept), from the list: ] goes to the
	// change in the diff too.
	v.Select(0)
	if _, ok := dv.Stop(); ok || strings.Contains(drawn(), "EDITED") {
		t.Fatal("shown again: not back at the start")
	}
	v.TypedRune(']')
	if _, ok := dv.Stop(); !ok || !strings.Contains(drawn(), "EDITED") {
		t.Error("] from the list did not go to the change")
	}
}
