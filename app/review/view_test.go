package review

import (
	"bytes"
	"fmt"
	"image/color"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

func TestBannerFail(t *testing.T) {
	v, _ := newTestView(t, DemoReport(), Options{})
	b := v.Banner()
	verdict := uitest.OneText(t, b, "FAIL")
	wantColor(t, "FAIL text", verdict.Color, theme.ColorNameError)
	if !reddish(verdict.Color) {
		t.Errorf("FAIL is drawn in %v, not red", verdict.Color)
	}
	if !uitest.SameColor(b.accent.FillColor, themeColor(theme.ColorNameError)) {
		t.Errorf("accent bar %v, want the error color", b.accent.FillColor)
	}
	for _, reason := range []string{"5 unexpected changes", "1 risky change", "1 leftover process", "pid 4211   sleep 300"} {
		uitest.OneText(t, b, reason)
	}
	if len(uitest.TextsReading(b, "PASS")) != 0 {
		t.Error("a failing banner shows PASS")
	}
}

func TestBannerPass(t *testing.T) {
	r := cleanReport()
	r.Apply(policy.MustParse("logs/", "config.json", "src/", "build.lock", "symlink-escape:cache/"),
		[]string{"logs/", "config.json", "src/", "build.lock", "symlink-escape:cache/"})
	if r.Verdict != report.Pass {
		t.Fatalf("fixture verdict %s %v", r.Verdict, r.Reasons)
	}
	v, _ := newTestView(t, r, Options{})
	b := v.Banner()
	verdict := uitest.OneText(t, b, "PASS")
	wantColor(t, "PASS text", verdict.Color, theme.ColorNameSuccess)
	if !greenish(verdict.Color) {
		t.Errorf("PASS is drawn in %v, not green", verdict.Color)
	}
	if !uitest.SameColor(b.accent.FillColor, themeColor(theme.ColorNameSuccess)) {
		t.Errorf("accent bar %v, want the success color", b.accent.FillColor)
	}
	uitest.OneText(t, b, "Every change is covered by the allowlist (7 allowed).")
}

func TestBannerProcessReasons(t *testing.T) {
	r := cleanReport()
	r.Process.TimedOut, r.Process.Timeout = true, "2s"
	r.Process.Leftovers = []report.Leftover{{PID: 77, Cmd: "python3 -m http.server"}}
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	for _, s := range []string{"script timed out", "limit 2s", "1 leftover process", "pid 77   python3 -m http.server"} {
		uitest.OneText(t, v.Banner(), s)
	}
	r.Process.TimedOut, r.Process.ExitCode, r.Process.Leftovers = false, 3, nil
	r.Evaluate()
	v.SetReport(r)
	uitest.OneText(t, v.Banner(), "script exited 3")
}

func TestRowColorsPerKind(t *testing.T) {
	v, _ := newTestView(t, DemoReport(), Options{})
	v.setTreeMode(false)
	list := v.changes.list
	cases := []struct {
		path  string
		name  fyne.ThemeColorName
		check func(color.Color) bool
	}{
		{"cache/passwd", style.Added, func(c color.Color) bool { return greenish(c) }},
		{"build.lock", style.Removed, func(c color.Color) bool { return reddish(c) }},
		{"config.json", style.Changed, func(c color.Color) bool { return amber(c) }},
		{"logs/run.log", style.Allowed, nil},
		{"logs", style.Allowed, nil},
	}
	for _, c := range cases {
		txt := uitest.OneText(t, list, c.path)
		wantColor(t, c.path, txt.Color, c.name)
		if c.check != nil && !c.check(txt.Color) {
			t.Errorf("%s drawn in %v: wrong hue", c.path, txt.Color)
		}
		if c.name != style.Allowed && !txt.TextStyle.Bold {
			t.Errorf("violation %s is not bold", c.path)
		}
	}
	risk := uitest.OneText(t, list, "⚠ symlink-escape")
	wantColor(t, "risk badge", risk.Color, style.Risk)
	allowed := uitest.TextsReading(list, "allowed · logs/")
	if len(allowed) != 2 {
		t.Errorf("want 2 'allowed · logs/' badges, got %d", len(allowed))
	}
	for _, a := range allowed {
		wantColor(t, "allowed badge", a.Color, style.Muted)
	}
	uitest.OneText(t, list, "mode 0644 -> 0755")
}

func TestTreeRows(t *testing.T) {
	v, _ := newTestView(t, DemoReport(), Options{})
	if !v.treeMode() {
		t.Fatal("a small report should open as a tree")
	}
	tree := v.changes.list
	// Folders holding violations are open, the fully allowed logs/ is not.
	if !v.folderOpen("src") || !v.folderOpen("cache") {
		t.Error("folders with violations should start open")
	}
	if v.folderOpen("logs") {
		t.Error("a folder of allowed changes should start collapsed")
	}
	wantColor(t, "tree leaf app.py", uitest.OneText(t, tree, "app.py").Color, style.Changed)
	wantColor(t, "folder badge", uitest.OneText(t, tree, "2 changed, violations").Color, style.FailColor)
	wantColor(t, "allowed folder badge", uitest.OneText(t, tree, "2 added, all allowed").Color, style.Muted)
	uitest.OneText(t, tree, "1 added, violation, ⚠ 1 risky")
	uitest.OneText(t, tree, "src/")
	if len(uitest.TextsReading(tree, "run.log")) != 0 {
		t.Error("run.log is inside the collapsed logs/ and must not be drawn")
	}
}

func TestCountersFilter(t *testing.T) {
	v, _ := newTestView(t, DemoReport(), Options{})
	v.setTreeMode(false)
	for chip, want := range map[*Chip]string{v.filters.added: "Added 3", v.filters.removed: "Removed 1", v.filters.changed: "Changed 3",
		v.filters.violations: "Violations 5", v.filters.all: "Allowed 2"} {
		if chip.Text() != want {
			t.Errorf("chip %q, want %q", chip.Text(), want)
		}
		uitest.OneText(t, chip, strings.Fields(want)[0])
		uitest.OneText(t, chip, strings.Fields(want)[1])
	}
	wantColor(t, "Added chip", uitest.OneText(t, v.filters.added, "Added").Color, style.Added)

	test.Tap(v.filters.added) // hide added changes
	if v.Filter().Added {
		t.Fatal("tapping Added did not switch it off")
	}
	if len(v.shownRows()) != 4 {
		t.Errorf("with Added off %d changes shown, want 4", len(v.shownRows()))
	}
	if len(uitest.TextsReading(v.changes.list, "cache/passwd")) != 0 || len(uitest.TextsReading(v.changes.list, "logs/run.log")) != 0 {
		t.Error("added changes still drawn with Added off")
	}
	uitest.OneText(t, v.changes.list, "config.json")
	wantColor(t, "switched-off chip", uitest.OneText(t, v.filters.added, "Added").Color, style.Muted)

	test.Tap(v.filters.added)
	test.Tap(v.filters.violations) // only allowed changes
	got := []string{}
	for _, i := range v.shownRows() {
		got = append(got, v.Report().Changes[i].Path)
	}
	if strings.Join(got, ",") != "logs,logs/run.log" {
		t.Errorf("Violations off shows %v", got)
	}
	if len(uitest.TextsReading(v.changes.list, "config.json")) != 0 {
		t.Error("config.json still drawn with Violations off")
	}
	test.Tap(v.filters.all) // nothing left
	uitest.OneText(t, v, "No change matches the filter.")
}

func TestTextFilter(t *testing.T) {
	v, w := newTestView(t, DemoReport(), Options{})
	v.setTreeMode(false)
	w.Canvas().Focus(v.filters.search)
	test.Type(v.filters.search, "SRC/")
	var got []string
	for _, i := range v.shownRows() {
		got = append(got, v.Report().Changes[i].Path)
	}
	if strings.Join(got, ",") != "src/app.py,src/vendor/libfast.so" {
		t.Errorf("filter SRC/ shows %v", got)
	}
	uitest.OneText(t, v.changes.list, "src/app.py")
	if len(uitest.TextsReading(v.changes.list, "config.json")) != 0 {
		t.Error("config.json drawn despite the filter")
	}
	uitest.OneText(t, v.changes.hiddenBar, "5 changes hidden by filters —")
	if got := uitest.RichString(v.changes.shown); got != "Up/Down PgUp/PgDn  n/p violation  v viewed  Enter diff" {
		t.Errorf("footer %q", got)
	}

	// The tree shows the same subset, with the folders on the way open.
	v.setTreeMode(true)
	if !v.folderOpen("src/vendor") {
		t.Error("a text filter should open the matching folders")
	}
	uitest.OneText(t, v.changes.list, "libfast.so")
}

func TestAllowViolationFlipsVerdict(t *testing.T) {
	var approved []string
	var note string
	v, w := newTestView(t, cleanReport(), Options{OnApprove: func(r *report.Report, a []string, n string) error {
		approved, note = a, n
		return nil
	}})
	r := v.Report()
	if r.Verdict != report.Fail {
		t.Fatal("fixture should fail")
	}
	// Allow config.json through the Allow… menu, exactly as a reviewer does.
	v.Select(indexOf(t, r, "config.json"))
	if !v.detail.allowBtn.Visible() {
		t.Fatal("no Allow button for a violation")
	}
	test.Tap(v.detail.allowBtn)
	uitest.TapMenuItem(t, w.Canvas(), "Exact path:   config.json")
	if got := v.Draft(); strings.Join(got, ",") != "logs/,config.json" {
		t.Fatalf("draft %v, want logs/ and config.json", got)
	}
	if c := r.Changes[indexOf(t, r, "config.json")]; !c.Allowed || c.Rule != "config.json" {
		t.Errorf("config.json allowed=%v rule=%q after Allow", c.Allowed, c.Rule)
	}
	if v.detail.allowBtn.Visible() {
		t.Error("the Allow button stays for an allowed change")
	}
	uitest.OneText(t, v.detail.status, "Allowed by entry ")
	wantColor(t, "allowed row", uitest.OneText(t, v.changes.list, "config.json").Color, style.Allowed)
	uitest.OneText(t, v.Banner(), "FAIL")

	// Allow the folder of src/ changes via the menu, then the rest.
	v.Select(indexOf(t, r, "src/app.py"))
	test.Tap(v.detail.allowBtn)
	uitest.TapMenuItem(t, w.Canvas(), "Folder src/:   src/")
	v.Select(indexOf(t, r, "cache/passwd"))
	if s := suggestions(&r.Changes[indexOf(t, r, "cache/passwd")]); s[0].Entry != "symlink-escape:cache/passwd" {
		t.Errorf("risky change suggestion %q, want one naming the risk", s[0].Entry)
	}
	test.Tap(v.detail.allowBtn)
	uitest.TapMenuItem(t, w.Canvas(), "Exact path:   symlink-escape:cache/passwd")
	v.Select(indexOf(t, r, "build.lock"))
	test.Tap(v.detail.allowBtn)
	uitest.TapMenuItem(t, w.Canvas(), "Exact path, only when removed")

	if r.Verdict != report.Pass {
		t.Fatalf("verdict %s %v after allowing every violation", r.Verdict, r.Reasons)
	}
	want := "logs/,config.json,src/,symlink-escape:cache/passwd,removed:build.lock"
	if got := strings.Join(v.Draft(), ","); got != want {
		t.Errorf("draft %s, want %s", got, want)
	}
	if strings.Join(r.Allowlist, ",") != want {
		t.Errorf("report allowlist %v", r.Allowlist)
	}
	verdict := uitest.OneText(t, v.Banner(), "PASS")
	wantColor(t, "PASS after allowing", verdict.Color, theme.ColorNameSuccess)
	if v.filters.violations.Text() != "Violations 0" || v.filters.all.Text() != "Allowed 7" {
		t.Errorf("counters %q %q", v.filters.violations.Text(), v.filters.all.Text())
	}

	// Approve: the history seam gets the draft and the note.
	test.Type(v.side.note, "config tweak is intended")
	test.Tap(v.side.approveBtn)
	if strings.Join(approved, ",") != want || note != "config tweak is intended" {
		t.Errorf("OnApprove got %v %q", approved, note)
	}
	if !strings.HasPrefix(v.Decision(), "Approved at ") || !strings.HasSuffix(v.Decision(), ": allowlist with 5 entries saved.") {
		t.Errorf("decision line %q", v.Decision())
	}
}

func TestReject(t *testing.T) {
	var got string
	calls := 0
	v, _ := newTestView(t, DemoReport(), Options{OnReject: func(r *report.Report, n string) error {
		calls++
		got = n
		return nil
	}})
	test.Type(v.side.note, "edits config.json")
	test.Tap(v.side.rejectBtn)
	if calls != 1 || got != "edits config.json" {
		t.Errorf("OnReject called %d times with %q", calls, got)
	}
	if !strings.HasPrefix(v.Decision(), "Rejected at ") {
		t.Errorf("decision line %q", v.Decision())
	}
	if v.side.approveBtn.Visible() {
		t.Error("Approve shown without an OnApprove callback")
	}
}

func TestBadAllowlistEntryIsMarked(t *testing.T) {
	v, w := newTestView(t, cleanReport(), Options{OnApprove: func(*report.Report, []string, string) error { return nil }})
	before := v.Report().Count()
	e := v.Editor()
	w.Canvas().Focus(e.Entry())
	e.Entry().CursorRow, e.Entry().CursorColumn = 1, 0
	test.Type(e.Entry(), "/etc/passwd\nadded:config.json\naddded:x\n")
	probs := e.Problems()
	if len(probs) != 2 {
		t.Fatalf("problems %v, want 2", probs)
	}
	if probs[0].Line != 2 || probs[0].Entry != "/etc/passwd" || !strings.Contains(probs[0].Message, "relative to the workspace") {
		t.Errorf("first problem %+v", probs[0])
	}
	if probs[1].Line != 4 || !strings.Contains(probs[1].Message, `unknown kind or risk "addded"`) {
		t.Errorf("second problem %+v", probs[1])
	}
	// The parser's messages are drawn, in the error color.
	for _, p := range probs {
		// Long messages wrap: the first rendered line starts the message.
		var hit *canvas.Text
		for _, tx := range uitest.Texts(e) {
			if strings.HasPrefix(p.String(), tx.Text) && strings.HasPrefix(tx.Text, fmt.Sprintf("line %d: ", p.Line)) {
				hit = tx
			}
		}
		if hit == nil {
			t.Fatalf("problem %q not drawn; texts: %s", p, uitest.AllText(e))
		}
		wantColor(t, "problem line", hit.Color, style.FailColor)
	}
	if e.Entry().Validate() == nil {
		t.Error("the entry does not report a validation error")
	}
	if !v.side.approveBtn.Disabled() {
		t.Error("Approve enabled while the allowlist has bad entries")
	}
	// Valid entries still apply: added:config.json does not cover a change,
	// so the counts stay; the bad ones are ignored.
	if got := v.Report().Count(); got != before {
		t.Errorf("counts changed %+v -> %+v", before, got)
	}
	if strings.Join(v.Report().Allowlist, ",") != "logs/,added:config.json" {
		t.Errorf("applied allowlist %v", v.Report().Allowlist)
	}
	// Fixing the lines clears the marks.
	e.SetText("logs/\nchanged:config.json\n")
	if len(e.Problems()) != 0 || e.Entry().Validate() != nil || v.side.approveBtn.Disabled() {
		t.Error("problems remain after fixing the allowlist")
	}
	if !v.Report().Changes[indexOf(t, v.Report(), "config.json")].Allowed {
		t.Error("changed:config.json does not allow the change")
	}
}

func TestDetailShowsColoredDiff(t *testing.T) {
	v, _ := newTestView(t, DemoReport(), Options{})
	r := v.Report()
	v.Select(indexOf(t, r, "config.json"))
	d := v.detail.diff
	if !d.Visible() || len(d.Lines()) == 0 {
		t.Fatal("no diff shown for config.json")
	}
	// An edited line is drawn in pieces (its changed words marked): every
	// piece in the line's colour.
	for _, tx := range drawnLine(t, d, `+  "debug": true,`) {
		wantColor(t, "added line", tx.Color, style.Added)
		if !greenish(tx.Color) || !tx.TextStyle.Monospace {
			t.Error("added line not green monospace")
		}
	}
	for _, tx := range drawnLine(t, d, `-  "debug": false,`) {
		wantColor(t, "removed line", tx.Color, style.Removed)
		if !reddish(tx.Color) {
			t.Error("removed line not red")
		}
	}
	wantColor(t, "hunk header", uitest.OneText(t, d, "@@ -1,9 +1,10 @@").Color, style.Muted)
	wantColor(t, "context line", uitest.OneText(t, d, `   "name": "demo-service",`).Color, theme.ColorNameForeground)
	// Line numbers: old 3 for the removed line, new 3 for the added one,
	// and the tinted row backgrounds.
	var tinted, reds int
	uitest.Walk(d, func(o fyne.CanvasObject) {
		if rect, ok := o.(*canvas.Rectangle); ok {
			if uitest.SameColor(rect.FillColor, themeColor(style.ColorNameAddedBackground)) {
				tinted++
			}
			if uitest.SameColor(rect.FillColor, themeColor(style.ColorNameRemovedBackground)) {
				reds++
			}
		}
	})
	if tinted != 3 || reds != 2 {
		t.Errorf("row tints: %d added, %d removed; want 3 and 2", tinted, reds)
	}
	lines := d.Lines()
	var sawOld3, sawNew3 bool
	for _, l := range lines {
		if l.Kind == LineRemoved && l.Old == 3 && strings.Contains(l.Text, "false") {
			sawOld3 = true
		}
		if l.Kind == LineAdded && l.New == 3 && strings.Contains(l.Text, "true") {
			sawNew3 = true
		}
	}
	if !sawOld3 || !sawNew3 {
		t.Errorf("line numbers wrong: %+v", lines[:6])
	}
	if len(uitest.TextsReading(d, "11")) != 1 {
		t.Error("the new line number 11 is not drawn")
	}
	// Metadata (expanded): the size changed and is highlighted.
	v.detail.setMetaOpen(true)
	uitest.OneText(t, v.detail.meta, "162 B")
	wantColor(t, "changed size", uitest.OneText(t, v.detail.meta, "214 B").Color, style.Changed)
	uitest.OneText(t, v.detail.status, "Violation: no allowlist entry covers this change")
}

func TestDetailBinaryAndMode(t *testing.T) {
	v, _ := newTestView(t, DemoReport(), Options{})
	r := v.Report()
	v.Select(indexOf(t, r, "src/vendor/libfast.so"))
	if len(v.detail.diff.Lines()) != 0 {
		t.Error("a binary change shows a diff")
	}
	uitest.OneText(t, v.detail.body, "Content changed; no text diff (binary or large file).")
	uitest.OneText(t, v.detail.body, "Size 18.0 KiB ")
	uitest.OneText(t, v.detail.body, " 20.0 KiB (+2.0 KiB)")
	v.detail.setMetaOpen(true)
	uitest.OneText(t, v.detail.meta, "SHA-256")

	v.Select(indexOf(t, r, "src/app.py"))
	uitest.OneText(t, v.detail.body, "0644 rw-r--r--")
	uitest.OneText(t, v.detail.body, "0755 rwxr-xr-x")
	wantColor(t, "changed mode", uitest.OneText(t, v.detail.meta, "0755 rwxr-xr-x").Color, style.Changed)

	v.Select(indexOf(t, r, "cache/passwd"))
	uitest.OneText(t, v.detail.status, "⚠ symlink-escape")
	uitest.OneText(t, v.detail.body, "/etc/passwd")
}

func TestKeyboard(t *testing.T) {
	v, w := newTestView(t, DemoReport(), Options{})
	v.setTreeMode(false)
	r := v.Report()
	v.FocusChanges()
	if w.Canvas().Focused() != v.changes.list {
		t.Fatal("the list does not take focus")
	}
	// Ranked as the reports rank them: the risk, the edits, the removal.
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
	if p := r.Changes[max(0, v.Selected())].Path; p != "cache/passwd" {
		t.Fatalf("Down selects %s, want the first change (the risk)", p)
	}
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
	if p := r.Changes[v.Selected()].Path; p != "config.json" {
		t.Errorf("second Down at %s", p)
	}
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyUp})
	if p := r.Changes[v.Selected()].Path; p != "cache/passwd" {
		t.Errorf("Up at %s", p)
	}
	// n / p walk the violations (logs and logs/run.log are allowed).
	var seen []string
	for i := 0; i < 6; i++ {
		w.Canvas().Focused().TypedRune('n')
		seen = append(seen, r.Changes[v.Selected()].Path)
	}
	want := "config.json,src/app.py,src/vendor/libfast.so,build.lock,cache/passwd,config.json"
	if strings.Join(seen, ",") != want {
		t.Errorf("n visits %v, want %s", seen, want)
	}
	w.Canvas().Focused().TypedRune('p')
	if p := r.Changes[v.Selected()].Path; p != "cache/passwd" {
		t.Errorf("p goes to %s", p)
	}
	// Enter opens the detail: with a text diff, the diff takes focus and
	// shows it; Escape returns to the list.
	v.Select(indexOf(t, r, "config.json"))
	w.Canvas().Focus(v.changes.list)
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if w.Canvas().Focused() != v.detail.diff || !v.detail.diff.Focused() {
		t.Fatalf("Enter focused %T", w.Canvas().Focused())
	}
	if !uitest.SameColor(test.WidgetRenderer(v.detail.diff).(*diffViewRenderer).border.StrokeColor, themeColor(theme.ColorNameFocus)) {
		t.Error("the focused diff has no focus border")
	}
	w.Canvas().Focused().TypedRune('n')
	if p := r.Changes[v.Selected()].Path; p != "src/app.py" {
		t.Errorf("n inside the diff goes to %s", p)
	}
	v.Select(indexOf(t, r, "config.json"))
	v.focusDetail()
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if w.Canvas().Focused() != v.changes.list {
		t.Errorf("Escape focused %T", w.Canvas().Focused())
	}
	// Keys nobody claims reach the view through TypedKey / TypedRune.
	w.Canvas().Unfocus()
	if !v.TypedRune('n') || r.Changes[v.Selected()].Path != "src/app.py" {
		t.Error("TypedRune n did not move to the next violation")
	}
}

