package report

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/textdiff"
)

// Files whose edits only a word-level and whitespace-aware diff shows: a
// changed word, a trailing space removed, CRLF line endings turned into LF
// and an indentation changed from spaces to a tab.
const (
	wordsBefore = "host = \"api.example.com\"\nport = 443\n"
	wordsAfter  = "host = \"10.0.0.5\"\nport = 443\n"
	spaceBefore = "keep\nname = x \nend\n"
	spaceAfter  = "keep\nname = x\nend\n"
	crlfBefore  = "one\r\ntwo\r\n"
	crlfAfter   = "one\ntwo\n"
	tabBefore   = "if x {\n    y()\n}\n"
	tabAfter    = "if x {\n\ty()\n}\n"
)

// wordReport is a failing report of those four edits.
func wordReport() *Report {
	r := &Report{Schema: Schema, Workspace: "/w", Allowlist: []string{}}
	for _, f := range []struct{ path, before, after string }{
		{"a-words.conf", wordsBefore, wordsAfter}, {"b-space.conf", spaceBefore, spaceAfter},
		{"c-crlf.txt", crlfBefore, crlfAfter}, {"d-tab.go", tabBefore, tabAfter},
	} {
		r.Changes = append(r.Changes, diff.Change{Path: f.path, Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
			Before: file(f.path, 0o644, f.before, t0), After: file(f.path, 0o644, f.after, t1),
			TextDiff: mustDiff(f.before, f.after, f.path)})
	}
	r.Evaluate()
	return r
}

// diffLinesOf returns the "dl add" and "dl del" spans of change n's diff.
func diffLinesOf(t *testing.T, doc *html.Node, id string) (del, add []*html.Node) {
	t.Helper()
	ch := byID(doc, id)
	if ch == nil {
		t.Fatalf("no #%s", id)
	}
	for _, n := range byClass(ch, "span", "dl") {
		switch {
		case hasClass(n, "del"):
			del = append(del, n)
		case hasClass(n, "add"):
			add = append(add, n)
		}
	}
	return del, add
}

// markedLine shows a diff line's DOM: changed words in [brackets], visible
// whitespace as its data-ws markers in {braces}.
func markedLine(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
			return
		case hasClass(n, "ws"):
			s := "{" + attr(n, "data-ws") + "}"
			if hasClass(n, "wd") {
				s = "[" + s + "]"
			}
			b.WriteString(s)
			return
		case hasClass(n, "wd"):
			b.WriteString("[")
			defer b.WriteString("]")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func TestHTMLWordDiffAndWhitespace(t *testing.T) {
	page, doc := parseHTML(t, wordReport())
	for _, tc := range []struct {
		id       string
		del, add string
	}{
		{"change-1", `-host = "[api.example.com]"`, `+host = "[10.0.0.5]"`},
		{"change-2", "-name = x[{·}]", "+name = x"},
		{"change-3", "-one[{\\r}]", "+one"},
		{"change-4", "-[{····}]y()", "+[{→}]y()"},
	} {
		del, add := diffLinesOf(t, doc, tc.id)
		if len(del) == 0 || len(add) == 0 {
			t.Fatalf("%s: %d removed, %d added lines", tc.id, len(del), len(add))
		}
		if got := markedLine(del[0]); got != tc.del {
			t.Errorf("%s: removed line %q, want %q", tc.id, got, tc.del)
		}
		if got := markedLine(add[0]); got != tc.add {
			t.Errorf("%s: added line %q, want %q", tc.id, got, tc.add)
		}
	}
	// The text itself is kept (copying a line copies its real spaces), but
	// a carriage return never reaches the page: a browser would break the
	// line there. Its marker is an empty span.
	del, _ := diffLinesOf(t, doc, "change-3")
	if got := textOf(del[0]); got != "-one" {
		t.Errorf("CRLF line's text %q", got)
	}
	if !strings.Contains(page, `-one<span class="ws wd cr" data-ws="\r"></span>`) || strings.ContainsRune(page, '\r') {
		t.Errorf("the page holds a raw carriage return, or no marker for it")
	}
	// Context lines carry no marks.
	for _, n := range byClass(byID(doc, "change-2"), "span", "ctx") {
		if len(byClass(n, "span", "ws"))+len(byClass(n, "span", "wd")) > 0 {
			t.Errorf("context line %q is marked", textOf(n))
		}
	}
}

// In Markdown the whitespace of a diff stays as it is (no "·" or "\r"
// marks inside the code block: copying a line must copy its text), and a
// note under the diff says that changed lines end in whitespace.
func TestMarkdownShowsTrailingSpace(t *testing.T) {
	var md bytes.Buffer
	if err := wordReport().WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n-name = x \n+name = x\n", "\n-one\n-two\n+one\n+two\n",
		"*Some changed lines end in spaces, tabs or a carriage return, which this block cannot show; the HTML report marks them.*"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	for _, bad := range []string{"x·", "→y", `\r`, "\r"} {
		if strings.Contains(md.String(), bad) {
			t.Errorf("Markdown marks whitespace with %q", bad)
		}
	}
	if got := textdiff.ShowTrailingSpace("@@ -1 +1 @@\n a \n-b\t \n+b"); got != "@@ -1 +1 @@\n a \n-b→·\n+b" {
		t.Errorf("ShowTrailingSpace: %q", got)
	}
}
