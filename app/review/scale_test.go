package review

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/internal/count"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

// TestNoThemeOverrideInTheView: nothing the view rebuilds sits in a
// ThemeOverride (Fyne loads every font again for each override scope, and a
// refreshed override makes a new one: the detail grew the app by 10-20 MB
// per change looked at).
func TestNoThemeOverrideInTheView(t *testing.T) {
	v, _ := newTestView(t, DemoReport(), Options{})
	for i := range v.Report().Changes {
		v.Select(i)
		uitest.Walk(v, func(o fyne.CanvasObject) {
			if _, ok := o.(*container.ThemeOverride); ok {
				t.Fatalf("a ThemeOverride is drawn with change %s selected", v.Report().Changes[i].Path)
			}
		})
	}
}

// npmReport is an npm-install-like run: files files added in 10 packages
// under node_modules/ (with their folders), all violations, and two real
// edits: src/app.js and config.json changed.
func npmReport(files int) *report.Report {
	dir := &snapshot.Entry{Type: snapshot.Dir, Perm: 0o755}
	r := &report.Report{Schema: report.Schema, Workspace: "/w", StartedAt: time.Now()}
	add := func(p string, e *snapshot.Entry, text string) {
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Added, Aspects: []diff.Aspect{}, After: e, TextDiff: text})
	}
	add("node_modules", dir, "")
	for p := 0; p < 10; p++ {
		add(fmt.Sprintf("node_modules/pkg%d", p), dir, "")
	}
	for i := 0; i < files; i++ {
		add(fmt.Sprintf("node_modules/pkg%d/file%d.js", i%10, i),
			&snapshot.Entry{Type: snapshot.File, Perm: 0o644, Size: 40}, fmt.Sprintf("@@ -0,0 +1 @@\n+module.exports = %d;\n", i))
	}
	for _, p := range []string{"src/app.js", "config.json"} {
		f := &snapshot.Entry{Type: snapshot.File, Perm: 0o644, Size: 30}
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
			Before: f, After: f, TextDiff: "@@ -1 +1 @@\n-a\n+b\n"})
	}
	sortChanges(r.Changes)
	r.Evaluate()
	return r
}

// visibleRows are the texts of the rows of the list drawn inside its
// bounds, top to bottom.
func visibleRows(t *testing.T, v *View) []string {
	t.Helper()
	d := fyne.CurrentApp().Driver()
	top := d.AbsolutePositionForObject(v.changes.list).Y
	bottom := top + v.changes.list.Size().Height
	type hit struct {
		y    float32
		text string
	}
	var hits []hit
	uitest.Walk(v.changes.list, func(o fyne.CanvasObject) {
		r, ok := o.(*changeRow)
		if !ok || r.id == "" {
			return
		}
		y := d.AbsolutePositionForObject(r).Y
		if y >= top && y+r.Size().Height <= bottom {
			hits = append(hits, hit{y, r.seg.Text + "  " + r.badge.Text})
		}
	})
	sort.Slice(hits, func(a, b int) bool { return hits[a].y < hits[b].y })
	out := make([]string, len(hits))
	for k, h := range hits {
		out[k] = h.text
	}
	return out
}

// TestRealEditsOnTheFirstScreen: 3,300 added files under node_modules/
// and two edits. At the app's window size the two edits are rows drawn on
// the first screen: node_modules/ is one collapsed row with its counts.
func TestRealEditsOnTheFirstScreen(t *testing.T) {
	v, w := newTestView(t, npmReport(3300-11), Options{})
	w.Resize(fyne.NewSize(1400, 900)) // the desktop window's size
	if n := len(v.Report().Changes); n != 3300+2 {
		t.Fatalf("%d changes", n)
	}
	rows := visibleRows(t, v)
	want := []string{
		"node_modules/  3,300 added, violations",
		"src/  1 changed, violation",
		"app.js  +1 −1",
		"config.json  +1 −1",
	}
	if !slices.Equal(rows, want) {
		t.Errorf("first screen rows %q, want %q", rows, want)
	}
	if v.folderOpen("node_modules") {
		t.Error("node_modules/ starts open")
	}
	// Expanded, it lists its packages, each a roll-up of its own.
	v.toggleOpen("node_modules")
	rows = visibleRows(t, v)
	if len(rows) < 12 || rows[1] != "pkg0/  330 added, violations" || rows[2] != "pkg1/  330 added, violations" || rows[10] != "pkg9/  329 added, violations" {
		t.Errorf("node_modules/ opened: rows %q", rows)
	}
}

