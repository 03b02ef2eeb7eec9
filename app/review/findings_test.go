package review

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

// guardedReport is the demo report with two blocked actions and a change
// outside the workspace, as a contained run reports them.
func guardedReport() *report.Report {
	r := cleanReport()
	r.Blocked = []report.Blocked{
		{Kind: "write", Target: "/home/u/.bashrc", PID: 4211, Cmd: "sh -c echo x >> ~/.bashrc", Op: "openat", Count: 1},
		{Kind: "net", Target: "127.0.0.1:8080", PID: 4215, Cmd: "curl http://127.0.0.1:8080/", Op: "connect", Count: 3},
	}
	r.Outside = []report.Outside{{Path: "/home/u/.profile", Kind: diff.Changed, Aspects: []string{report.OutsideSize, report.OutsideMTime},
		Before: &snapshot.Entry{Path: "/home/u/.profile", Type: snapshot.File, Perm: 0o644, Size: 3771, UID: 1000, GID: 1000, MTime: 1700000000e9, Ino: 42},
		After:  &snapshot.Entry{Path: "/home/u/.profile", Type: snapshot.File, Perm: 0o644, Size: 3791, UID: 1000, GID: 1000, MTime: 1700000100e9, Ino: 42}}}
	r.Evaluate()
	return r
}

// rowIDs are the ids of the list's rows, in order.
func rowIDs(v *View) []string {
	var out []string
	for _, r := range v.rows {
		out = append(out, r.id)
	}
	return out
}

// TestFindingsGroups: the blocked actions and the change outside the
// workspace are groups of their own before the changes, in violet and
// orange, each with a chip that filters it (the bar says what it hides),
// n and p stop on each, and a selected one shows its facts: kind, target,
// process, system call, count; for outside, the before/after metadata.
func TestFindingsGroups(t *testing.T) {
	r := guardedReport()
	v, _ := newTestView(t, r, Options{})
	ids := rowIDs(v)
	want := []string{groupBlocked, findingID(groupBlocked, 0), findingID(groupBlocked, 1), groupOutside, findingID(groupOutside, 0)}
	if len(ids) < len(want)+1 || !slices.Equal(ids[:len(want)], want) {
		t.Fatalf("rows %q, want the findings first: %q", ids, want)
	}
	wantColor(t, "the Blocked group", uitest.OneText(t, v.changes.list, "Blocked actions").Color, style.Blocked)
	wantColor(t, "a blocked action", uitest.OneText(t, v.changes.list, "net 127.0.0.1:8080").Color, style.Blocked)
	wantColor(t, "the Outside group", uitest.OneText(t, v.changes.list, "Outside the workspace").Color, style.Outside)
	wantColor(t, "an outside change", uitest.OneText(t, v.changes.list, "changed /home/u/.profile").Color, style.Outside)
	uitest.OneText(t, v.changes.list, "connect · 3 times")
	uitest.OneText(t, v.changes.list, "2 actions")
	uitest.OneText(t, v.changes.list, "size 3771 B -> 3791 B") // 3.7 KiB both: the bytes are shown
	if c := themeColor(style.Blocked); !(func() bool { r, g, b, _ := c.RGBA(); return b > g && r > g })() {
		t.Errorf("Blocked is not violet: %v", c)
	}
	if c := themeColor(style.Outside); !amber(c) {
		t.Errorf("Outside is not orange: %v", c)
	}

	// Chips: Blocked 2, Outside 1; off hides the group, the bar says so.
	if !v.filters.blockedChip.Visible() || v.filters.blockedChip.Text() != "Blocked 2" || v.filters.outsideChip.Text() != "Outside 1" {
		t.Fatalf("chips %q (%v) %q", v.filters.blockedChip.Text(), v.filters.blockedChip.Visible(), v.filters.outsideChip.Text())
	}
	test.Tap(v.filters.blockedChip)
	if slices.Contains(rowIDs(v), groupBlocked) || !v.changes.hiddenBar.Visible() {
		t.Fatalf("Blocked off: rows %q, bar %v", rowIDs(v), v.changes.hiddenBar.Visible())
	}
	uitest.OneText(t, v.changes.hiddenBar, "2 blocked actions hidden by filters —")
	test.Tap(v.filters.outsideChip)
	uitest.OneText(t, v.changes.hiddenBar, "2 blocked actions, 1 change outside the workspace hidden by filters —")
	test.Tap(v.changes.clearBtn)
	if !slices.Equal(rowIDs(v)[:len(want)], want) || v.changes.hiddenBar.Visible() {
		t.Fatalf("Clear: rows %q", rowIDs(v))
	}
	// The text filter looks into targets, commands and paths.
	v.filters.search.SetText("curl")
	if got := rowIDs(v); !slices.Equal(got, []string{groupBlocked, findingID(groupBlocked, 1)}) {
		t.Errorf("filter curl: rows %q", got)
	}
	v.filters.search.SetText("")

	// n from the start: the first blocked action, then the next, then the
	// outside change, then the first violating change.
	var stops []string
	for range 4 {
		v.NextViolation(1)
		stops = append(stops, v.selID)
	}
	if !slices.Equal(stops[:3], []string{findingID(groupBlocked, 0), findingID(groupBlocked, 1), findingID(groupOutside, 0)}) || isFinding(stops[3]) {
		t.Errorf("n stops at %q", stops)
	}

	// The detail of the second blocked action.
	v.goRow(v.rowOf(findingID(groupBlocked, 1)))
	if v.Selected() != -1 || v.detail.allowBtn.Visible() {
		t.Errorf("a finding selected: change %d, Allow… shown %v", v.Selected(), v.detail.allowBtn.Visible())
	}
	uitest.OneText(t, v.detail.title, "127.0.0.1:8080")
	detail := uitest.AllText(v.detail.root)
	for _, s := range []string{"BLOCKED NET", "(3 times)", "containment refused it", "Kind | net", "Target | 127.0.0.1:8080",
		"Process | pid 4215  curl http://127.0.0.1:8080/", "System call | connect", "Count | 3"} {
		if !strings.Contains(detail, s) {
			t.Errorf("blocked detail lacks %q: %s", s, detail)
		}
	}
	// The outside change: its before/after metadata, the size drawn changed.
	v.goRow(v.rowOf(findingID(groupOutside, 0)))
	detail = uitest.AllText(v.detail.root)
	for _, s := range []string{"OUTSIDE CHANGED", "size 3771 B -> 3791 B", "BEFORE | AFTER", "Size | 3.7 KiB (3,771 bytes) | 3.7 KiB (3,791 bytes)", "Owner | 1000:1000 | 1000:1000",
		"Modified | " + formatNanos(1700000000e9) + " | " + formatNanos(1700000100e9), "Inode | 42 | 42"} {
		if !strings.Contains(detail, s) {
			t.Errorf("outside detail lacks %q: %s", s, detail)
		}
	}
	wantColor(t, "the outside change's mtime", uitest.OneText(t, v.detail.meta, formatNanos(1700000100e9)).Color, style.Outside)

	// The group's detail says what it holds; Left closes it (one stop).
	v.goRow(v.rowOf(groupBlocked))
	if !strings.Contains(uitest.AllText(v.detail.root), "2 actions the containment refused") {
		t.Errorf("group detail: %s", uitest.AllText(v.detail.root))
	}
	v.left()
	if got := rowIDs(v); slices.Contains(got, findingID(groupBlocked, 0)) || !slices.Contains(got, groupBlocked) {
		t.Errorf("Left on the group: rows %q", got)
	}
	v.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if !slices.Contains(rowIDs(v), findingID(groupBlocked, 1)) {
		t.Errorf("Enter on the closed group: rows %q", rowIDs(v))
	}
	// The flat list shows the groups too.
	v.setTreeMode(false)
	if got := rowIDs(v); !slices.Equal(got[:len(want)], want) {
		t.Errorf("list mode rows %q", got)
	}
}

