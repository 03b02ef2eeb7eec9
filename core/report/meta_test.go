package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/snapshot"
)

// One before/after table for the HTML and the app (MetaRows): Mode with
// its symbolic bits and none for a symlink, Size for files only, Owner
// unless unknown, Target for symlinks only; a side without the entry or
// the value reads "—"; only rows with both entries can differ.
func TestMetaRows(t *testing.T) {
	file := &snapshot.Entry{Path: "f", Type: snapshot.File, Perm: 0o4755, Size: 3771, UID: 1000, GID: 100, SHA256: "ab"}
	link := &snapshot.Entry{Path: "f", Type: snapshot.Symlink, Target: "/etc/passwd", UID: -1, GID: -1}
	got := fmt.Sprint(MetaRows(file, link, false))
	want := fmt.Sprint([]MetaRow{
		{Label: "Type", Before: "file", After: "symlink", Changed: true},
		{Label: "Mode", Before: "4755 rwsr-xr-x", After: "—", Changed: true, Mono: true},
		{Label: "Size", Before: "3.7 KiB (3,771 bytes)", After: "—", Changed: true},
		{Label: "Owner", Before: "1000:100", After: "—", Changed: true, Mono: true},
		{Label: "Target", Before: "—", After: "/etc/passwd", Changed: true, Mono: true},
		{Label: "SHA-256", Before: "ab", After: "—", Changed: true, Mono: true},
	})
	if got != want {
		t.Errorf("rows\n%s\nwant\n%s", got, want)
	}
	if rows := MetaRows(nil, &snapshot.Entry{Type: snapshot.Dir, Perm: 0o1777, UID: 0}, false); len(rows) != 3 || rows[1].Before != "—" || rows[1].After != "1777 rwxrwxrwt" || rows[1].Changed {
		t.Errorf("an added directory: %+v", rows)
	}
}

// The Markdown names a metadata change as the HTML's table does: the
// fixture's run.sh, whose mode changed, reads the same in both.
func TestMetaSameInMarkdownAndHTML(t *testing.T) {
	r := fixtureReport()
	page, _ := parseHTML(t, r)
	if !strings.Contains(page, `<td class="mono">0644 rw-r--r--</td><td class="mono">0755 rwxr-xr-x</td>`) {
		t.Error("the HTML's table lacks run.sh's modes")
	}
	if md := markdownOf(t, r); !strings.Contains(md, "- `run.sh` (changed, violation): Mode 0644 rw-r--r-- → 0755 rwxr-xr-x.") {
		t.Errorf("the Markdown lacks run.sh's modes:\n%s", md)
	}
}