// pathsOf is the paths of changes at indices idx.
func pathsOf(r *report.Report, idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = r.Changes[i].Path
	}
	return out
}

// rowTexts are the names of all rows (not only those drawn).
func rowTexts(v *View) []string {
	out := make([]string, len(v.rows))
	for k, rw := range v.rows {
		out[k] = rw.id
	}
	return out
}

// fileReport has an added file at each path, the ones in allowed allowed.
func fileReport(paths []string, allowed ...string) *report.Report {
	r := &report.Report{Schema: report.Schema, Workspace: "/w"}
	for _, p := range paths {
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Added, Aspects: []diff.Aspect{},
			After: &snapshot.Entry{Type: snapshot.File, Perm: 0o644}, Allowed: slices.Contains(allowed, p), Rule: "x"})
	}
	sortChanges(r.Changes)
	r.Evaluate()
	return r
}

// TestNaturalOrder: the list and the tree sort names as people do
// (file2 before file10), folder by folder, violations first unless that
// is switched off.
func TestNaturalOrderInListAndTree(t *testing.T) {
	r := fileReport([]string{"file10", "file2", "dir10/a", "dir2/b10", "dir2/b9", "file1", "dir2/b9x", "Zed"}, "file1")
	v, _ := newTestView(t, r, Options{})
	if got, want := rowTexts(v), []string{"dir2", "dir2/b9", "dir2/b9x", "dir2/b10", "dir10", "dir10/a", "file2", "file10", "Zed", "file1"}; !slices.Equal(got, want) {
		t.Errorf("tree rows %q, want %q", got, want)
	}
	v.setTreeMode(false)
	if got, want := pathsOf(r, v.shownRows()), []string{"dir2/b9", "dir2/b9x", "dir2/b10", "dir10/a", "file2", "file10", "Zed", "file1"}; !slices.Equal(got, want) {
		t.Errorf("list %q, want %q", got, want)
	}
	test.Tap(v.changes.violFirst) // off: the allowed file1 takes its place
	if got, want := pathsOf(r, v.shownRows()), []string{"dir2/b9", "dir2/b9x", "dir2/b10", "dir10/a", "file1", "file2", "file10", "Zed"}; !slices.Equal(got, want) {
		t.Errorf("list without violations first %q, want %q", got, want)
	}
	uitest.OneText(t, v.changes.list, "file1")
}

// TestRollUps: which folders start collapsed, and their counts.
func TestRollUps(t *testing.T) {
	var paths []string
	for i := 0; i < report.RollUpMin; i++ {
		paths = append(paths, fmt.Sprintf("gen/f%d", i), fmt.Sprintf("out/f%d", i))
	}
	paths = append(paths, "small/a", "small/b", ".venv/lib/x.py", "src/__pycache__/m.pyc", "src/m.py", "docs/a.md", ".git/objects/ab/cd")
	r := fileReport(paths, "docs/a.md")
	// out/ holds a risky change: it is not rolled up.
	r.Changes[slices.IndexFunc(r.Changes, func(c diff.Change) bool { return c.Path == "out/f3" })].Risk = diff.SymlinkEscape
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	for id, want := range map[string]bool{
		"gen":             false, // 50 added violations: a roll-up
		"out":             true,  // risky
		"small":           true,  // too few to roll up
		".venv":           false, // a vendor tree
		"src":             true,
		"src/__pycache__": false,
		"docs":            false, // all allowed
		".git":            true,
		".git/objects":    false,
		".git/objects/ab": false, // inside a vendor tree
	} {
		if got := v.folderOpen(id); got != want {
			t.Errorf("%s/ open %v, want %v", id, got, want)
		}
	}
	uitest.OneText(t, v.changes.list, "50 added, violations")
	uitest.OneText(t, v.changes.list, "50 added, violations, ⚠ 1 risky")
	v.toggleOpen("out") // so that docs/ is drawn
	wantColor(t, "roll-up badge", uitest.OneText(t, v.changes.list, "1 added, all allowed").Color, style.Muted)
	// A text filter opens every folder that matches.
	v.SetFilter(Filter{Added: true, Removed: true, Changed: true, Violations: true, Allowed: true, Text: "f1"})
	if !v.folderOpen("gen") {
		t.Error("gen/ stays closed under a text filter")
	}
	// The reviewer's choice stands: closed, it stays closed.
	v.toggleOpen("gen")
	v.SetFilter(Filter{Added: true, Removed: true, Changed: true, Violations: true, Allowed: true, Text: "f2"})
	if v.folderOpen("gen") {
		t.Error("gen/ reopened after the reviewer closed it")
	}
}