func TestTreeKeyboard(t *testing.T) {
	v, w := newTestView(t, DemoReport(), Options{})
	r := v.Report()
	v.FocusChanges()
	if w.Canvas().Focused() != v.changes.list {
		t.Fatal("the tree does not take focus")
	}
	// n follows the tree's order: folders first, depth first, a folder's
	// files ranked (the edit config.json before the removed build.lock).
	var seen []string
	for i := 0; i < 5; i++ {
		w.Canvas().Focused().TypedRune('n')
		seen = append(seen, r.Changes[v.Selected()].Path)
	}
	if got := strings.Join(seen, ","); got != "cache/passwd,src/vendor/libfast.so,src/app.py,config.json,build.lock" {
		t.Errorf("tree n order %s", got)
	}
	// Down from build.lock's predecessor moves the selection.
	v.Select(indexOf(t, r, "config.json"))
	w.Canvas().Focus(v.changes.list)
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
	if p := r.Changes[v.Selected()].Path; p != "build.lock" {
		t.Errorf("Down in the tree selected %s", p)
	}
}

func TestSuggestions(t *testing.T) {
	file := &snapshot.Entry{Type: snapshot.File, Perm: 0o644}
	cases := []struct {
		c    diff.Change
		want []string
	}{
		{diff.Change{Path: "config.json", Kind: diff.Changed, Before: file, After: file},
			[]string{"config.json", "changed:config.json", "*.json"}},
		{diff.Change{Path: "src/app.py", Kind: diff.Changed, Before: file, After: file},
			[]string{"src/app.py", "changed:src/app.py", "src/", "src/*.py"}},
		{diff.Change{Path: "out", Kind: diff.Added, After: &snapshot.Entry{Type: snapshot.Dir}},
			[]string{"out/", "added:out"}},
		{diff.Change{Path: "a/b[1]*.txt", Kind: diff.Added, After: file},
			[]string{`a/b\[1\]\*.txt`, `added:a/b\[1\]\*.txt`, "a/", "a/*.txt"}},
		{diff.Change{Path: "!x", Kind: diff.Added, After: file},
			[]string{"./!x", "added:!x", "*"}},
		{diff.Change{Path: "bin/tool", Kind: diff.Changed, Before: file, After: &snapshot.Entry{Type: snapshot.File, Perm: 0o4755}, Risk: diff.Setuid},
			[]string{"setuid:bin/tool", "changed,setuid:bin/tool", "setuid:bin/", "setuid:bin/*"}},
	}
	for _, c := range cases {
		var got []string
		for _, s := range suggestions(&c.c) {
			got = append(got, s.Entry)
			// Every suggestion parses and allows the change.
			p, err := policy.Parse([]string{s.Entry})
			if err != nil {
				t.Errorf("%s: suggestion %q does not parse: %v", c.c.Path, s.Entry, err)
				continue
			}
			if !p.Decide(&c.c).Allowed {
				t.Errorf("%s: suggestion %q does not allow it", c.c.Path, s.Entry)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: suggestions %q, want %q", c.c.Path, got, c.want)
		}
	}
}

func TestParseUnified(t *testing.T) {
	lines := parseUnified("--- a/x\n+++ b/x\n@@ -10,3 +20,4 @@ func\n ctx\n-old\n+new\n+more\n\\ No newline at end of file\n")
	want := []DiffLine{
		{Kind: LineHeader, Text: "--- a/x"}, {Kind: LineHeader, Text: "+++ b/x"}, {Kind: LineHunk, Text: "@@ -10,3 +20,4 @@ func"},
		{Kind: LineContext, Old: 10, New: 20, Text: " ctx"}, {Kind: LineRemoved, Old: 11, Text: "-old"},
		{Kind: LineAdded, New: 21, Text: "+new"}, {Kind: LineAdded, New: 22, Text: "+more"},
		{Kind: LineNote, Text: `\ No newline at end of file`},
	}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", lines, want)
	}
	if got := parseUnified("@@ -1 +1 @@\n-a\tb\x1b[31m\n"); got[1].Text != "-a  b\\x1b[31m" {
		t.Errorf("control characters: %q", got[1].Text)
	}
}

