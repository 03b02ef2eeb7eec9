package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

// maxWriter records the largest single write.
type maxWriter struct {
	bytes.Buffer
	max int
}

func (m *maxWriter) Write(p []byte) (int, error) {
	m.max = max(m.max, len(p))
	return m.Buffer.Write(p)
}

// TestWriteJSONStreams checks that the JSON report is written a bounded
// piece at a time (not built whole in memory: for a run that added 300,000
// files it is hundreds of MiB) and that its bytes are exactly those of
// encoding the whole report at once.
func TestWriteJSONStreams(t *testing.T) {
	rep := &Report{Schema: Schema, Verdict: Fail, Workspace: "/w<&>", Reasons: []string{"many"},
		StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), FinishedAt: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		Unreadable: []diff.Unknown{{Path: "locked", When: "after", Reason: "permission denied"}}}
	for i := 0; i < 20000; i++ {
		p := fmt.Sprintf("out/<dir>/&f%06d\xff\n.txt", i)
		e := &snapshot.Entry{Path: p, Type: snapshot.File, Perm: 0o644, Size: int64(i), UID: 1, GID: 1, SHA256: fmt.Sprintf("%064x", i)}
		c := diff.Change{Path: p, Kind: diff.Added, Aspects: []diff.Aspect{}, After: e}
		if i%3 == 0 {
			c = diff.Change{Path: p, Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content}, Before: e, After: e, TextDiff: "--- a\n+++ b\n"}
		}
		rep.Changes = append(rep.Changes, c)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep.normalized()); err != nil {
		t.Fatal(err)
	}
	var got maxWriter
	if err := rep.WriteJSON(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		g, w := got.Bytes(), want.Bytes()
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		t.Fatalf("differs at byte %d of %d/%d: got %q, want %q", i, len(g), len(w), g[max(0, i-40):min(len(g), i+40)], w[max(0, i-40):min(len(w), i+40)])
	}
	if got.max > 128<<10 {
		t.Fatalf("a write of %d bytes (of %d): the report was built in memory", got.max, got.Len())
	}
	// No changes: the same bytes too.
	rep.Changes = nil
	want.Reset()
	enc.Encode(rep.normalized())
	got.Reset()
	if err := rep.WriteJSON(&got); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("no changes: %v\n%s\nwant\n%s", err, got.Bytes(), want.Bytes())
	}
}
