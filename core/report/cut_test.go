package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
)

// minifiedEdit is a failing report whose one violation is a one-character
// edit to a 40 KiB one-line file.
func minifiedEdit() *Report {
	line := strings.Repeat("var a=1;function f(){return a+1};", 40<<10/34)
	before, after := line+"\n", strings.Replace(line, "a+1", "a+2", 1)+"\n"
	return &Report{Verdict: Fail, Workspace: "/w", Changes: []diff.Change{{
		Path: "app.min.js", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
		Before: file("app.min.js", 0o644, before, t0), After: file("app.min.js", 0o644, after, t1),
		TextDiff: mustDiff(before, after, "app.min.js"),
	}}}
}

// Every report shows both sides of the long-line edit and marks the cuts as
// cuts (in HTML a line of class "cut", not a context line).
func TestReportsShowBothSidesOfALongLineEdit(t *testing.T) {
	r := minifiedEdit()
	_, doc := parseHTML(t, r)
	var del, add, cut int
	for _, n := range byClass(doc, "span", "dl") {
		switch {
		case hasClass(n, "del"):
			del++
		case hasClass(n, "add"):
			add++
			if !strings.HasPrefix(textOf(n), "+var a=1;function f(){return a+2}") {
				t.Errorf("added line %.40q", textOf(n))
			}
		case hasClass(n, "cut"):
			cut++
			if !IsCutLine(textOf(n)) {
				t.Errorf("cut span %q", textOf(n))
			}
		case hasClass(n, "ctx"):
			t.Errorf("context line %.40q", textOf(n))
		}
	}
	if del != 1 || add != 1 || cut != 2 {
		t.Fatalf("HTML: %d removed, %d added, %d cut lines", del, add, cut)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n-var a=1;function f(){return a+1}", "\n+var a=1;function f(){return a+2}", "\n… cut: the line above goes on for "} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %.40q", want)
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(js.Bytes())
	if err != nil || !strings.Contains(back.Changes[0].TextDiff, "\n+var a=1;function f(){return a+2}") {
		t.Fatalf("JSON text_diff lacks the added line (%v)", err)
	}
}