// TestFindingsWithoutChanges: a run that changed nothing in the workspace
// but tried to write outside it shows its blocked action, not "No changes".
func TestFindingsWithoutChanges(t *testing.T) {
	r := guardedReport()
	r.Changes, r.Outside = nil, nil
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	if got := rowIDs(v); !slices.Equal(got, []string{groupBlocked, findingID(groupBlocked, 0), findingID(groupBlocked, 1)}) {
		t.Fatalf("rows %q", got)
	}
	if v.changes.stack.Objects[0] != v.changes.list {
		t.Errorf("the list is replaced by %q", uitest.AllText(v.changes.stack))
	}
	if v.filters.outsideChip.Visible() || !v.filters.blockedChip.Visible() {
		t.Errorf("chips: Outside %v, Blocked %v", v.filters.outsideChip.Visible(), v.filters.blockedChip.Visible())
	}
	if !v.NextViolation(1) || v.selID != findingID(groupBlocked, 0) {
		t.Errorf("n selects %q", v.selID)
	}
}

// TestNetworkGroup: the requests through the gate's proxy are a Network
// group after Blocked and Outside; an allowed one is no stop of n and p
// (a refused one is a blocked action too), and a selected one shows host,
// address, method, bytes and process.
func TestNetworkGroup(t *testing.T) {
	r := guardedReport()
	r.Network = []report.NetRequest{
		{Host: "registry.npmjs.org", Port: 443, Method: "CONNECT", BytesOut: 700, BytesIn: 51200, Allowed: true, PID: 4216, Cmd: "node npm install", Addr: "104.16.1.35"},
		{Host: "evil.example", Port: 80, Method: "GET", Reason: "host not allowed", PID: 4217, Cmd: "curl"},
	}
	r.Evaluate()
	v, _ := newTestView(t, r, Options{})
	ids := rowIDs(v)
	want := []string{groupBlocked, findingID(groupBlocked, 0), findingID(groupBlocked, 1), groupOutside, findingID(groupOutside, 0),
		groupNetwork, findingID(groupNetwork, 0), findingID(groupNetwork, 1)}
	if len(ids) < len(want) || !slices.Equal(ids[:len(want)], want) {
		t.Fatalf("rows %q, want %q first", ids, want)
	}
	uitest.OneText(t, v.changes.list, "Network")
	uitest.OneText(t, v.changes.list, "2 requests")
	uitest.OneText(t, v.changes.list, "registry.npmjs.org:443")
	uitest.OneText(t, v.changes.list, "refused: host not allowed")
	for k := range v.rows {
		if v.isStop(k) && strings.HasPrefix(v.rows[k].id, groupNetwork) {
			t.Errorf("n stops at the request %q", v.rows[k].id)
		}
	}
	v.goRow(v.rowOf(findingID(groupNetwork, 0)))
	detail := uitest.AllText(v.detail.root)
	for _, s := range []string{"ALLOWED CONNECT", "Host | registry.npmjs.org:443", "Address | 104.16.1.35", "Bytes in | 50.0 KiB",
		"Process | pid 4216  node npm install"} {
		if !strings.Contains(detail, s) {
			t.Errorf("request detail lacks %q: %s", s, detail)
		}
	}
}

// formatNanos is how the before/after table writes a time (report.MetaFields).
func formatNanos(t int64) string { return time.Unix(0, t).Local().Format("2006-01-02 15:04:05.000") }
