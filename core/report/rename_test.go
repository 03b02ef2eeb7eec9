package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/testenv"
)

// contentsOf serves the test files' contents by path.
func contentsOf(files map[string]string) func(c *diff.Change) ([]byte, bool) {
	return func(c *diff.Change) ([]byte, bool) { s, ok := files[c.Path]; return []byte(s), ok }
}

// A removed and an added file with the same content are shown as a rename
// in the model, HTML and Markdown, while the allowlist still judges each
// path: here the added path is allowed and the removed one a violation.
func TestRenameShownAsRename(t *testing.T) {
	body, other := "package main\n\nfunc main() {}\n", "something else\n"
	r := &Report{Schema: Schema, Workspace: "/w", Changes: []diff.Change{
		{Path: "new/main.go", Kind: diff.Added, Aspects: []diff.Aspect{}, After: file("new/main.go", 0o644, body, t1)},
		{Path: "new/other.txt", Kind: diff.Added, Aspects: []diff.Aspect{}, After: file("new/other.txt", 0o644, other, t1)},
		{Path: "old/empty", Kind: diff.Removed, Aspects: []diff.Aspect{}, Before: file("old/empty", 0o644, "", t0)},
		{Path: "new/empty", Kind: diff.Added, Aspects: []diff.Aspect{}, After: file("new/empty", 0o644, "", t1)},
		{Path: "old/main.go", Kind: diff.Removed, Aspects: []diff.Aspect{}, Before: file("old/main.go", 0o644, body, t0)},
	}}
	r.Apply(policy.MustParse("added:new/**"), []string{"added:new/**"})
	rs := r.Renames()
	if len(rs) != 1 || rs[0] != (textdiff.Rename{From: "old/main.go", To: "new/main.go", Similarity: 100}) {
		t.Fatalf("renames %+v", rs)
	}
	if c := r.Changes[4]; c.Allowed || r.Verdict != Fail {
		t.Fatal("the removed path of a rename was allowed by an entry for the new path")
	}

	_, doc := parseHTML(t, r)
	details := map[string]string{}
	for _, row := range changeRows(doc) {
		var path, detail string
		for _, td := range findAll(row, isElem("td")) {
			switch attr(td, "class") {
			case "path":
				path = textOf(td)
			case "detail":
				detail = textOf(td)
			}
		}
		details[path] = detail
	}
	if details["old/main.go"] != "renamed to new/main.go" || details["new/main.go"] != "renamed from old/main.go" {
		t.Fatalf("HTML details %q", details)
	}
	if details["new/empty"] != "" || details["new/other.txt"] != "" {
		t.Fatalf("HTML pairs what is no rename: %q", details)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 🔴 removed | `old/main.go` | `renamed to new/main.go` |", "| 🟢 added | `new/main.go` | `renamed from old/main.go` |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
}

// A removed file and an added one 90% alike or more are a rename with
// edits: both changes say so, with the similarity, and the added one
// carries the diff from the old content; an added file less alike is no
// rename, and the allowlist still judges each path.
func TestMarkRenamesSimilar(t *testing.T) {
	old := testenv.GoSource(60)
	edited := strings.Replace(strings.Replace(old, "return a }", "return a + 1 }", 1), "return b }", "return b * 2 }", 1)
	half := testenv.GoSource(30) + strings.Repeat("// something else entirely\n", 40)
	files := map[string]string{"src/util.go": old, "lib/util.go": edited, "lib/half.go": half}
	r := &Report{Schema: Schema, Workspace: "/w"}
	for _, p := range []string{"lib/half.go", "lib/util.go"} {
		r.Changes = append(r.Changes, diff.Change{Path: p, Kind: diff.Added, Aspects: []diff.Aspect{}, After: file(p, 0o644, files[p], t1)})
	}
	r.Changes = append(r.Changes, diff.Change{Path: "src/util.go", Kind: diff.Removed, Aspects: []diff.Aspect{}, Before: file("src/util.go", 0o644, old, t0)})
	textdiff.MarkRenames(r.Changes, contentsOf(files))
	added, removed := r.Changes[1], r.Changes[2]
	if added.RenamedFrom != "src/util.go" || removed.RenamedTo != "lib/util.go" || added.Similarity < 90 || added.Similarity > 99 || removed.Similarity != added.Similarity {
		t.Fatalf("rename: from %q to %q, similarity %d/%d", added.RenamedFrom, removed.RenamedTo, added.Similarity, removed.Similarity)
	}
	if r.Changes[0].RenamedFrom != "" {
		t.Errorf("lib/half.go (about 60%% alike) is called a rename of %q", r.Changes[0].RenamedFrom)
	}
	d := added.RenameDiff
	if !strings.HasPrefix(d, "--- a/src/util.go\n+++ b/lib/util.go\n") || !strings.Contains(d, "\n+func F() int { return a + 1 }\n") || !strings.Contains(d, "\n-func Fx() int { return b }\n") {
		t.Errorf("rename diff:\n%s", d)
	}
	if a, rm, _ := textdiff.Counts(d); a != 2 || rm != 2 {
		t.Errorf("rename diff +%d −%d, want +2 −2", a, rm)
	}
	r.Apply(policy.MustParse("added:lib/**"), []string{"added:lib/**"})
	if r.Changes[2].Allowed || !r.Changes[1].Allowed || r.Verdict != Fail {
		t.Error("the allowlist does not judge each path of the rename on its own")
	}

	// The reports say it: HTML detail and the diff from the old file.
	_, doc := parseHTML(t, r)
	var detail string
	for _, row := range changeRows(doc) {
		if textOf(byClass(row, "td", "path")[0]) == "lib/util.go" {
			detail = textOf(byClass(row, "td", "detail")[0])
			tb := row.Parent
			if d := folds(tb, "textdiff"); len(d) != 1 || foldSummary(d[0]) != "text diff from the old file" {
				t.Errorf("the rename's diff is not the one from the old file")
			}
			if n := len(byClass(tb, "span", "add")); n != 2 {
				t.Errorf("%d added lines in the rename's diff, want 2", n)
			}
		}
	}
	if want := "renamed from src/util.go, " + strconv.Itoa(added.Similarity) + "% alike"; detail != want {
		t.Errorf("HTML detail %q, want %q", detail, want)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "<summary><code>lib/util.go</code> (added, allowed, from the old file)</summary>") ||
		!strings.Contains(md.String(), "`renamed to lib/util.go, "+strconv.Itoa(added.Similarity)+"% alike`") {
		t.Errorf("Markdown:\n%s", md.String())
	}

	// JSON carries the fields, and they come back.
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(js.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if c := back.Changes[1]; c.RenamedFrom != "src/util.go" || c.RenameDiff != d || c.Similarity != added.Similarity || back.Changes[2].RenamedTo != "lib/util.go" {
		t.Errorf("JSON round trip: %+v", c)
	}
}

// A report without rename fields (an older diffgate's, or reopened from
// the history) still shows its renames: the same content by hash, a
// rename with edits from the contents its text diffs hold.
func TestRenamesFromTextDiffs(t *testing.T) {
	old := testenv.GoSource(40)
	edited := strings.Replace(old, "return c }", "return c + 3 }", 1)
	r := &Report{Changes: []diff.Change{
		{Path: "new.go", Kind: diff.Added, After: file("new.go", 0o644, edited, t1), TextDiff: mustDiff("", edited, "new.go")},
		{Path: "old.go", Kind: diff.Removed, Before: file("old.go", 0o644, old, t0), TextDiff: mustDiff(old, "", "old.go")},
	}}
	rs := r.Renames()
	if len(rs) != 1 || rs[0].From != "old.go" || rs[0].To != "new.go" || rs[0].Similarity < 90 || !strings.Contains(rs[0].Diff, "+func Fxx() int { return c + 3 }") {
		t.Fatalf("renames %+v", rs)
	}
}

// A rename is shown once: the removed half's whole content is not shown in
// red next to the added half's diff from the old file, in HTML or
// Markdown; its row says where the diff is.
func TestRenameShownOnce(t *testing.T) {
	old := testenv.GoSource(60)
	edited := strings.Replace(old, "return a }", "return a + 1 }", 1)
	files := map[string]string{"docs/old-name.go": old, "docs/guide.go": edited}
	r := &Report{Schema: Schema, Workspace: "/w", Verdict: Fail}
	r.Changes = []diff.Change{
		{Path: "docs/guide.go", Kind: diff.Added, Aspects: []diff.Aspect{}, After: file("docs/guide.go", 0o644, edited, t1),
			TextDiff: mustDiff("", edited, "docs/guide.go")},
		{Path: "docs/old-name.go", Kind: diff.Removed, Aspects: []diff.Aspect{}, Before: file("docs/old-name.go", 0o644, old, t0),
			TextDiff: mustDiff(old, "", "docs/old-name.go")},
	}
	textdiff.MarkRenames(r.Changes, contentsOf(files))
	r.Evaluate()
	if r.Changes[0].RenamedFrom == "" {
		t.Fatal("not a rename")
	}
	_, doc := parseHTML(t, r)
	for _, row := range changeRows(doc) {
		tb := row.Parent
		switch textOf(byClass(row, "td", "path")[0]) {
		case "docs/old-name.go":
			if n := len(byClass(tb, "span", "del")); n != 0 {
				t.Errorf("the removed half shows %d removed lines", n)
			}
			if !strings.Contains(textOf(tb), "renamed to docs/guide.go; its diff there shows what changed") {
				t.Errorf("the removed half does not say where its diff is: %q", textOf(tb))
			}
		case "docs/guide.go":
			if n := len(byClass(tb, "span", "del")) + len(byClass(tb, "span", "add")); n != 2 {
				t.Errorf("the added half shows %d changed lines, want 2", n)
			}
		}
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "<code>docs/old-name.go</code> (removed") || !strings.Contains(md.String(), "renamed to docs/guide.go; its diff there") {
		t.Errorf("Markdown shows the removed half's content:\n%s", md.String())
	}
}