func TestExportFormats(t *testing.T) {
	r := DemoReport()
	var buf bytes.Buffer
	if err := JSON.Write(r, &buf); err != nil {
		t.Fatal(err)
	}
	back, err := report.Parse(buf.Bytes())
	if err != nil || len(back.Changes) != len(r.Changes) {
		t.Fatalf("JSON export does not parse back: %v", err)
	}
	if JSON.FileName(r) != "diffgate-demo-workspace-20260914-102103.json" {
		t.Errorf("file name %s", JSON.FileName(r))
	}
	for _, f := range []Format{HTML, Markdown} {
		if !f.available() {
			t.Logf("%s writer not in this build", f.Label())
			continue
		}
		buf.Reset()
		if err := f.Write(r, &buf); err != nil || !strings.Contains(buf.String(), "config.json") {
			t.Errorf("%s export: %v", f.Label(), err)
		}
	}
	exported := []Format{}
	v, _ := newTestView(t, r, Options{Export: func(_ *report.Report, f Format) { exported = append(exported, f) }})
	test.Tap(v.side.exportBtns[JSON])
	if len(exported) != 1 || exported[0] != JSON {
		t.Errorf("export button calls %v", exported)
	}
}

// bigReport has n changes spread over folders, every third one a violation.
func bigReport(n int) *report.Report {
	file := &snapshot.Entry{Type: snapshot.File, Perm: 0o644, Size: 10}
	r := &report.Report{Schema: report.Schema, Verdict: report.Fail, Workspace: "/w", StartedAt: time.Now()}
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("pkg%02d/mod%03d/file%05d.go", i%40, i%300, i)
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content}, Before: file, After: file})
	}
	sortChanges(r.Changes)
	r.Apply(policy.MustParse("pkg0*/mod0*/"), []string{"pkg0*/mod0*/"})
	return r
}