// TestFilterResetsOnNewReport: a new report starts with every change
// shown, whatever the filter was.
func TestFilterResetsOnNewReport(t *testing.T) {
	v, w := newTestView(t, DemoReport(), Options{})
	test.Tap(v.filters.added)
	w.Canvas().Focus(v.filters.search)
	test.Type(v.filters.search, "src")
	if v.Filter() == defaultFilter() || len(v.shownRows()) == 7 {
		t.Fatal("the filter did not apply")
	}
	v.SetReport(DemoReport())
	if v.Filter() != defaultFilter() || v.filters.search.Text != "" || !v.filters.added.On {
		t.Errorf("after a new report: filter %+v, search %q, Added on %v", v.Filter(), v.filters.search.Text, v.filters.added.On)
	}
	if len(v.shownRows()) != 7 || !v.changes.hiddenBar.Hidden {
		t.Errorf("after a new report %d of 7 shown, hidden bar shown %v", len(v.shownRows()), !v.changes.hiddenBar.Hidden)
	}
	wantColor(t, "Added chip", uitest.OneText(t, v.filters.added, "Added").Color, style.Added)
}

// TestHiddenByFiltersBar: the bar counts what the filters hide and Clear
// shows everything again.
func TestHiddenByFiltersBar(t *testing.T) {
	v, w := newTestView(t, DemoReport(), Options{})
	if !v.changes.hiddenBar.Hidden || len(uitest.TextsReading(v, "Clear")) != 0 {
		t.Fatal("the bar is shown with nothing hidden")
	}
	test.Tap(v.filters.added) // 3 added changes hidden
	bar := uitest.OneText(t, v.changes.hiddenBar, "3 changes hidden by filters —")
	wantColor(t, "bar text", bar.Color, theme.ColorNameWarning)
	// The bar has a row of its own, between the header and the list.
	d := fyne.CurrentApp().Driver()
	head := uitest.OneText(t, v.changes.reviewed, "0 of 7 reviewed")
	if by, hy := d.AbsolutePositionForObject(bar).Y, d.AbsolutePositionForObject(head).Y+head.Size().Height; by < hy {
		t.Errorf("the bar (y %g) overlaps the header (bottom %g)", by, hy)
	}
	if by, ly := d.AbsolutePositionForObject(bar).Y+bar.Size().Height, d.AbsolutePositionForObject(v.changes.list).Y; by > ly {
		t.Errorf("the bar (bottom %g) overlaps the list (y %g)", by, ly)
	}
	uitest.OneText(t, v.changes.hiddenBar, "Clear")
	w.Canvas().Focus(v.filters.search)
	test.Type(v.filters.search, "src") // of the 4 others, src/app.py and src/vendor/libfast.so are left
	uitest.OneText(t, v.changes.hiddenBar, "5 changes hidden by filters —")
	if v.hiddenByFilter() != 5 || len(v.shownRows()) != 2 {
		t.Errorf("hidden %d, shown %d", v.hiddenByFilter(), len(v.shownRows()))
	}
	test.Tap(v.changes.clearBtn)
	if v.Filter() != defaultFilter() || v.filters.search.Text != "" || len(v.shownRows()) != 7 || !v.changes.hiddenBar.Hidden {
		t.Errorf("after Clear: filter %+v, search %q, %d shown, bar hidden %v", v.Filter(), v.filters.search.Text, len(v.shownRows()), v.changes.hiddenBar.Hidden)
	}
	uitest.OneText(t, v.changes.list, "passwd") // the added file is drawn again
}

