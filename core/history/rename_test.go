package history

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/textdiff"
)

// renameReport is a run that renamed docs/old-name.md to docs/guide.md
// with one line edited (a rename with edits: MarkRenames).
func renameReport() *report.Report {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "line %d of the guide\n", i)
	}
	old := b.String()
	edited := strings.Replace(old, "line 30 of", "line thirty of", 1)
	files := map[string]string{"docs/old-name.md": old, "docs/guide.md": edited}
	r := sampleReport("/ws", 0)
	r.Changes = []diff.Change{
		{Path: "docs/guide.md", Kind: diff.Added, Aspects: []diff.Aspect{}, After: fileEntry("docs/guide.md", edited, 0o644),
			TextDiff: textDiff("", edited, "docs/guide.md")},
		{Path: "docs/old-name.md", Kind: diff.Removed, Aspects: []diff.Aspect{}, Before: fileEntry("docs/old-name.md", old, 0o644),
			TextDiff: textDiff(old, "", "docs/old-name.md")},
	}
	textdiff.MarkRenames(r.Changes, func(c *diff.Change) ([]byte, bool) {
		s, ok := files[c.Path]
		return []byte(s), ok
	})
	r.Evaluate()
	return r
}

func textDiff(before, after, name string) string {
	d, _ := textdiff.Lines([]byte(before), []byte(after), name)
	return d
}

// A rename's fields are stored (migration 10): a run reopened from the
// history shows the rename with its similarity, and its diff once (the
// removed half is not its whole content in red). They are in the run's
// hash, and runs recorded before the migration still verify.
func TestRenamesStored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	old, err := open(path, zerolog.Nop(), 9)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Record(ctx, &Run{Report: sampleReport("/ws", 6)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db := openTest(t, path)
	if b, err := db.Verify(ctx); err != nil || b != nil {
		t.Fatalf("verify after the upgrade: %+v %v", b, err)
	}

	r := renameReport()
	added := r.Changes[0]
	if added.RenamedFrom != "docs/old-name.md" || added.Similarity == 0 || added.Similarity == 100 || added.RenameDiff == "" {
		t.Fatalf("fixture: not a rename with edits: %+v", added)
	}
	id, err := db.Record(ctx, &Run{Report: r}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got.Report.Changes {
		w := r.Changes[i]
		if c.RenamedFrom != w.RenamedFrom || c.RenamedTo != w.RenamedTo || c.Similarity != w.Similarity || c.RenameDiff != w.RenameDiff {
			t.Errorf("change %s read back: from %q to %q %d%%, want from %q to %q %d%%", c.Path, c.RenamedFrom, c.RenamedTo, c.Similarity,
				w.RenamedFrom, w.RenamedTo, w.Similarity)
		}
	}
	if b, err := db.Verify(ctx); err != nil || b != nil {
		t.Fatalf("verify: %+v %v", b, err)
	}
	// The reopened run's HTML: the rename with its similarity, its diff once.
	var page bytes.Buffer
	if err := got.Report.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	alike := fmt.Sprintf("renamed from docs/old-name.md, %d%% alike", added.Similarity)
	if !strings.Contains(page.String(), alike) || !strings.Contains(page.String(), "its diff there shows what changed") {
		t.Errorf("the reopened run's HTML lacks %q or the removed half's note", alike)
	}
	if n := strings.Count(page.String(), `<span class="dl del">`); n != 1 {
		t.Errorf("the reopened run's HTML shows %d removed lines, want the one edited line", n)
	}
	// The fields are in the hash.
	for _, edit := range []string{"similarity = similarity + 1", "renamed_from = CAST('x' AS BLOB)", "rename_diff = CAST('' AS BLOB)"} {
		if _, err := db.sql.Exec("UPDATE changes SET "+edit+" WHERE run_id = ? AND kind = 'added'", id); err != nil {
			t.Fatal(err)
		}
		if b, err := db.Verify(ctx); err != nil || b == nil {
			t.Errorf("after %s: verify %+v %v, want broken", edit, b, err)
		}
		if _, err := db.sql.Exec("UPDATE changes SET renamed_from = ?, similarity = ?, rename_diff = ? WHERE run_id = ? AND kind = 'added'",
			[]byte(added.RenamedFrom), added.Similarity, []byte(added.RenameDiff), id); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := db.Verify(ctx); err != nil || b != nil {
		t.Fatalf("verify after undoing: %+v %v", b, err)
	}
}
