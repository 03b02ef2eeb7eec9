package review

import (
	"strings"
	"testing"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/textdiff"
)

// renameReport has a rename with edits (src/util.go -> lib/util.go, the
// added path allowed, the removed one a violation), a rename of the same
// content within one folder, and an ordinary change.
func renameReport(t *testing.T) *report.Report {
	t.Helper()
	var b strings.Builder
	for i := 0; i < 40; i++ {
		b.WriteString("func f" + strings.Repeat("x", i) + "() {}\n")
	}
	old := b.String()
	edited := strings.Replace(old, "func fxx() {}", "func fxx() { return }", 1)
	files := map[string]string{"src/util.go": old, "lib/util.go": edited, "doc/a.txt": "same\n", "doc/b.txt": "same\n"}
	r := &report.Report{Schema: report.Schema, Workspace: "/w"}
	for _, c := range []struct {
		path string
		kind diff.Kind
	}{{"doc/a.txt", diff.Removed}, {"doc/b.txt", diff.Added}, {"lib/util.go", diff.Added}, {"notes.txt", diff.Added}, {"src/util.go", diff.Removed}} {
		ch := diff.Change{Path: c.path, Kind: c.kind, Aspects: []diff.Aspect{}}
		e := fileEntry([]byte(files[c.path] + map[bool]string{true: "x\n"}[c.path == "notes.txt"]))
		if c.kind == diff.Added {
			ch.After = e
		} else {
			ch.Before = e
		}
		r.Changes = append(r.Changes, ch)
	}
	textdiff.MarkRenames(r.Changes, func(c *diff.Change) ([]byte, bool) {
		s, ok := files[c.Path]
		return []byte(s), ok
	})
	entries := []string{"lib/", "doc/"}
	r.Apply(policy.MustParse(entries...), entries)
	return r
}

// A rename is one row, "old → new", a violation when either path is; n
// stops on it; its detail shows both decisions and the diff from the old
// file. The removed path selected leads to the same row.
func TestRenameIsOneRow(t *testing.T) {
	r := renameReport(t)
	if r.Changes[2].RenamedFrom != "src/util.go" || r.Changes[1].RenamedFrom != "doc/a.txt" {
		t.Fatalf("fixture: renames %+v", r.Renames())
	}
	v, _ := newTestView(t, r, Options{})
	v.setTreeMode(false)
	var rows []string
	for _, i := range v.shownRows() {
		_, label := v.m.rowChange(i, false)
		rows = append(rows, label)
	}
	// Violations first (the rename is one: its removed path is), then in
	// natural path order.
	if got := strings.Join(rows, " | "); got != "src/util.go → lib/util.go | notes.txt | doc/a.txt → doc/b.txt" {
		t.Errorf("rows %q", got)
	}
	uitest.OneText(t, v.changes.reviewed, "0 of 3 reviewed") // 5 changes, 3 rows
	c, _ := v.m.rowChange(indexOf(t, r, "lib/util.go"), false)
	if c.Allowed {
		t.Error("the rename row is allowed though its removed path is a violation")
	}
	if c, _ := v.m.rowChange(indexOf(t, r, "doc/b.txt"), false); !c.Allowed {
		t.Error("a rename with both paths allowed is not allowed")
	}
	if _, label := v.m.rowChange(indexOf(t, r, "doc/b.txt"), true); label != "a.txt → b.txt" {
		t.Errorf("tree label %q", label)
	}
	v.setTreeMode(true)
	if _, label := v.m.rowChange(indexOf(t, r, "lib/util.go"), true); label != "src/util.go → util.go" {
		t.Errorf("tree label %q", label)
	}

	// n goes to the violations: the rename row, then notes.txt.
	v.NextViolation(1)
	if got := r.Changes[v.Selected()].Path; got != "lib/util.go" {
		t.Errorf("first violation %s", got)
	}
	status := uitest.AllText(v.detail.status)
	for _, want := range []string{"RENAMED (", "% alike)", "src/util.go", "Violation: no allowlist entry covers this change", "lib/util.go", "Allowed by entry", "lib/"} {
		if !strings.Contains(status, want) {
			t.Errorf("detail status %q lacks %q", status, want)
		}
	}
	var add, del int
	for _, l := range v.detail.diff.Lines() {
		switch l.Kind {
		case LineAdded:
			add++
		case LineRemoved:
			del++
		}
	}
	if add != 1 || del != 1 {
		t.Errorf("the rename's diff: +%d −%d, want the edited line", add, del)
	}
	drawnLine(t, v.detail.diff, "+func fxx() { return }")
	if !v.detail.allowBtn.Visible() {
		t.Error("no Allow… for the rename's violating path")
	}
	v.Select(indexOf(t, r, "src/util.go"))
	if v.Selected() != indexOf(t, r, "lib/util.go") {
		t.Errorf("selecting the removed path selects %d", v.Selected())
	}
	v.Select(indexOf(t, r, "doc/b.txt"))
	uitest.OneText(t, v.detail.body, "Same content: the file was moved from doc/a.txt to doc/b.txt.")
}

// The banner says how many content changes have a text diff when some
// lack one for want of a copy, of room or for their size.
func TestBannerSaysDiffCoverage(t *testing.T) {
	r := DemoReport()
	v, _ := newTestView(t, r, Options{})
	if strings.Contains(uitest.AllText(v.banner), "have a text diff") {
		t.Error("the demo (a binary file without a diff) has a coverage line")
	}
	i := indexOf(t, r, "config.json")
	r.Changes[i].TextDiff, r.Changes[i].DiffNote = "", diff.NoteBudget
	v.SetReport(r)
	// The line wraps (the banner fits a 1024 px window): its two parts.
	uitest.OneText(t, v.banner, "0 of 4 content changes have a text diff; 1 past the run's budget, 3 without a")
	uitest.OneText(t, v.banner, "reason recorded (an older report)")
}

// A run reopened from the history (which keeps no rename fields) shows its
// renames as a fresh run does: the rename icon, "renamed" with the
// similarity, not an added file with a pencil.
func TestRenameReopened(t *testing.T) {
	fresh := renameReport(t)
	r := fresh.Clone()
	for i := range r.Changes {
		c := &r.Changes[i]
		c.RenamedFrom, c.RenamedTo, c.Similarity, c.RenameDiff = "", "", 0, ""
	}
	// The history keeps the rename's diff as the changes' own text diffs.
	for i := range r.Changes {
		if c := &r.Changes[i]; c.Path == "lib/util.go" || c.Path == "src/util.go" {
			c.TextDiff = fresh.Changes[i].TextDiff
		}
	}
	r.Apply(policy.MustParse("lib/"), []string{"lib/"}) // the doc/ rename a violation: its badge shows
	v, w := newTestView(t, r, Options{})
	v.setTreeMode(false)
	if c := r.Changes[indexOf(t, r, "doc/b.txt")]; c.RenamedFrom != "doc/a.txt" || c.Similarity != 100 {
		t.Errorf("reopened rename: from %q, similarity %d", c.RenamedFrom, c.Similarity)
	}
	if len(uitest.TextsReading(w.Content(), "renamed")) == 0 {
		t.Errorf("no row says renamed: %s", uitest.AllText(v.changes.stack))
	}
}