// rowFor is the drawn row showing node id.
func rowFor(t *testing.T, v *View, id string) *changeRow {
	t.Helper()
	var out *changeRow
	uitest.Walk(v.changes.list, func(o fyne.CanvasObject) {
		if r, ok := o.(*changeRow); ok && r.id == id {
			out = r
		}
	})
	if out == nil {
		t.Fatalf("no row drawn for %s", id)
	}
	return out
}

// TestViewedMarks: v and the row's check mark changes viewed; a folder's
// check marks what it holds; the header counts them and the host hears
// of each mark.
func TestViewedMarks(t *testing.T) {
	var got []string
	v, w := newTestView(t, DemoReport(), Options{OnViewed: func(_ *report.Report, paths []string, on bool) {
		got = append(got, fmt.Sprint(on, paths))
	}})
	r := v.Report()
	uitest.OneText(t, v.changes.reviewed, "0 of 7 reviewed")
	v.Select(indexOf(t, r, "config.json"))
	v.FocusChanges()
	w.Canvas().Focused().TypedRune(viewedKey)
	uitest.OneText(t, v.changes.reviewed, "1 of 7 reviewed")
	if res := rowFor(t, v, "config.json").check.icon.Resource; res == nil || res.Name() != style.Colored(theme.CheckButtonCheckedIcon(), style.PassColor).Name() {
		t.Errorf("config.json's check is %v, not a checked box", res)
	}
	test.Tap(rowFor(t, v, "src").check) // both changes under src/
	uitest.OneText(t, v.changes.reviewed, "3 of 7 reviewed")
	if v.Selected() != indexOf(t, r, "config.json") {
		t.Error("tapping a check moved the selection")
	}
	test.Tap(rowFor(t, v, "src").check) // all viewed: tapping clears them
	uitest.OneText(t, v.changes.reviewed, "1 of 7 reviewed")
	v.TypedRune(viewedKey) // the tap took the focus: the key reaches the view from the window
	uitest.OneText(t, v.changes.reviewed, "0 of 7 reviewed")
	want := []string{"true [config.json]", "true [src/app.py src/vendor/libfast.so]", "false [src/app.py src/vendor/libfast.so]", "false [config.json]"}
	if !slices.Equal(got, want) {
		t.Errorf("OnViewed calls %q, want %q", got, want)
	}
	// Restored by the host: every mark, the rest cleared; all marked is green.
	v.SetViewed([]string{"build.lock", "nope"})
	uitest.OneText(t, v.changes.reviewed, "1 of 7 reviewed")
	v.SetViewed(pathsOf(r, []int{0, 1, 2, 3, 4, 5, 6}))
	wantColor(t, "all reviewed", uitest.OneText(t, v.changes.reviewed, "7 of 7 reviewed").Color, style.PassColor)
	if !slices.Equal(v.Viewed(), pathsOf(r, []int{0, 1, 2, 3, 4, 5, 6})) {
		t.Errorf("Viewed %q", v.Viewed())
	}
	v.SetReport(DemoReport())
	uitest.OneText(t, v.changes.reviewed, "0 of 7 reviewed")
}

