package ui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
)

// openDB opens the test's history database a second time, as the CLI
// would, to check what the app wrote.
func openDB(t *testing.T, path string) *history.DB {
	t.Helper()
	db, err := history.Open(path, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// opened waits until the review shows another report than before (an open
// started from the History tab).
func opened(t *testing.T, u *UI, l *loop, before *report.Report) {
	t.Helper()
	l.until(t, "the run in the review", 20*time.Second, func() bool {
		r := u.Review().Report()
		return r != nil && r != before && u.Tabs.Selected() == u.reviewItem
	})
}

// reopen opens run id from the history as the History tab does and waits
// until the review shows it.
func reopen(t testing.TB, u *UI, l *loop, id int64) *report.Report {
	t.Helper()
	before := u.Review().Report()
	u.openRun(id, func(err error) { t.Fatalf("open run %d: %v", id, err) })
	l.until(t, fmt.Sprintf("run %d in the review", id), 20*time.Second, func() bool {
		return u.reviewID == id && u.Review().Report() != before && u.Tabs.Selected() == u.reviewItem
	})
	return u.Review().Report()
}

// lookedUp waits until the Run tab has looked up the allowlist approved
// for the workspace in its field.
func lookedUp(t *testing.T, u *UI, l *loop) {
	t.Helper()
	l.until(t, "the approved allowlist", 20*time.Second, u.run.lookupDone)
}

// showHistory selects the History tab and waits for its queries.
func showHistory(t *testing.T, u *UI, l *loop) {
	t.Helper()
	u.Tabs.Select(u.historyItem)
	historyIdle(t, u, l)
}

// historyIdle waits until the History tab has its queries' answers.
func historyIdle(t *testing.T, u *UI, l *loop) {
	t.Helper()
	l.until(t, "the history's queries", 20*time.Second, u.history.idle)
}

// shownRows returns the History table's rendered rows, top to bottom, once
// its queries are answered.
func shownRows(t *testing.T, u *UI, l *loop) []string {
	t.Helper()
	historyIdle(t, u, l)
	var rows []*historyRow
	uitest.Walk(u.history.list, func(o fyne.CanvasObject) {
		if r, ok := o.(*historyRow); ok && r.i < len(u.history.rows) {
			rows = append(rows, r)
		}
	})
	slices.SortFunc(rows, func(a, b *historyRow) int { return a.i - b.i })
	var out []string
	for _, r := range rows {
		out = append(out, r.Text())
	}
	return out
}

// runScript runs body as a script in workspace ws through the real gate
// and waits for the review.
func runScript(t *testing.T, u *UI, l *loop, ws, body string, allow []string) *report.Report {
	t.Helper()
	script := writeScript(t, t.TempDir(), body)
	u.run.setInputs(ws, script, allow)
	return runInputs(t, u, l)
}

// runInputs runs the Run tab's inputs as a tap on Run does and returns the
// report the review shows.
func runInputs(t testing.TB, u *UI, l *loop) *report.Report {
	t.Helper()
	u.Tabs.Select(u.runItem)
	test.Tap(u.run.runBtn)
	if !u.run.running {
		t.Fatalf("the run did not start: %s", uitest.RichString(u.run.status))
	}
	l.until(t, "the run", 60*time.Second, func() bool { return !u.run.running })
	if u.Tabs.Selected() != u.reviewItem {
		t.Fatalf("no review after the run: %s", uitest.RichString(u.run.status))
	}
	return u.Review().Report()
}

// workspace makes a temporary workspace with a few files.
func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for name, body := range map[string]string{"a.txt": "a\n", "b.txt": "b\n", "config.ini": "debug = false\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, err := history.WorkspaceKey(ws)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func header(u *UI, title string) *headerCell {
	for _, h := range u.history.headers {
		if h.Title() == title {
			return h
		}
	}
	return nil
}

// TestHistoryTable records real runs of two workspaces in a temporary
// database and checks the History table: contents, filters and sorting.
func TestHistoryTable(t *testing.T) {
	u, l, _ := newTestUI(t, Options{})
	ws1, ws2 := workspace(t), workspace(t)

	r1 := runScript(t, u, l, ws1, "echo x > new.txt\nrm b.txt\necho 'debug = true' > config.ini\n", nil)
	r2 := runScript(t, u, l, ws2, "mkdir -p logs && echo ok > logs/run.log\n", []string{"logs/"})
	r3 := runScript(t, u, l, ws1, "echo y >> a.txt\necho z > c.txt\n", []string{"c.txt"})
	if r1.Verdict != report.Fail || r2.Verdict != report.Pass || r3.Verdict != report.Fail {
		t.Fatalf("verdicts %s %s %s", r1.Verdict, r2.Verdict, r3.Verdict)
	}
	// Reject run 3 from the review.
	test.Type(noteEntry(t, u.Review()), "appends to a.txt")
	uitest.Button(t, u.Review(), "Reject").OnTapped()
	answerDialog(t, u.Review(), "Reject and discard") // the run is staged
	l.until(t, "the discard", 30*time.Second, func() bool { return u.Review().Report().Stage.State != report.StagePending })
	if d := u.Review().Decision(); d != "Rejected: recorded on run 3." {
		t.Errorf("decision line %q", d)
	}

	u.Tabs.Select(u.historyItem)
	l.settle(50 * time.Millisecond)
	rows := shownRows(t, u, l)
	// The app stages by default: runs not reviewed are still to apply.
	want := []string{
		"3 | * | " + ws1 + " | script.sh | FAIL | +1 | 0 | ~1 | 1 | * | 0 | Rejected",
		"2 | * | " + ws2 + " | script.sh | PASS | +2 | 0 | 0 | 0 | * | 0 | To apply",
		"1 | * | " + ws1 + " | script.sh | FAIL | +1 | −1 | ~1 | 3 | * | 0 | To apply",
	}
	match := func(got, want []string) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			g := strings.Split(got[i], " | ")
			w := strings.Split(strings.ReplaceAll(want[i], "~/", ""), " | ")
			if len(g) != len(w) {
				return false
			}
			for k := range g {
				if w[k] != "*" && g[k] != w[k] && homeRel(w[k]) != g[k] {
					return false
				}
			}
		}
		return true
	}
	if !match(rows, want) {
		t.Fatalf("history rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasPrefix(rows[0], "3 | "+time.Now().Format("2006-01-02")) && !strings.HasPrefix(rows[0], "3 | "+time.Now().Add(-time.Minute).Format("2006-01-02")) {
		t.Errorf("date column: %q", rows[0])
	}
	if s := uitest.RichString(u.history.status); s != "3 runs" {
		t.Errorf("status %q", s)
	}

	// Verdict filter.
	u.history.verdict.SetSelected(verdictFail)
	if rows := shownRows(t, u, l); !match(rows, []string{want[0], want[2]}) {
		t.Errorf("fail filter: %q", rows)
	}
	u.history.verdict.SetSelected(verdictPass)
	if rows := shownRows(t, u, l); !match(rows, want[1:2]) {
		t.Errorf("pass filter: %q", rows)
	}
	u.history.verdict.SetSelected(verdictAll)

	// Workspace filter: the choices are the recorded workspaces.
	if opts := u.history.wsSelect.Options; len(opts) != 3 || opts[0] != allWorkspaces || !slices.Contains(opts, ws1) || !slices.Contains(opts, ws2) {
		t.Fatalf("workspace choices %q", opts)
	}
	u.history.wsSelect.SetSelected(ws1)
	if rows := shownRows(t, u, l); !match(rows, []string{want[0], want[2]}) {
		t.Errorf("workspace filter: %q", rows)
	}
	u.history.verdict.SetSelected(verdictPass)
	if rows := shownRows(t, u, l); len(rows) != 0 || uitest.RichString(u.history.status) != "No run matches the filter" {
		t.Errorf("ws1 and pass: %q, status %q", rows, uitest.RichString(u.history.status))
	}
	u.history.verdict.SetSelected(verdictAll)
	u.history.wsSelect.SetSelected(allWorkspaces)

	// Sorting: click a header; click again to reverse.
	test.Tap(header(u, "Violations"))
	if rows := shownRows(t, u, l); !match(rows, []string{want[2], want[0], want[1]}) {
		t.Errorf("by violations, most first: %q", rows)
	}
	test.Tap(header(u, "Violations"))
	if rows := shownRows(t, u, l); !match(rows, []string{want[1], want[0], want[2]}) {
		t.Errorf("by violations, fewest first: %q", rows)
	}
	test.Tap(header(u, "Verdict"))
	if rows := shownRows(t, u, l); !strings.Contains(rows[0], "| FAIL |") || !strings.Contains(rows[2], "| PASS |") {
		t.Errorf("by verdict: %q", rows)
	}
	test.Tap(header(u, "Run"))
	if rows := shownRows(t, u, l); !match(rows, want) {
		t.Errorf("by run, newest first: %q", rows)
	}
	test.Tap(header(u, "Run"))
	if rows := shownRows(t, u, l); !match(rows, []string{want[2], want[1], want[0]}) {
		t.Errorf("by run, oldest first: %q", rows)
	}

	// Selecting a run shows its summary (reasons and decision are read in
	// the background).
	u.history.list.Select(u.history.indexOf(3))
	l.until(t, "the run's detail", 5*time.Second, func() bool {
		return strings.Contains(uitest.WidgetText(u.history.detail), "appends to a.txt")
	})
	if d := uitest.WidgetText(u.history.detail); !strings.Contains(d, "Run 3") || !strings.Contains(d, "1 unexpected change") || !strings.Contains(d, "Rejected on ") {
		t.Errorf("detail %q", d)
	}
	// The app contains its runs: the detail says how.
	if d := uitest.WidgetText(u.history.detail); !strings.Contains(d, "Containment") || !strings.Contains(d, "contained: landlock") && !strings.Contains(d, "NOT CONTAINED: ") {
		t.Errorf("detail without the containment: %q", d)
	}
}

// TestReopenRunFromHistory: a run reopened from the History tab (double
// click, Enter) shows the same changes as right after the run, rebuilt
// from the database alone, even from a fresh app on the same database.
func TestReopenRunFromHistory(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "history.db")
	u, l, _ := newTestUI(t, Options{DBPath: dbPath})
	ws := workspace(t)
	r := runScript(t, u, l, ws, "echo 'debug = true' > config.ini\nrm b.txt\nmkdir -p out/deep && echo 1 > out/deep/x\nchmod +x a.txt\n", []string{"out/"})
	type change struct {
		Path    string
		Kind    diff.Kind
		Allowed bool
		Rule    string
		Diff    string
		Aspects string
	}
	flatten := func(r *report.Report) []change {
		var out []change
		for _, c := range r.Changes {
			var as []string
			for _, a := range c.Aspects {
				as = append(as, string(a))
			}
			out = append(out, change{c.Path, c.Kind, c.Allowed, c.Rule, c.TextDiff, strings.Join(as, ",")})
		}
		return out
	}
	before := flatten(r)
	if len(before) < 4 {
		t.Fatalf("changes %+v", before)
	}
	verdict, reasons := r.Verdict, strings.Join(r.Reasons, ";")

	// Show something else, then double-click the run in the History tab.
	openReport(t, u, l, writeDemoReport(t))
	showHistory(t, u, l)
	var row *historyRow
	uitest.Walk(u.history.list, func(o fyne.CanvasObject) {
		if x, ok := o.(*historyRow); ok && x.id == 1 {
			row = x
		}
	})
	if row == nil {
		t.Fatal("run 1 not in the table")
	}
	shown := u.Review().Report()
	row.DoubleTapped(&fyne.PointEvent{})
	opened(t, u, l, shown)
	if u.Tabs.Selected() != u.reviewItem || u.reviewID != 1 {
		t.Fatal("double click did not open the run")
	}
	got := u.Review().Report()
	if !slices.Equal(flatten(got), before) || got.Verdict != verdict || strings.Join(got.Reasons, ";") != reasons {
		t.Errorf("reopened run differs:\n%+v\nwant\n%+v", flatten(got), before)
	}
	if !uitest.Drawn(u.Review().Banner(), "FAIL") {
		t.Errorf("banner %q", uitest.AllText(u.Review().Banner()))
	}

	// A second app on the same database: Enter on the selected row opens it.
	u2, l2, _ := newTestUI(t, Options{DBPath: dbPath})
	showHistory(t, u2, l2)
	u2.history.list.Select(0)
	u2.history.list.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	opened(t, u2, l2, nil)
	if u2.Tabs.Selected() != u2.reviewItem || u2.reviewID != 1 || !slices.Equal(flatten(u2.Review().Report()), before) {
		t.Errorf("Enter in a fresh app: tab %v, run %d", u2.Tabs.Selected().Text, u2.reviewID)
	}
}

