package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

// TestDiffNoteInEveryFormat: a content change without a text diff says why
// in the JSON (diff_note), the Markdown and the HTML report.
func TestDiffNoteInEveryFormat(t *testing.T) {
	file := func(sha string) *snapshot.Entry {
		return &snapshot.Entry{Path: "logo.png", Type: snapshot.File, Perm: 0o644, Size: 3, SHA256: sha, UID: -1, GID: -1}
	}
	r := &Report{Schema: Schema, Verdict: Fail, Reasons: []string{"1 unexpected change"}, Workspace: "/ws",
		Changes: []diff.Change{{Path: "logo.png", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content},
			Before: file(strings.Repeat("a", 64)), After: file(strings.Repeat("b", 64)), DiffNote: diff.NoteBinary}}}
	var js, md, html bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Changes []map[string]any `json:"changes"`
	}
	if err := json.Unmarshal(js.Bytes(), &raw); err != nil || raw.Changes[0]["diff_note"] != "binary" {
		t.Errorf("JSON: %v %v", raw.Changes, err)
	}
	back, err := Parse(js.Bytes())
	if err != nil || back.Changes[0].DiffNote != diff.NoteBinary {
		t.Errorf("parsed back: %v", err)
	}
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "- `logo.png` (changed, violation): no text diff: binary content.") {
		t.Errorf("Markdown lacks the note:\n%s", md.String())
	}
	if err := r.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `<p class="diffnote">no text diff: binary content</p>`) {
		t.Error("HTML lacks the note")
	}
	for note, want := range map[string]string{diff.NoteTooLarge: "over the 256 KiB limit", diff.NoteNotKept: "not kept", diff.NoteBudget: "budget", diff.NoteKeepBudget: "exceeds the keep budget"} {
		if got := DiffNoteText(note); !strings.Contains(got, want) {
			t.Errorf("%s: %q", note, got)
		}
	}
}
