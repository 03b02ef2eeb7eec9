package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/textdiff"
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
			if !textdiff.IsCutLine(textOf(n)) {
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
	for _, want := range []string{"\n-var a=1;function f(){return a+1}", "\n+var a=1;function f(){return a+2}", "\n… cut: the line above is shown around its changes "} {
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

// middleEdit is a failing report whose one violation is a one-token edit in
// the middle of a 40 KiB one-line file: "v1200=x1200;" became
// "v1200=EDITED;".
func middleEdit() *Report {
	var b strings.Builder
	for i := 0; b.Len() < 40<<10; i++ {
		fmt.Fprintf(&b, "v%d=x%d;", i, i)
	}
	line := b.String()
	before, after := line+"\n", strings.Replace(line, "v1200=x1200;", "v1200=EDITED;", 1)+"\n"
	return &Report{Verdict: Fail, Workspace: "/w", Changes: []diff.Change{{
		Path: "assets/app.min.js", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
		Before: file("assets/app.min.js", 0o644, before, t0), After: file("assets/app.min.js", 0o644, after, t1),
		TextDiff: mustDiff(before, after, "assets/app.min.js"),
	}}}
}

// changedLines returns the removed and the added line of a diff's text.
func changedLines(t *testing.T, where, d string) (del, add string) {
	t.Helper()
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ "):
		case strings.HasPrefix(l, "-"):
			del = l
		case strings.HasPrefix(l, "+"):
			add = l
		}
	}
	if del == "" || add == "" {
		t.Fatalf("%s: no removed or added line in\n%.300s", where, d)
	}
	return del, add
}

// A one-token edit in the middle of a 40 KiB line is visible in every
// format: the removed line shows the old token and the added line the new
// one, each in a window that starts and ends with "…"; the Markdown says
// no lines of the hunk are missing.
func TestLongLineEditVisibleInEveryFormat(t *testing.T) {
	r := middleEdit()
	check := func(where, del, add string) {
		t.Helper()
		if !strings.Contains(del, "v1200=x1200;") || strings.Contains(del, "EDITED") {
			t.Errorf("%s: the removed line lacks the old token: %.120q…", where, del)
		}
		if !strings.Contains(add, "v1200=EDITED;") || strings.Contains(add, "x1200;") {
			t.Errorf("%s: the added line lacks the new token: %.120q…", where, add)
		}
		for _, l := range []string{del, add} {
			if !strings.HasPrefix(l[1:], textdiff.Ellipsis) || !strings.HasSuffix(l, textdiff.Ellipsis) || len(l) > textdiff.MaxLine {
				t.Errorf("%s: not a window around the change (%d bytes): %.80q", where, len(l), l)
			}
		}
	}
	// JSON text_diff.
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(js.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	del, add := changedLines(t, "JSON", back.Changes[0].TextDiff)
	check("JSON text_diff", del, add)
	if !strings.Contains(back.Changes[0].TextDiff, "\n… cut: the line above is shown around its changes (") {
		t.Errorf("JSON: no cut line says the line is windowed:\n%.400s", back.Changes[0].TextDiff)
	}

	// Markdown.
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	del, add = changedLines(t, "Markdown", md.String()[strings.Index(md.String(), "```diff"):])
	check("Markdown", del, add)
	if strings.Contains(md.String(), "of this hunk not shown") {
		t.Errorf("Markdown says lines of the hunk are missing:\n%s", md.String())
	}

	// HTML: the changed words are marked (class "wd") in both lines.
	_, doc := parseHTML(t, r)
	var marked []string
	for _, n := range byClass(doc, "span", "dl") {
		if !hasClass(n, "del") && !hasClass(n, "add") {
			continue
		}
		text := textOf(n)
		if hasClass(n, "del") {
			del = text
		} else {
			add = text
		}
		for _, w := range byClass(n, "span", "wd") {
			marked = append(marked, textOf(w))
		}
	}
	check("HTML", del, add)
	if len(marked) != 2 || !strings.Contains(marked[0], "x1200") || !strings.Contains(marked[1], "EDITED") {
		t.Errorf("HTML: changed words marked %q", marked)
	}
}
