package gate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/testenv"
)

// bigLog is a 5.5 MiB text file: 110,000 numbered lines.
func bigLog() string { return testenv.NumberedLines(110_000) }

// stagedGate runs script in a staged run of ws (a copy stage: it works
// everywhere) and returns the result.
func stagedGate(t *testing.T, ws, script string, cfg gate.Config) *gate.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gen.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := stage.New(t.TempDir(), ws, stage.Copy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Discard() })
	cfg.Workspace, cfg.Script, cfg.Stage, cfg.Timeout = ws, path, st, time.Minute
	res, err := gate.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func change(t *testing.T, r *report.Report, p string) *diff.Change {
	t.Helper()
	for i := range r.Changes {
		if r.Changes[i].Path == p {
			return &r.Changes[i]
		}
	}
	t.Fatalf("no change %s", p)
	return nil
}

// A 5.5 MiB text file with one changed line: a staged run has both
// contents (the workspace is the before) and reports the changed line; a
// direct run kept no copy of it and says why.
func TestLargeFileDiff(t *testing.T) {
	edit := `sed -i 's/^0061234 the quick/0061234 the QUICK/' big.log`
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "big.log"), []byte(bigLog()), 0o644); err != nil {
		t.Fatal(err)
	}
	res := stagedGate(t, ws, edit, gate.Config{})
	c := change(t, res.Report, "big.log")
	if c.DiffNote != "" || !strings.Contains(c.TextDiff, "\n-0061234 the quick brown fox") || !strings.Contains(c.TextDiff, "\n+0061234 the QUICK brown fox") ||
		!strings.Contains(c.TextDiff, "@@ -61232,7 +61232,7 @@") {
		t.Errorf("staged: note %q, diff:\n%.400s", c.DiffNote, c.TextDiff)
	}

	res, _ = gateRunIn(t, ws, edit, gate.Config{})
	if c := change(t, res.Report, "big.log"); c.TextDiff != "" || c.DiffNote != diff.NoteTooLarge {
		t.Errorf("direct: note %q, diff %.80q", c.DiffNote, c.TextDiff)
	}
}

// A large file with many edits: the report carries its first hunks and a
// cut line saying how many more there are.
func TestLargeFileDiffFirstHunks(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "big.log"), []byte(bigLog()), 0o644); err != nil {
		t.Fatal(err)
	}
	res := stagedGate(t, ws, `sed -i 's/000 the quick/000 a quick/' big.log`, gate.Config{}) // every 1,000th line: 110 hunks
	c := change(t, res.Report, "big.log")
	if n := strings.Count(c.TextDiff, "\n@@ "); n != textdiff.ReportHunks {
		t.Errorf("%d hunks in the report, want %d", n, textdiff.ReportHunks)
	}
	if !strings.Contains(c.TextDiff, fmt.Sprintf("\n… cut: %d more hunks not shown (", 110-textdiff.ReportHunks)) {
		t.Errorf("no cut line saying what is left out:\n%s", c.TextDiff[max(0, len(c.TextDiff)-300):])
	}
}

func gateRunIn(t *testing.T, ws, script string, cfg gate.Config) (*gate.Result, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gen.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.Workspace, cfg.Script, cfg.Timeout = ws, path, time.Minute
	res, err := gate.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res, ws
}