func TestThousandsOfChanges(t *testing.T) {
	r := bigReport(20000)
	start := time.Now()
	v, w := newTestView(t, r, Options{})
	if !v.treeMode() {
		t.Errorf("20000 changes should open as a tree (up to %d)", treeLimit)
	}
	v.setTreeMode(true)
	v.setTreeMode(false)
	w.Canvas().Focus(v.filters.search)
	test.Type(v.filters.search, "file1")
	if n := len(v.shownRows()); n != 10000 {
		t.Errorf("filter file1 shows %d", n)
	}
	v.Allow("pkg1*/")
	// How long this takes is measured by make bench, not asserted here.
	t.Logf("building, filtering and re-evaluating 20000 changes took %s", time.Since(start))
	if c := v.Report().Count(); c.Violations+c.Allowed != 20000 {
		t.Errorf("counts %+v", c)
	}
}

func BenchmarkRefilter(b *testing.B) {
	r := bigReport(20000)
	m := newModel(r)
	f := defaultFilter()
	f.Text = "mod1"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.apply(f, true, nil)
	}
}

func sortChanges(cs []diff.Change) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].Path < cs[j].Path })
}

func TestNaturalOrder(t *testing.T) {
	names := []string{"mod10.o", "mod2.o", "mod1.o", "a", "mod02.o", "b10", "b9x"}
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	if got := strings.Join(names, " "); got != "a b9x b10 mod1.o mod2.o mod02.o mod10.o" && got != "a b9x b10 mod1.o mod02.o mod2.o mod10.o" {
		t.Errorf("order %s", got)
	}
}

