package report

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
)

// TestUnreadableFails: an unreadable entry fails an otherwise passing
// report, prints an UNREADABLE line, round-trips through JSON (path_b64 for
// a path that is not UTF-8) and shows in the Markdown and HTML reports.
func TestUnreadableFails(t *testing.T) {
	r := passingReport()
	r.Unreadable = []diff.Unknown{
		{Path: "box", When: "both", Reason: "cannot open directory: permission denied"},
		{Path: "x\xff", When: "before", Reason: "cannot read: permission denied"},
	}
	r.Evaluate()
	if r.Verdict != Fail || !strings.Contains(strings.Join(r.Reasons, ","), "2 unreadable entries") {
		t.Fatalf("verdict %s %v", r.Verdict, r.Reasons)
	}
	lines := r.Lines()
	want := []string{
		"UNREADABLE box (cannot open directory: permission denied)",
		`UNREADABLE "x\xff" (before the run: cannot read: permission denied)`,
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("lines %q", lines)
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"unreadable": [`) || !strings.Contains(buf.String(), `"path_b64": "eP8="`) {
		t.Fatalf("json:\n%s", buf.String())
	}
	back, err := Parse(buf.Bytes())
	if err != nil || !reflect.DeepEqual(back.Unreadable, r.Unreadable) {
		t.Fatalf("round trip: %+v %v", back.Unreadable, err)
	}
	var md, h bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "### Unreadable (2)") || !strings.Contains(md.String(), "- `box` (both): cannot open directory: permission denied") {
		t.Fatalf("markdown:\n%s", md.String())
	}
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), `<h3 id="unreadable">Unreadable`) || !strings.Contains(h.String(), "<code>box</code> (both): cannot open directory: permission denied") {
		t.Fatal("html lacks the unreadable entries")
	}
}