// openReport opens the report at path as File ▸ Open report… does and waits
// until the review shows it.
func openReport(t testing.TB, u *UI, l *loop, path string) *report.Report {
	t.Helper()
	before := u.Review().Report()
	u.openReportFile(path)
	l.until(t, "the report", 20*time.Second, func() bool {
		r := u.Review().Report()
		return r != nil && r != before && u.Tabs.Selected() == u.reviewItem
	})
	return u.Review().Report()
}

func writeDemoReport(t testing.TB) string {
	t.Helper()
	var buf bytes.Buffer
	if err := review.DemoReport().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestApproveNextVersionPreloadsRunTab: with version 1 of a workspace's
// allowlist approved (by the CLI, say), the Run tab preloads it, the run
// records that it used version 1, approving in the review saves version 2,
// and the Run tab (and a fresh app) then start from version 2. The History
// tab shows both versions with what version 2 added and removed.
func TestApproveNextVersionPreloadsRunTab(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "history.db")
	ws := workspace(t)
	db := openDB(t, dbPath)
	if _, err := db.Approve(context.Background(), ws, []string{"logs/", "tmp/"}, "from the CLI"); err != nil {
		t.Fatal(err)
	}

	u, l, _ := newTestUI(t, Options{DBPath: dbPath, Flags: Flags{Workspace: ws}})
	lookedUp(t, u, l)
	if got := u.run.allow.Entries(); strings.Join(got, ",") != "logs/,tmp/" || u.run.allowlistVersion() != 1 {
		t.Fatalf("run tab allowlist %q (version %d)", got, u.run.allowlistVersion())
	}
	if h := uitest.RichString(u.run.allowHint); !strings.Contains(h, "Version 1 ") {
		t.Errorf("allowlist hint %q", h)
	}
	script := writeScript(t, t.TempDir(), "mkdir -p logs && echo ok > logs/a.log\necho 'debug = true' > config.ini\n")
	u.run.script.SetText(script)
	test.Tap(u.run.runBtn)
	l.until(t, "the run", 60*time.Second, func() bool { return !u.run.running })
	r := u.Review().Report()
	if r.Verdict != report.Fail {
		t.Fatalf("verdict %s %v", r.Verdict, r.Reasons)
	}
	if run, err := db.Get(context.Background(), 1); err != nil || run.AllowlistVersion != 1 {
		t.Fatalf("recorded allowlist version: %+v %v", run, err)
	}

	// Approve a new version: config.json allowed, tmp/ dropped.
	v := u.Review()
	v.Editor().SetText("logs/\nchanged:config.ini\n")
	if r.Verdict != report.Pass {
		t.Fatalf("draft did not re-evaluate: %s", r.Verdict)
	}
	test.Type(noteEntry(t, v), "config edits are expected")
	uitest.Button(t, v, "Approve allowlist").OnTapped()
	if d := v.Decision(); !strings.HasPrefix(d, "Approved: allowlist version 2 of this workspace saved (2 entries)") {
		t.Errorf("decision line %q", d)
	}
	al, err := db.LatestAllowlist(context.Background(), ws)
	if err != nil || al.Version != 2 || strings.Join(al.Entries, ",") != "logs/,changed:config.ini" {
		t.Fatalf("latest allowlist %+v %v", al, err)
	}
	if got := u.run.allow.Entries(); strings.Join(got, ",") != "logs/,changed:config.ini" || u.run.allowlistVersion() != 2 {
		t.Errorf("run tab after approval %q (version %d)", got, u.run.allowlistVersion())
	}

	// Another workspace without an approved allowlist: the approved
	// entries do not carry over; back to ws: version 2 again.
	other := workspace(t)
	u.run.workspace.SetText(other)
	lookedUp(t, u, l)
	if got := u.run.allow.Entries(); len(got) != 0 || u.run.allowlistVersion() != 0 {
		t.Errorf("other workspace starts from %q", got)
	}
	u.run.workspace.SetText(ws)
	lookedUp(t, u, l)
	if got := u.run.allow.Entries(); strings.Join(got, ",") != "logs/,changed:config.ini" || u.run.allowlistVersion() != 2 {
		t.Errorf("back to the workspace: %q", got)
	}

	// A fresh app preloads version 2 too.
	u2, l2, _ := newTestUI(t, Options{DBPath: dbPath, Flags: Flags{Workspace: ws}})
	lookedUp(t, u2, l2)
	if got := u2.run.allow.Entries(); strings.Join(got, ",") != "logs/,changed:config.ini" || u2.run.allowlistVersion() != 2 {
		t.Errorf("fresh app preloads %q (version %d)", got, u2.run.allowlistVersion())
	}

	// History tab: the run is approved; the versions panel shows v2 with
	// + changed:config.ini (green) and − tmp/ (red), then v1.
	u.Tabs.Select(u.historyItem)
	if rows := shownRows(t, u, l); len(rows) != 1 || !strings.Contains(rows[0], "| FAIL |") || !strings.HasSuffix(rows[0], "| Approved v2") {
		t.Errorf("rows %q", rows)
	}
	// The Pass/Fail filter goes by the verdict the run had, as the list
	// and the reopened run say it.
	u.history.verdict.SetSelected(verdictPass)
	if rows := shownRows(t, u, l); len(rows) != 0 {
		t.Errorf("Pass shows %q", rows)
	}
	u.history.verdict.SetSelected(verdictFail)
	if rows := shownRows(t, u, l); len(rows) != 1 {
		t.Errorf("Fail shows %q", rows)
	}
	u.history.verdict.SetSelected(verdictAll)
	vt := uitest.WidgetText(u.history.versions)
	i2, i1 := strings.Index(vt, "Version 2"), strings.Index(vt, "Version 1")
	if i2 < 0 || i1 < i2 || !strings.Contains(vt, "+ changed:config.ini") || !strings.Contains(vt, "− tmp/") ||
		!strings.Contains(vt, "“config edits are expected”") || !strings.Contains(vt[i1:], "+ logs/\n+ tmp/") {
		t.Errorf("versions panel:\n%s", vt)
	}
	var plus, minus fyne.ThemeColorName
	uitest.Walk(u.history.versions, func(o fyne.CanvasObject) {
		if rt, ok := o.(*widget.RichText); ok && len(rt.Segments) == 1 {
			if s, ok := rt.Segments[0].(*widget.TextSegment); ok {
				switch s.Text {
				case "+ changed:config.ini":
					plus = s.Style.ColorName
				case "− tmp/":
					minus = s.Style.ColorName
				}
			}
		}
	})
	if plus != "success" || minus != "error" {
		t.Errorf("added drawn in %q, removed in %q", plus, minus)
	}

	// Reopened, the run shows version 2 in the editor and the verdict it
	// gives in the banner (PASS), and says the run failed when it ran and
	// was approved as version 2, which covers it.
	reopen(t, u, l, 1)
	if d := v.Decision(); !strings.HasPrefix(d, "Failed when it ran; approved as allowlist version 2 on ") ||
		!strings.HasSuffix(d, ": config edits are expected. Version 2 (in the editor) covers this run: every change is allowed.") {
		t.Errorf("reopened decision %q", d)
	}
	if got := v.Editor().Entries(); strings.Join(got, ",") != "logs/,changed:config.ini" {
		t.Errorf("reopened editor %q, want version 2", got)
	}
	if r := v.Report(); r.Verdict != report.Pass || !strings.Contains(uitest.DrawnText(v.Banner()), "PASS") {
		t.Errorf("reopened banner: verdict %s, drawn %q", r.Verdict, uitest.DrawnText(v.Banner()))
	}
	if got := v.Decision(); !drawnIn(v, got[:20], style.PassColor) {
		t.Errorf("the decision %q is not drawn in the pass color", got)
	}
}