// TestPageKeysAndWheel: page up/down move the selection a page of rows;
// a step of the wheel scrolls wheelRows rows.
func TestPageKeysAndWheel(t *testing.T) {
	v, w := newTestView(t, npmReport(1000), Options{})
	v.toggleOpen("node_modules")
	v.toggleOpen("node_modules/pkg0") // 100 files
	v.Select(indexOf(t, v.Report(), "node_modules/pkg0"))
	v.FocusChanges()
	start := v.selectedRow()
	page := v.changes.list.pageRows()
	if page < 15 {
		t.Fatalf("a page is %d rows", page)
	}
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyPageDown})
	if k := v.selectedRow(); k != start+page {
		t.Errorf("PageDown from row %d went to %d, want %d", start, k, start+page)
	}
	sel := v.rows[v.selectedRow()].id
	if !slices.ContainsFunc(visibleRows(t, v), func(s string) bool { return len(s) > 0 && s[:len(baseOf(sel))] == baseOf(sel) }) {
		t.Errorf("the selected row %s is not drawn after PageDown: %q", sel, visibleRows(t, v))
	}
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyPageUp})
	if k := v.selectedRow(); k != start {
		t.Errorf("PageUp went to %d, want %d", k, start)
	}
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyEnd})
	if k := v.selectedRow(); k != len(v.rows)-1 {
		t.Errorf("End went to %d of %d rows", k, len(v.rows))
	}
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyHome})
	if k := v.selectedRow(); k != 0 {
		t.Errorf("Home went to %d", k)
	}

	first := visibleRows(t, v)[0]
	at := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.changes.list).Add(fyne.NewPos(100, 100))
	test.Scroll(w.Canvas(), at, 0, -wheelStep) // one step down
	if got, want := v.changes.list.GetScrollOffset(), wheelRows*v.changes.list.rowH; got != want {
		t.Errorf("one wheel step scrolled %g px, want %g (%d rows)", got, want, wheelRows)
	}
	after := visibleRows(t, v)
	if k := slices.Index(rowTextsDrawn(v), first); after[0] == first || k < 0 {
		t.Errorf("the wheel did not move the rows: first row %q, then %q", first, after[0])
	}
}

// rowTextsDrawn are visibleRows' texts of every row in order (not only
// the drawn ones), to find where a drawn row stands.
func rowTextsDrawn(v *View) []string {
	var out []string
	for k := range v.rows {
		n := v.m.nodes[v.rows[k].id]
		text := n.name
		if n.folder() {
			text += "/  " + n.sum.String()
		}
		out = append(out, text)
	}
	return out
}

// TestFoldKeysAndStops: n and p stop once at a collapsed folder holding
// violations; Right and Left open and close folders and move in and out;
// Enter opens and closes a folder.
func TestFoldKeysAndStops(t *testing.T) {
	v, w := newTestView(t, npmReport(100), Options{})
	r := v.Report()
	at := func() string { return v.selID }
	v.FocusChanges()
	key := func(k fyne.KeyName) { w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: k}) }
	w.Canvas().Focused().TypedRune('n')
	if at() != "node_modules" || v.Selected() != indexOf(t, r, "node_modules") {
		t.Fatalf("n went to %q", at())
	}
	w.Canvas().Focused().TypedRune('n') // past the 110 changes inside
	if at() != "src/app.js" {
		t.Errorf("n from node_modules/ went to %q, want src/app.js", at())
	}
	w.Canvas().Focused().TypedRune('p')
	if at() != "node_modules" {
		t.Errorf("p went to %q", at())
	}
	key(fyne.KeyRight)
	if !v.folderOpen("node_modules") || at() != "node_modules" {
		t.Errorf("Right: open %v, at %q", v.folderOpen("node_modules"), at())
	}
	key(fyne.KeyRight)
	if at() != "node_modules/pkg0" {
		t.Errorf("Right on an open folder went to %q", at())
	}
	key(fyne.KeyLeft) // pkg0 is closed: to its parent
	if at() != "node_modules" {
		t.Errorf("Left on a closed folder went to %q", at())
	}
	key(fyne.KeyLeft)
	if v.folderOpen("node_modules") {
		t.Error("Left did not close node_modules/")
	}
	v.goRow(v.rowOf("src"))
	key(fyne.KeyReturn)
	if v.folderOpen("src") || slices.Contains(rowTexts(v), "src/app.js") {
		t.Errorf("Enter on src/ left it open: rows %q", rowTexts(v))
	}
	key(fyne.KeyReturn)
	if !v.folderOpen("src") || !slices.Contains(rowTexts(v), "src/app.js") {
		t.Errorf("a second Enter did not open src/: rows %q", rowTexts(v))
	}
}

func TestCountWords(t *testing.T) {
	for n, want := range map[int]string{0: "0 entries", 1: "1 entry", 2: "2 entries", 3301: "3,301 entries", 1234567: "1,234,567 entries"} {
		if got := count.Grouped(n, "entry"); got != want {
			t.Errorf("count.Grouped(%d) %q, want %q", n, got, want)
		}
	}
	if got := count.Digits(-1234); got != "-1,234" {
		t.Errorf("count.Digits(-1234) %q", got)
	}
}