// licenceRun makes n files and a script that puts a header on each: the
// 4,788-file licence run in small.
func licenceRun(t *testing.T, n int) (ws, script string) {
	ws = t.TempDir()
	for _, dir := range []string{"src", "vendor"} {
		if err := os.Mkdir(filepath.Join(ws, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if err := os.WriteFile(filepath.Join(ws, dir, fmt.Sprintf("f%03d.go", i)), []byte(fmt.Sprintf("package p\n\nvar x%d = %d\n", i, i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ws, `for f in src/*.go vendor/*.go; do printf '// Licence: MIT\n' | cat - "$f" > "$f.new" && mv "$f.new" "$f"; done`
}

// The keep budget of a direct run is spent in the before-snapshot's walk
// order: with room for a few copies only, the staged run still diffs every
// file (its before-contents are the workspace's), where the direct run
// diffs some and says why for the others.
func TestStagedRunDiffsEveryFile(t *testing.T) {
	ws, script := licenceRun(t, 40)
	res := stagedGate(t, ws, script, gate.Config{KeepBudget: 400, Allow: []string{"vendor/"}})
	for _, c := range res.Report.Changes {
		if !c.Has(diff.Content) {
			continue
		}
		if c.TextDiff == "" || !strings.Contains(c.TextDiff, "+// Licence: MIT") {
			t.Errorf("staged: %s has no diff (note %q)", c.Path, c.DiffNote)
		}
	}
	ws, script = licenceRun(t, 40)
	res, _ = gateRunIn(t, ws, script, gate.Config{KeepBudget: 400})
	var with, without int
	for _, c := range res.Report.Changes {
		switch {
		case !c.Has(diff.Content):
		case c.TextDiff != "":
			with++
		case c.DiffNote == "":
			t.Errorf("direct: %s has neither a diff nor a note", c.Path)
		default:
			without++
		}
	}
	t.Logf("direct run, keep budget 400 bytes: %d with a diff, %d without", with, without)
	if without == 0 || with == 0 {
		t.Errorf("direct run: %d with a diff, %d without; want some of each", with, without)
	}
}

// The run's diff budget goes to violations first: with room for a few
// diffs, every violation has its diff and the allowed changes past the
// budget say "budget".
func TestDiffBudgetViolationsFirst(t *testing.T) {
	ws, script := licenceRun(t, 20)
	// Allowed: src/ (sorted first); violations: vendor/. Each diff is
	// about 100 bytes: the budget holds the 20 violations and a few more.
	res := stagedGate(t, ws, script, gate.Config{Allow: []string{"src/"}, DiffBudget: 2600})
	var allowedDiffs, budget int
	for _, c := range res.Report.Changes {
		if !c.Has(diff.Content) {
			continue
		}
		switch {
		case !c.Allowed && c.TextDiff == "":
			t.Errorf("violation %s has no diff (note %q)", c.Path, c.DiffNote)
		case c.Allowed && c.TextDiff != "":
			allowedDiffs++
		case c.Allowed && c.DiffNote == diff.NoteBudget:
			budget++
		case c.Allowed:
			t.Errorf("allowed %s: no diff, note %q", c.Path, c.DiffNote)
		}
	}
	if budget == 0 || allowedDiffs+budget != 20 {
		t.Errorf("allowed changes: %d with a diff, %d past the budget", allowedDiffs, budget)
	}
}

// A file moved with an edit, and one moved as it is: the report pairs each
// removed path with its added one (renamed_from / renamed_to), the edited
// one with its similarity and diff from the old content; the allowlist
// judges both paths.
func TestRenamesInTheReport(t *testing.T) {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, "line %d of the utility module\n", i)
	}
	for name, body := range map[string]string{"src/util.txt": b.String(), "src/same.txt": "moved as it is\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, _ := gateRunIn(t, ws, `mkdir lib && sed 's/^line 7 of/line seven of/' src/util.txt > lib/util.txt && rm src/util.txt && mv src/same.txt lib/same.txt`,
		gate.Config{Allow: []string{"lib/"}})
	r := res.Report
	util, same := change(t, r, "lib/util.txt"), change(t, r, "lib/same.txt")
	if util.RenamedFrom != "src/util.txt" || util.Similarity < 90 || util.Similarity == 100 || !strings.Contains(util.RenameDiff, "+line seven of the utility module") {
		t.Errorf("lib/util.txt: from %q, similarity %d, diff %q", util.RenamedFrom, util.Similarity, util.RenameDiff)
	}
	if same.RenamedFrom != "src/same.txt" || same.Similarity != 100 || same.RenameDiff != "" {
		t.Errorf("lib/same.txt: from %q, similarity %d", same.RenamedFrom, same.Similarity)
	}
	for _, p := range []string{"src/util.txt", "src/same.txt"} {
		if c := change(t, r, p); c.Kind != diff.Removed || c.RenamedTo == "" || c.Allowed {
			t.Errorf("%s: %s to %q allowed %v", p, c.Kind, c.RenamedTo, c.Allowed)
		}
	}
	if r.Verdict != report.Fail {
		t.Error("the removed paths of the renames passed")
	}
}

// The diff budget follows the reports' rank: with 30 added files and 2
// edited files all violations (the added ones sorted first by path), and
// room for a few diffs, the edits of existing files have theirs.
func TestDiffBudgetEditsBeforeAdded(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"src/config.js", "src/mod7.js"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte("export const a = 1;\nexport const b = 2;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `mkdir -p a_generated && for i in $(seq 1 30); do echo "line $i of a generated file" > a_generated/f$i.txt; done
sed -i 's/b = 2/b = 3/' src/config.js src/mod7.js`
	res := stagedGate(t, ws, script, gate.Config{DiffBudget: 600})
	for _, p := range []string{"src/config.js", "src/mod7.js"} {
		if c := change(t, res.Report, p); c.TextDiff == "" || c.Allowed {
			t.Errorf("edit %s: allowed %v, no diff (note %q)", p, c.Allowed, c.DiffNote)
		}
	}
	budget := 0
	for _, c := range res.Report.Changes {
		if c.Kind == diff.Added && c.DiffNote == diff.NoteBudget {
			budget++
		}
	}
	if budget == 0 {
		t.Error("the budget held every added file: the test proves nothing")
	}
}

// A direct run keeps the before-contents of source-like files first (small,
// outside vendor trees): with a keep budget far smaller than the
// node_modules/ tree that the walk reaches first, the 10 edits of src/ (the
// violations) still have their diffs, and the allowed vendor files without
// one say the keep budget is why.
func TestDirectRunKeepsSourceFirst(t *testing.T) {
	ws := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		write(fmt.Sprintf("node_modules/pkg/f%03d.js", i), fmt.Sprintf("module.exports = %d; // a vendored file of the tree\n", i))
	}
	for i := range 10 {
		write(fmt.Sprintf("src/mod%d.js", i), fmt.Sprintf("export const a = %d;\n", i))
	}
	res, _ := gateRunIn(t, ws, `for f in node_modules/pkg/*.js src/*.js; do sed -i 's/= /= 1+/' "$f"; done`,
		gate.Config{KeepBudget: 4000, Allow: []string{"node_modules/"}})
	kept := 0
	for _, c := range res.Report.Changes {
		switch {
		case strings.HasPrefix(c.Path, "src/"):
			if c.Allowed || !strings.Contains(c.TextDiff, "+export const a = 1+") {
				t.Errorf("edit %s: allowed %v, no diff (note %q)", c.Path, c.Allowed, c.DiffNote)
			}
		case c.TextDiff != "":
			kept++
		case c.DiffNote != diff.NoteKeepBudget:
			t.Errorf("%s: no diff, note %q", c.Path, c.DiffNote)
		}
	}
	t.Logf("vendor files with a diff: %d of 300", kept)
	if kept == 300 {
		t.Error("the budget held every vendor file: the test proves nothing")
	}
}