// TestCorruptDatabase: a history file that is not a database is reported
// in the window, left byte for byte as it was, and the app still runs
// scripts (without recording them).
func TestCorruptDatabase(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "history.db")
	junk := bytes.Repeat([]byte("this is not an SQLite database\x00\xff"), 200)
	if err := os.WriteFile(dbPath, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	u, l, _ := newTestUI(t, Options{DBPath: dbPath})
	if u.HistoryError() == nil {
		t.Fatal("a corrupt database opened without error")
	}
	n := u.Notice()
	if !strings.HasPrefix(n, "History unavailable: history database "+dbPath+": ") || strings.Contains(n, "\n") {
		t.Errorf("notice %q", n)
	}
	u.Tabs.Select(u.historyItem)
	if !strings.Contains(uitest.WidgetText(u.history.root), "The history is unavailable") {
		t.Errorf("history tab: %q", uitest.WidgetText(u.history.root))
	}

	// The demo still runs; nothing is recorded.
	u.Tabs.Select(u.runItem)
	test.Tap(u.run.runBtn)
	l.until(t, "the run", 60*time.Second, func() bool { return !u.run.running })
	if r := u.Review().Report(); r == nil || r.Verdict != report.Fail {
		t.Fatalf("run without history: %+v", r)
	}
	if s := uitest.RichString(u.run.status); strings.Contains(s, "Recorded") {
		t.Errorf("status %q", s)
	}
	uitest.Button(t, u.Review(), "Approve allowlist").OnTapped()
	approveAnyway(t, u)
	if d := u.Review().Decision(); !strings.HasPrefix(d, "Approved for this session only: the history is unavailable") {
		t.Errorf("decision %q", d)
	}
	u.Close()

	got, err := os.ReadFile(dbPath)
	if err != nil || !bytes.Equal(got, junk) {
		t.Fatalf("the corrupt file was changed (%v)", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files next to the database: %q", names)
	}
}

// TestHashCacheFeedsTheNextRun: the second direct run of a workspace gets
// the history's hash cache as its prior manifest. (A staged run whose
// workspace shape the history knows takes no before-snapshot and needs
// none: TestStagedVerdictEqualsDirect's known-shape cases.)
func TestHashCacheFeedsTheNextRun(t *testing.T) {
	var priors []bool
	runner := func(ctx context.Context, cfg pipeline.Config) (*pipeline.GateResult, error) {
		priors = append(priors, cfg.Prior != nil && len(cfg.Prior.Entries) >= 3)
		return pipeline.GateRun(ctx, cfg)
	}
	dbPath := filepath.Join(t.TempDir(), "history.db")
	u, l, _ := newTestUI(t, Options{DBPath: dbPath, Runner: runner})
	ws := workspace(t)
	u.run.stage.SetChecked(false)
	runScript(t, u, l, ws, "true\n", nil)
	u.Close()
	// A fresh app: the cache comes from the database, not from memory.
	u2, l2, _ := newTestUI(t, Options{DBPath: dbPath, Runner: runner})
	u2.run.stage.SetChecked(false)
	runScript(t, u2, l2, ws, "true\n", nil)
	if !slices.Equal(priors, []bool{false, true}) {
		t.Errorf("prior manifests given: %v", priors)
	}
}

// TestDatabaseInsideWorkspaceRefused: the gate does not run a script in a
// workspace that holds the history (it could rewrite its own record).
func TestDatabaseInsideWorkspaceRefused(t *testing.T) {
	ws := workspace(t)
	u, _, _ := newTestUI(t, Options{DBPath: filepath.Join(ws, ".diffgate", "history.db")})
	u.run.setInputs(ws, writeScript(t, t.TempDir(), "true\n"), nil)
	test.Tap(u.run.runBtn)
	if u.run.running {
		t.Fatal("ran in the workspace that holds the history")
	}
	if s := uitest.RichString(u.run.status); !strings.Contains(s, "lies inside the workspace") {
		t.Errorf("status %q", s)
	}
}

// TestDatabaseErrorShownAsIs: the pipeline's own refusal reaches the
// status as it is: a database outside the workspace with a second hard
// link is reported as such (the app's wrapper once said "lies inside this
// workspace" of any refusal).
func TestDatabaseErrorShownAsIs(t *testing.T) {
	ws := workspace(t)
	dbPath := filepath.Join(t.TempDir(), "history.db")
	u, _, _ := newTestUI(t, Options{DBPath: dbPath})
	if err := os.Link(dbPath, filepath.Join(t.TempDir(), "second")); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	u.run.setInputs(ws, writeScript(t, t.TempDir(), "touch '"+marker+"'\n"), nil)
	test.Tap(u.run.runBtn)
	if u.run.running {
		t.Fatal("ran with a hard-linked history database")
	}
	s := uitest.RichString(u.run.status)
	if !strings.Contains(s, "2 hard links") || strings.Contains(s, "lies inside") {
		t.Errorf("status %q, want the hard-link refusal as is", s)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the script ran")
	}
}

// TestTabShortcuts: Alt+1..3 switch tabs (Alt+3 focuses the run list).
func TestTabShortcuts(t *testing.T) {
	u, _, w := newTestUI(t, Options{})
	// The test canvas wraps a software canvas that handles shortcuts.
	sc, ok := reflect.ValueOf(w.Canvas()).Elem().FieldByName("WindowlessCanvas").Interface().(interface{ TypedShortcut(fyne.Shortcut) })
	if !ok {
		t.Fatal("the test canvas takes no shortcuts")
	}
	for _, tc := range []struct {
		key  fyne.KeyName
		item *container.TabItem
	}{{fyne.Key3, u.historyItem}, {fyne.Key2, u.reviewItem}, {fyne.Key1, u.runItem}, {fyne.Key3, u.historyItem}} {
		sc.TypedShortcut(&desktop.CustomShortcut{KeyName: tc.key, Modifier: fyne.KeyModifierAlt})
		if u.Tabs.Selected() != tc.item {
			t.Errorf("Alt+%s selected %q, want %q", tc.key, u.Tabs.Selected().Text, tc.item.Text)
		}
	}
	if w.Canvas().Focused() != u.history.list {
		t.Errorf("focus after Alt+3: %T", w.Canvas().Focused())
	}
}

// recordRuns records n runs alternating between the workspaces ws (pass,
// fail, pass, ...) straight into the database at path, as the CLI would.
func recordRuns(t *testing.T, path string, n int, ws ...string) {
	t.Helper()
	db := openDB(t, path)
	for i := range n {
		verdict := report.Pass
		if i%2 == 1 {
			verdict = report.Fail
		}
		r := &report.Report{Schema: report.Schema, Workspace: ws[i%len(ws)], Verdict: verdict,
			Script: report.Script{Path: ws[i%len(ws)] + "/gen.sh"}, StartedAt: time.Now(), FinishedAt: time.Now()}
		if _, err := db.Record(context.Background(), &history.Run{Report: r}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHistoryQueriesLeaveTheUIGoroutine: a filter change returns before
// its query is answered; two quick filter changes show the later one's
// runs whatever order the answers come in; the workspace picker lists the
// workspaces once each, most recent first, and a filter change does not
// query them again.
func TestHistoryQueriesLeaveTheUIGoroutine(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "history.db")
	recordRuns(t, dbPath, 7, "/ws/a", "/ws/b", "/ws/c")
	u, l, _ := newTestUI(t, Options{DBPath: dbPath})
	showHistory(t, u, l)
	h := u.history
	if got := h.wsSelect.Options; !slices.Equal(got, []string{allWorkspaces, "/ws/a", "/ws/c", "/ws/b"}) {
		t.Errorf("picker %q", got)
	}
	if len(shownRows(t, u, l)) != 7 {
		t.Fatalf("rows %q", shownRows(t, u, l))
	}
	wsQueries := h.workspacesN
	h.verdict.SetSelected(verdictPass)
	h.verdict.SetSelected(verdictFail)
	if h.idle() || len(h.rows) != 7 {
		t.Fatalf("a filter change waited for its query: idle %v, %d rows", h.idle(), len(h.rows))
	}
	rows := shownRows(t, u, l)
	if len(rows) != 3 || slices.ContainsFunc(rows, func(r string) bool { return !strings.Contains(r, "| FAIL |") }) {
		t.Errorf("after Pass then Fail: %q", rows)
	}
	h.wsSelect.SetSelected("/ws/b")
	if rows := shownRows(t, u, l); len(rows) != 1 || h.workspacesN != wsQueries {
		t.Errorf("ws/b, fail: %q; workspaces queried %d more times", rows, h.workspacesN-wsQueries)
	}
}

// TestBackgroundKeepsTheNewest: of two queries of one kind, the answer of
// the older one is dropped even when it comes last.
func TestBackgroundKeepsTheNewest(t *testing.T) {
	u, l, _ := newTestUI(t, Options{})
	h := u.history
	historyIdle(t, u, l)
	release := make(chan struct{})
	var gen int
	var got []string
	background(h, &gen, func() (string, error) { <-release; return "old", nil }, func(s string, _ error) { got = append(got, s) })
	background(h, &gen, func() (string, error) { return "new", nil }, func(s string, _ error) { got = append(got, s) })
	l.until(t, "the newer answer", 20*time.Second, func() bool { return len(got) == 1 })
	close(release)
	historyIdle(t, u, l)
	if !slices.Equal(got, []string{"new"}) {
		t.Errorf("answers shown: %q", got)
	}
}

// TestHistoryShowsWhatAnAuditNeeds: the run table says how each run was
// contained and what it did outside its workspace (a NOT contained run that
// changed ~/.bashrc does not look like a contained one), and what became
// of a staged run (applied, discarded) instead of "Not reviewed". A
// pending not-contained staged run's detail does not say nothing
// happened yet.
func TestHistoryShowsWhatAnAuditNeeds(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "history.db")
	db := openDB(t, dbPath)
	ctx := context.Background()
	home, _ := os.UserHomeDir()
	record := func(name string, ct *report.Containment, stage string, outside int, blocked int) int64 {
		r := &report.Report{Schema: report.Schema, Workspace: "/ws/" + name, Verdict: report.Fail,
			Script: report.Script{Path: "/ws/" + name + "/gen.sh"}, StartedAt: time.Now(), FinishedAt: time.Now(), Containment: ct}
		for range outside {
			r.Outside = append(r.Outside, report.Outside{Path: filepath.Join(home, ".bashrc"), Kind: diff.Changed, Aspects: []string{report.OutsideSize}})
		}
		for range blocked {
			r.Blocked = append(r.Blocked, report.Blocked{Kind: "write", Target: "/etc/x", Count: 1})
		}
		if stage != "" {
			r.Stage = &report.Stage{Mechanism: "copy", State: report.StagePending}
		}
		id, err := db.Record(ctx, &history.Run{Report: r}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if stage != "" && stage != report.StagePending {
			ev := history.StageEvent{RunID: id, Event: stage, At: time.Now()}
			if stage == report.StageApplied {
				ev.Decision, ev.Paths = history.ApplyAll, []string{"a"}
			}
			if err := db.AddStageEvent(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	applied := record("contained", &report.Containment{Mode: "auto", Contained: true}, report.StageApplied, 0, 2)
	discarded := record("off", &report.Containment{Mode: "off"}, report.StageDiscarded, 1, 0)
	pending := record("missing", &report.Containment{Mode: "auto"}, report.StagePending, 0, 0)
	record("old", nil, "", 0, 0)

	u, l, w := newTestUI(t, Options{DBPath: dbPath})
	w.Resize(fyne.NewSize(1024, 700))
	showHistory(t, u, l)
	rows := shownRows(t, u, l)
	want := map[string]string{
		"/ws/contained": "| yes | 2/0 | Applied", "/ws/off": "| OFF | 0/1 | Discarded",
		"/ws/missing": "| NO | 0 | To apply", "/ws/old": "| — | 0 | Not reviewed",
	}
	for _, r := range rows {
		for ws, tail := range want {
			if strings.Contains(r, ws) {
				if !strings.HasSuffix(r, tail) {
					t.Errorf("row %q, want it to end %q", r, tail)
				}
				delete(want, ws)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("rows %q lack %v", rows, want)
	}
	// At 1024 wide the containment columns are shown.
	var hidden []string
	uitest.Walk(u.history.list, func(o fyne.CanvasObject) {
		if r, ok := o.(*historyRow); ok && r.i == 0 {
			for _, c := range []column{colContained, colEscapes, colDecision} {
				if !r.cell[c].Visible() || r.cell[c].Size().Width < 40 {
					hidden = append(hidden, columns[c].title)
				}
			}
		}
	})
	if len(hidden) > 0 {
		t.Errorf("at 1024 wide, hidden columns %q", hidden)
	}
	u.history.list.Select(u.history.indexOf(pending))
	l.until(t, "the pending run's detail", 5*time.Second, func() bool {
		return strings.Contains(uitest.WidgetText(u.history.detail), "pending: Staged, but not contained")
	})
	if strings.Contains(uitest.WidgetText(u.history.detail), "nothing is in the workspace") {
		t.Errorf("detail: %s", uitest.WidgetText(u.history.detail))
	}
	// The card of an applied or discarded run does not read "not
	// reviewed" either.
	for id, want := range map[int64]string{applied: "Applied", discarded: "Discarded"} {
		u.history.list.Select(u.history.indexOf(id))
		l.until(t, "the run's detail", 5*time.Second, func() bool {
			return strings.Contains(uitest.WidgetText(u.history.detail), fmt.Sprintf("Run %d", id)) && strings.Contains(uitest.WidgetText(u.history.detail), "Containment")
		})
		if d := uitest.WidgetText(u.history.detail); strings.Contains(strings.ToLower(d), "not reviewed") || !strings.Contains(d, want+" (no approval or rejection recorded)") {
			t.Errorf("run %d's card: %s", id, d)
		}
	}
}

// TestHistoryAtSmallWindow: at 1024×700 the selected run's card has room
// (it had about 150 px), and a filter that
// matches no run says so where the rows would be, at a row's text size,
// with a way back to every run.
func TestHistoryAtSmallWindow(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(small)
	ws := workspace(t)
	runScript(t, u, l, ws, "echo x > new.txt\n", nil)
	u.Tabs.Select(u.historyItem)
	if rows := shownRows(t, u, l); len(rows) != 1 {
		t.Fatalf("rows %q", rows)
	}
	if h := u.history.detail.Size().Height; h < 240 {
		t.Errorf("the selected run's card is %.0f px high at 1024×700; want 240 or more", h)
	}
	if u.history.empty.Visible() {
		t.Error("the empty-table message shows with a run in the table")
	}
	u.history.verdict.SetSelected(verdictPass)
	if rows := shownRows(t, u, l); len(rows) != 0 {
		t.Fatalf("pass filter: %q", rows)
	}
	if !u.history.empty.Visible() || !u.history.clearBtn.Visible() || uitest.RichString(u.history.emptyText) != "No run matches the filter." {
		t.Fatalf("no run matches: message shown %v (%q), Show every run %v", u.history.empty.Visible(), uitest.RichString(u.history.emptyText), u.history.clearBtn.Visible())
	}
	for _, tx := range uitest.All(u.history.emptyText, func(tx *canvas.Text) bool { return tx.Text != "" }) {
		if tx.TextSize < theme.TextSize() {
			t.Errorf("the message is drawn at %.0f px, smaller than the rows' text", tx.TextSize)
		}
	}
	test.Tap(u.history.clearBtn)
	if rows := shownRows(t, u, l); len(rows) != 1 || u.history.empty.Visible() || u.history.verdict.Selected != verdictAll {
		t.Errorf("Show every run: rows %q, message %v, verdict %q", rows, u.history.empty.Visible(), u.history.verdict.Selected)
	}
}

// TestHistoryWorkspacesTellApart: at 1024 wide the Workspace column draws
// runs of different workspaces differently, however long their common
// start: demo copies by their folder, others by their last elements.
func TestHistoryWorkspacesTellApart(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "history.db")
	db := openDB(t, dbPath)
	long := "/home/reviewer/src/github.com/some-organisation/some-very-long-repository-name"
	wss := []string{"/tmp/diffgate-demo-1111111111/workspace", "/tmp/diffgate-demo-2222222222/workspace",
		long + "/services/alpha", long + "/services/beta"}
	for _, ws := range wss {
		r := &report.Report{Schema: report.Schema, Workspace: ws, Verdict: report.Fail,
			Script: report.Script{Path: ws + "/gen.sh"}, StartedAt: time.Now(), FinishedAt: time.Now()}
		if _, err := db.Record(context.Background(), &history.Run{Report: r}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	u, l, w := newTestUI(t, Options{DBPath: dbPath})
	w.Resize(small)
	showHistory(t, u, l)
	if rows := shownRows(t, u, l); len(rows) != len(wss) {
		t.Fatalf("rows %q", rows)
	}
	drawn := map[string]string{}
	uitest.Walk(u.history.list, func(o fyne.CanvasObject) {
		if r, ok := o.(*historyRow); ok && r.ws.full != "" {
			drawn[r.ws.full] = r.ws.text.Text
		}
	})
	seen := map[string]string{}
	for full, text := range drawn {
		if other, ok := seen[text]; ok {
			t.Errorf("%q and %q are both drawn as %q", full, other, text)
		}
		seen[text] = full
	}
	if len(drawn) != len(wss) {
		t.Errorf("drawn workspaces %q", drawn)
	}
}