// TestSuggestAllowlistButton: the button opens a dialog and changes
// nothing by itself. An added tree is offered ticked; every edit of a
// file that existed, removal and risk is on a line of its own, unticked.
// Add to draft with the tree alone leaves the run failing and says so;
// with every line ticked, the run passes and the decision line says the
// verdict changed. The entries are those "allowlist suggest" prints.
func TestSuggestAllowlistButton(t *testing.T) {
	r := cleanReport()
	dir, obj := &snapshot.Entry{Path: "out", Type: snapshot.Dir}, &snapshot.Entry{Path: "out/a.o", Type: snapshot.File}
	r.Changes = append(r.Changes, diff.Change{Path: "out", Kind: diff.Added, After: dir}, diff.Change{Path: "out/a.o", Kind: diff.Added, After: obj})
	r.Apply(policy.MustParse(r.Allowlist...), r.Allowlist)
	if r.Verdict != report.Fail {
		t.Fatalf("fixture verdict %s", r.Verdict)
	}
	want := policy.Suggest(r.Changes)
	v, w := newTestView(t, r, Options{OnApprove: func(*report.Report, []string, string) error { return nil }})
	before := v.Draft()
	open := func() *suggestDialog {
		t.Helper()
		test.Tap(v.side.suggestBtn)
		if v.side.suggest == nil || w.Canvas().Overlays().Top() == nil {
			t.Fatal("Suggest allowlist shows no dialog")
		}
		return v.side.suggest
	}
	s := open()
	if !slices.Equal(v.Draft(), before) || v.Report().Verdict != report.Fail {
		t.Fatalf("opening the dialog changed the draft %q or the verdict %s", v.Draft(), v.Report().Verdict)
	}
	var bulk, picks []string
	for _, c := range s.bulk {
		bulk = append(bulk, fmt.Sprintf("%s %v", c.Text, c.Checked))
	}
	for _, c := range s.picks {
		picks = append(picks, fmt.Sprintf("%s %v", c.Text, c.Checked))
	}
	if got := strings.Join(bulk, "\n"); got != "out/ true" {
		t.Errorf("bulk lines:\n%s", got)
	}
	if got := strings.Join(picks, "\n"); got != "REMOVED build.lock  ·  entry: build.lock false\n"+
		"⚠ symlink-escape · ADDED cache/passwd  ·  entry: symlink-escape:cache/passwd false\n"+
		"CHANGED config.json  ·  entry: config.json false\nCHANGED src/app.py  ·  entry: src/app.py false\n"+
		"CHANGED src/vendor/libfast.so  ·  entry: src/vendor/libfast.so false" {
		t.Errorf("lines to read:\n%s", got)
	}
	if got := segmentsText(s.outcome); got != "With the 1 entry ticked, the run still fails (5 violations left). Nothing is saved until you approve." {
		t.Errorf("outcome %q", got)
	}
	test.Tap(buttonNamed(t, w.Canvas().Overlays().Top(), "Add to draft"))
	if got := v.Draft(); !slices.Equal(got, append(slices.Clone(before), "out/")) || v.Report().Verdict != report.Fail {
		t.Fatalf("after Add to draft: draft %q, verdict %s", got, v.Report().Verdict)
	}
	if d := v.Decision(); d != "Suggest added 1 entry to the draft: the run still fails (5 violations left). Not saved until you approve." {
		t.Errorf("decision line %q", d)
	}

	// Every line ticked: the run passes, and the line says it changed.
	s = open()
	for _, c := range s.picks {
		c.SetChecked(true)
	}
	if got := segmentsText(s.outcome); !strings.Contains(got, "the run passes") {
		t.Errorf("outcome with every line ticked %q", got)
	}
	test.Tap(buttonNamed(t, w.Canvas().Overlays().Top(), "Add to draft"))
	if v.Report().Verdict != report.Pass || v.Report().Count().Violations != 0 {
		t.Fatalf("after the suggestion: verdict %s, reasons %v", v.Report().Verdict, v.Report().Reasons)
	}
	for _, e := range want {
		if !slices.Contains(v.Draft(), e) {
			t.Errorf("draft %q lacks %q (allowlist suggest)", v.Draft(), e)
		}
	}
	if d := v.Decision(); d != "Suggest added 5 entries to the draft: the run passes (it failed before). Not saved until you approve." {
		t.Errorf("decision line %q", d)
	}
	if !v.side.suggestBtn.Disabled() {
		t.Error("Suggest allowlist still enabled with nothing left to allow")
	}
}

