package review

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/app/internal/uitest"
)

// TestFolderDetailFollowsTheFilter: a folder shown in the detail says what
// it holds now: after a filter or an allowlist change its counts are the
// ones its row shows.
func TestFolderDetailFollowsTheFilter(t *testing.T) {
	var paths []string
	for i := range 6 {
		paths = append(paths, fmt.Sprintf("gen/f%d.txt", i))
	}
	v, _ := newTestView(t, fileReport(paths), Options{})
	k := v.rowOf("gen")
	if k < 0 {
		t.Fatalf("no row gen/: %q", rowTexts(v))
	}
	v.goRow(k)
	if s := segmentsText(v.detail.status); !strings.HasPrefix(s, "6 changes below this folder, 6 violations") {
		t.Fatalf("folder detail %q", s)
	}
	v.Allow("gen/f0.txt")
	if s := segmentsText(v.detail.status); !strings.HasPrefix(s, "6 changes below this folder, 5 violations") {
		t.Errorf("after allowing one: folder detail %q", s)
	}
	v.filters.search.SetText("f1")
	if s := segmentsText(v.detail.status); !strings.HasPrefix(s, "1 change below this folder, 1 violation") {
		t.Errorf("filtered to f1: folder detail %q", s)
	}
}

// TestDetailDropsAChangeTheFilterHides: a change the reviewer looks at
// that a filter then hides leaves the detail; the detail says why.
func TestDetailDropsAChangeTheFilterHides(t *testing.T) {
	v, _ := newTestView(t, DemoReport(), Options{})
	i := indexOf(t, v.Report(), "config.json")
	v.Select(i)
	f := defaultFilter()
	f.Changed = false
	v.SetFilter(f)
	if v.Selected() == i || v.detail.change == i {
		t.Fatalf("the detail still shows config.json, hidden by the filter: title %q", v.detailTitle())
	}
	if s := segmentsText(v.detail.status); !strings.Contains(s, "hidden by the filter") {
		t.Errorf("detail status %q does not say the change is hidden", s)
	}
	v.SetFilter(defaultFilter()) // back: still nothing selected, no stale row
	if v.Selected() != -1 {
		t.Errorf("selected %d", v.Selected())
	}
	// Allowing the shown change while only violations show: it leaves.
	v.Select(i)
	f = defaultFilter()
	f.Allowed = false
	v.SetFilter(f)
	v.Allow("config.json")
	if v.detail.change == i {
		t.Error("the allowed change stays in the detail while Allowed is filtered out")
	}
}

// TestAllowKeepsTheSelectedRowInView: after Allow… the selected change
// moves (violations first) and the list keeps it in view.
func TestAllowKeepsTheSelectedRowInView(t *testing.T) {
	var paths []string
	for i := range 300 {
		paths = append(paths, fmt.Sprintf("f%03d.txt", i))
	}
	v, _ := newTestView(t, fileReport(paths), Options{})
	v.setTreeMode(false)
	v.Select(indexOf(t, v.Report(), "f150.txt"))
	v.Allow("f150.txt")
	if v.Selected() != indexOf(t, v.Report(), "f150.txt") {
		t.Fatalf("selection lost: %d", v.Selected())
	}
	rows := visibleRows(t, v)
	if !slices.ContainsFunc(rows, func(s string) bool { return strings.HasPrefix(s, "f150.txt") }) {
		t.Errorf("the selected row f150.txt is not drawn after Allow; rows drawn %q", rows)
	}
}

// TestAllowKeepsTheSelectedRowInTheTree: allowing the last violation of a
// folder (which would then start closed) keeps the folder open and the
// selected row selected and drawn.
func TestAllowKeepsTheSelectedRowInTheTree(t *testing.T) {
	var paths []string
	for i := range 120 {
		paths = append(paths, fmt.Sprintf("a%03d/x.txt", i))
	}
	paths = append(paths, "src/one.txt", "src/two.txt")
	v, _ := newTestView(t, fileReport(paths), Options{})
	v.Select(indexOf(t, v.Report(), "src/two.txt"))
	v.Allow("src/one.txt")
	v.Allow("src/two.txt")
	if v.Selected() != indexOf(t, v.Report(), "src/two.txt") || v.selectedRow() < 0 {
		t.Fatalf("selection lost: %d, row %d", v.Selected(), v.selectedRow())
	}
	rows := visibleRows(t, v)
	if !slices.ContainsFunc(rows, func(s string) bool { return strings.HasPrefix(s, "two.txt") }) {
		t.Errorf("the selected row src/two.txt is not drawn after Allow; rows drawn %q", rows)
	}
}

// TestDirectoryCountsAgree: an added directory's row and its detail give
// the same count ("4,601 added" in both, the directory itself counted),
// and the detail says how many changes are below it.
func TestDirectoryCountsAgree(t *testing.T) {
	v, _ := newTestView(t, npmReport(4590), Options{})
	k := v.rowOf("node_modules")
	if k < 0 {
		t.Fatalf("no node_modules row: %q", rowTexts(v))
	}
	badge := rowFor(t, v, "node_modules").badge.Text
	v.goRow(k)
	body := strings.ReplaceAll(uitest.AllText(v.detail.body), " | ", " ")
	if !strings.Contains(badge, "4,601 added") || !strings.Contains(body, badge) || !strings.Contains(body, "4,600 changes below it") {
		t.Errorf("row %q, detail %q", badge, body)
	}
}
