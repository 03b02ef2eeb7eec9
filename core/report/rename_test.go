package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
)

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
	if len(rs) != 1 || rs[0] != (Rename{From: "old/main.go", To: "new/main.go"}) {
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