// buttonNamed is the button labelled s under o.
func buttonNamed(t *testing.T, o fyne.CanvasObject, s string) *widget.Button {
	t.Helper()
	var found *widget.Button
	uitest.Walk(o, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == s {
			found = b
		}
	})
	if found == nil {
		t.Fatalf("no %q button", s)
	}
	return found
}

// TestDetailSaysWhyThereIsNoDiff: the detail view gives the report's
// diff_note in words.
func TestDetailSaysWhyThereIsNoDiff(t *testing.T) {
	r := DemoReport()
	i := indexOf(t, r, "src/vendor/libfast.so")
	r.Changes[i].DiffNote = diff.NoteNotKept
	v, _ := newTestView(t, r, Options{})
	v.Select(indexOf(t, v.Report(), "src/vendor/libfast.so"))
	uitest.OneText(t, v.detail.body, "Content changed; no text diff: the before-content was not kept.")
}

// TestReasonCountsGrouped: the banner's reasons group a large count as the
// chips do; small counts and other reasons are unchanged.
func TestReasonCountsGrouped(t *testing.T) {
	for in, want := range map[string]string{
		"4604 unexpected changes": "4,604 unexpected changes",
		"999 risky changes":       "999 risky changes",
		"script exited 3":         "script exited 3",
		"1 leftover process":      "1 leftover process",
		"12000 blocked actions":   "12,000 blocked actions",
	} {
		if got := groupedCount(in); got != want {
			t.Errorf("groupedCount(%q) = %q, want %q", in, got, want)
		}
	}
}
