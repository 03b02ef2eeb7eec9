package textdiff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/testenv"
)

// contentsOf serves the test files' contents by path.
func contentsOf(files map[string]string) func(c *diff.Change) ([]byte, bool) {
	return func(c *diff.Change) ([]byte, bool) {
		s, ok := files[c.Path]
		return []byte(s), ok
	}
}

// Of several removed files with the content of an added one, the one with
// its base name is its rename.
func TestRenamePrefersTheBaseName(t *testing.T) {
	body := "same content\n"
	cs := []diff.Change{
		{Path: "a/x.txt", Kind: diff.Removed, Before: fileOf("a/x.txt", body)},
		{Path: "b/y.txt", Kind: diff.Removed, Before: fileOf("b/y.txt", body)},
		{Path: "c/y.txt", Kind: diff.Added, After: fileOf("c/y.txt", body)},
	}
	MarkRenames(cs, nil)
	if cs[2].RenamedFrom != "b/y.txt" || cs[1].RenamedTo != "c/y.txt" || cs[0].RenamedTo != "" || cs[2].Similarity != 100 || cs[2].RenameDiff != "" {
		t.Errorf("renames: %+v", cs)
	}
}

// The rename fields of a path that is not valid UTF-8 keep its bytes.
func TestRenameFieldsRawBytes(t *testing.T) {
	c := diff.Change{Path: "new\xff", Kind: diff.Added, RenamedFrom: "old\xfe", Similarity: 100}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"renamed_from_b64":"b2xk/g=="`) {
		t.Errorf("JSON %s", b)
	}
	var back diff.Change
	if err := json.Unmarshal(b, &back); err != nil || back.RenamedFrom != "old\xfe" {
		t.Errorf("back %q %v", back.RenamedFrom, err)
	}
}

// A folder moved with every file edited: each file pairs with its own
// counterpart (the same name and the most trailing path segments), not
// with the first file of the same name.
func TestRenameFolderMovedWithEdits(t *testing.T) {
	var cs []diff.Change
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		old, cur := fmt.Sprintf("src/pkg%02d/index.js", i), fmt.Sprintf("lib/pkg%02d/index.js", i)
		body := testenv.GoSource(40) + fmt.Sprintf("// package %d\n", i)
		files[old], files[cur] = body, body+"// moved\n"
		cs = append(cs, diff.Change{Path: cur, Kind: diff.Added, After: fileOf(cur, files[cur])},
			diff.Change{Path: old, Kind: diff.Removed, Before: fileOf(old, files[old])})
	}
	MarkRenames(cs, contentsOf(files))
	for _, c := range cs {
		if c.Kind == diff.Added && c.RenamedFrom != strings.Replace(c.Path, "lib/", "src/", 1) {
			t.Errorf("%s renamed from %q", c.Path, c.RenamedFrom)
		}
	}
}

// fileOf is a regular file's entry holding content, as rename detection
// reads it: its type, size and hash.
func fileOf(path, content string) *snapshot.Entry {
	h := sha256.Sum256([]byte(content))
	return &snapshot.Entry{Path: path, Type: snapshot.File, Size: int64(len(content)), SHA256: hex.EncodeToString(h[:])}
}

// An added file's content comes back whole from its text diff, a missing
// final newline included.
func TestContentFromDiff(t *testing.T) {
	d, _ := Lines(nil, []byte("a\nb"), "x")
	noNewline := &diff.Change{Kind: diff.Added, TextDiff: d}
	if b, ok := contentFromDiff(noNewline); !ok || string(b) != "a\nb" {
		t.Errorf("content of a file without a final newline: %q %v", b, ok)
	}
}
