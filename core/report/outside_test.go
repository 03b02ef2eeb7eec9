package report

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
	"golang.org/x/net/html"
)

// guardedReport is a contained run that met everything outside the
// workspace: blocked actions (one repeated, one with a control character
// in its target), a watch with an unwatchable path and a cut walk, and
// changes outside the workspace of every kind.
func guardedReport() *Report {
	r := fixtureReport()
	r.Containment = &Containment{Mode: "auto", LandlockABI: 7, Contained: true, Observed: true,
		Layers: []Layer{{Name: "env", Requested: true, Enforced: true, How: "allow list"}}}
	r.Blocked = []Blocked{
		{Kind: "write", Target: "/home/u/.bashrc", PID: 812, Cmd: "sh -c echo x >> ~/.bashrc", Op: "openat", Count: 1},
		{Kind: "net", Target: "127.0.0.1:8080", PID: 815, Cmd: "curl http://127.0.0.1:8080", Op: "connect", Count: 3},
		{Kind: "read", Target: "/home/u/.ssh/id_\x1b[2Jed25519", PID: 816, Cmd: "cat", Op: "openat"},
	}
	bashrcB := &snapshot.Entry{Path: "/home/u/.bashrc", Type: snapshot.File, Perm: 0o644, Size: 3771, UID: 1000, GID: 1000, MTime: t0, CTime: t0, Ino: 11}
	bashrcA := *bashrcB
	bashrcA.Size, bashrcA.MTime, bashrcA.CTime = 3773, t1, t1
	keysB := &snapshot.Entry{Path: "/home/u/.ssh/authorized_keys", Type: snapshot.File, Perm: 0o600, Size: 90, UID: 1000, GID: 1000, MTime: t0, CTime: t0, Ino: 12}
	keysA := *keysB
	keysA.Perm, keysA.Ino, keysA.CTime = 0o644, 13, t1
	cron := &snapshot.Entry{Path: "/var/spool/cron/crontabs", Type: snapshot.Dir, Perm: 0o1730, UID: 0, GID: 102, MTime: t0, CTime: t0, Ino: 14}
	cronA := *cron
	cronA.MTime, cronA.CTime = t1, t1
	r.Watch = &Watch{Entries: 6, Paths: []WatchedPath{
		{Path: "/home/u/.bashrc", Default: true, Entries: 1},
		{Path: "/home/u/.ssh/authorized_keys", Default: true, Entries: 1},
		{Path: "/home/u/.config/autostart", Default: true, Entries: 2},
		{Path: "/home/u/.config/systemd/user", Default: true},
		{Path: "/var/spool/cron/crontabs", Default: true, For: "/var/spool/cron/crontabs/u", Entries: 1},
		{Path: "/srv/big", Entries: 1, Cut: "10000 entries"},
		{Path: "/home/ci/work/repo/sub", Skipped: "inside the workspace: the diff covers it"},
	}, Unwatchable: []Unwatchable{{Path: "/var/spool/cron/crontabs/u", Reason: "permission denied"}}}
	r.Outside = []Outside{
		{Path: "/home/u/.bashrc", Kind: diff.Changed, Aspects: []string{OutsideSize, OutsideMTime, OutsideCTime}, Before: bashrcB, After: &bashrcA},
		{Path: "/home/u/.config/autostart/evil.desktop", Kind: diff.Added, Aspects: []string{},
			After: &snapshot.Entry{Type: snapshot.File, Perm: 0o644, Size: 120, UID: 1000, GID: 1000}},
		{Path: "/home/u/.ssh/authorized_keys", Kind: diff.Changed, Aspects: []string{OutsideMode, OutsideInode, OutsideCTime}, Before: keysB, After: &keysA},
		{Path: "/var/spool/cron/crontabs", Kind: diff.Changed, Aspects: []string{OutsideMTime, OutsideCTime}, Before: cron, After: &cronA},
		{Path: "/home/u/.zshrc\xff", Kind: diff.Removed, Aspects: []string{},
			Before: &snapshot.Entry{Type: snapshot.Symlink, Size: 9, Target: "dotfiles/zshrc", UID: 1000, GID: 1000}},
	}
	r.Evaluate()
	return r
}

func TestGuardedReportLines(t *testing.T) {
	r := guardedReport()
	want := []string{
		"BLOCKED write /home/u/.bashrc",
		"BLOCKED net 127.0.0.1:8080 (3 times)",
		`BLOCKED read "/home/u/.ssh/id_\x1b[2Jed25519"`,
		"OUTSIDE changed /home/u/.bashrc (size 3771 B -> 3773 B)",
		"OUTSIDE added /home/u/.config/autostart/evil.desktop (file 0644 120 B)",
		"OUTSIDE changed /home/u/.ssh/authorized_keys (mode 0600 -> 0644, replaced (new inode))",
		"OUTSIDE changed /var/spool/cron/crontabs (modified, same size)",
		`OUTSIDE removed "/home/u/.zshrc\xff" (symlink -> dotfiles/zshrc)`,
	}
	lines := r.Lines()
	// After the changes and before the process findings.
	i := strings.Index(strings.Join(lines, "\n"), want[0])
	got := strings.Join(lines, "\n")
	if i < 0 || !strings.Contains(got, strings.Join(want, "\n")+"\nEXIT 3\nLEFTOVER pid 4211 sleep 300") ||
		!strings.HasPrefix(got[:i], "CHANGED config.json") {
		t.Fatalf("Lines:\n%s\nwant, after the changes and before EXIT:\n%s", got, strings.Join(want, "\n"))
	}
	wantReasons := []string{"6 unexpected changes", "1 risky change", "3 blocked actions", "5 changes outside the workspace", "script exited 3", "1 leftover process"}
	if !reflect.DeepEqual(r.Reasons, wantReasons) || r.Verdict != Fail {
		t.Errorf("reasons %q, want %q", r.Reasons, wantReasons)
	}
	one := &Report{Blocked: r.Blocked[:1], Outside: r.Outside[:1], Process: Process{}}
	one.Evaluate()
	if strings.Join(one.Reasons, "|") != "1 blocked action|1 change outside the workspace" || one.Verdict != Fail {
		t.Errorf("one of each: %q %s", one.Reasons, one.Verdict)
	}
	if c := r.Count(); c.Blocked != 3 || c.Outside != 5 {
		t.Errorf("counts %+v", c)
	}
	if s := r.Watch.Summary(); s != "watched 6 paths outside the workspace (stat only): 5 existed before the run (6 entries), 1 did not; not watchable: /var/spool/cron/crontabs/u (permission denied, its directory is watched instead, stat only); walk cut short: /srv/big (10000 entries)" {
		t.Errorf("watch summary %q", s)
	}
	for _, tc := range []struct {
		o    Outside
		want string
	}{
		{Outside{Kind: diff.Changed, Aspects: []string{OutsideStat}, Before: &snapshot.Entry{Type: snapshot.File}, After: &snapshot.Entry{Type: snapshot.Unknown, Err: "permission denied"}},
			"cannot stat after the run: permission denied"},
		{Outside{Kind: diff.Changed, Aspects: []string{OutsideStat}, Before: &snapshot.Entry{Type: snapshot.Unknown, Err: "permission denied"}, After: &snapshot.Entry{Type: snapshot.File}},
			"cannot stat before the run: permission denied"},
		{Outside{Kind: diff.Changed, Aspects: []string{OutsideCTime}, Before: &snapshot.Entry{Type: snapshot.File}, After: &snapshot.Entry{Type: snapshot.File}},
			"status changed (ctime)"},
		{Outside{Kind: diff.Changed, Aspects: []string{OutsideLinks, OutsideCTime}, Before: &snapshot.Entry{Type: snapshot.File}, After: &snapshot.Entry{Type: snapshot.File, Nlink: 2}},
			"links 1 -> 2"},
		{Outside{Kind: diff.Changed, Aspects: []string{OutsideType, OutsideSize}, Before: &snapshot.Entry{Type: snapshot.File, Size: 4}, After: &snapshot.Entry{Type: snapshot.Symlink, Size: 3, Target: "/x"}},
			"type file -> symlink, size 4 B -> 3 B"},
		{Outside{Kind: diff.Changed, Aspects: []string{OutsideOwner, OutsideTarget}, Before: &snapshot.Entry{Type: snapshot.Symlink, Target: "a", UID: 1, GID: 1}, After: &snapshot.Entry{Type: snapshot.Symlink, Target: "b\n", UID: 0, GID: 0}},
			`owner 1:1 -> 0:0, target a -> "b\n"`},
	} {
		if got := tc.o.Detail(); got != tc.want {
			t.Errorf("Detail = %q, want %q", got, tc.want)
		}
	}
}

// TestNotObservable: a run whose containment was requested but whose
// blocked actions could not be observed says so in every format; a run
// with --contain=off, or one where they were observed, does not.
func TestNotObservable(t *testing.T) {
	const why = "blocked actions not observable: the supervisor does not read seccomp notifications"
	for _, tc := range []struct {
		c    *Containment
		want string
	}{
		{&Containment{Mode: "auto", Why: why}, why},
		{&Containment{Mode: "on", Why: "no seccomp listener on this kernel"}, "blocked actions not observable: no seccomp listener on this kernel"},
		{&Containment{Mode: "auto"}, "blocked actions not observable: no reason given"},
		{&Containment{Mode: "off", Why: why}, ""},
		{&Containment{Mode: "auto", Observed: true, Why: why}, ""},
		{nil, ""},
	} {
		if got := tc.c.NotObservable(); got != tc.want {
			t.Errorf("%+v: NotObservable = %q, want %q", tc.c, got, tc.want)
		}
		r := &Report{Schema: Schema, Verdict: Pass, Reasons: []string{}, Containment: tc.c}
		for name, write := range map[string]func(*Report, io.Writer) error{
			"json": (*Report).WriteJSON, "md": (*Report).WriteMarkdown, "html": (*Report).WriteHTML,
		} {
			out := string(render(t, r, write))
			has := strings.Contains(out, "blocked actions not observable")
			if tc.want != "" && !strings.Contains(out, strings.TrimPrefix(tc.want, "blocked actions not observable: ")) || tc.want != "" && !has {
				t.Errorf("%s for %+v lacks %q", name, tc.c, tc.want)
			}
			if tc.want == "" && has && name != "json" {
				t.Errorf("%s for %+v says blocked actions are not observable", name, tc.c)
			}
		}
	}
}

// TestGuardedInEveryFormat: blocked actions, the watch and the changes
// outside the workspace are in the JSON (and read back), and are groups of
// their own in the Markdown and the HTML.
func TestGuardedInEveryFormat(t *testing.T) {
	r := guardedReport()
	js := render(t, r, (*Report).WriteJSON)
	back, err := Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Blocked, r.Blocked) || !reflect.DeepEqual(back.Watch, r.Watch) || len(back.Outside) != len(r.Outside) {
		t.Fatalf("read back:\nblocked %+v\nwatch %+v\noutside %+v", back.Blocked, back.Watch, back.Outside)
	}
	for i := range r.Outside {
		if g, w := back.Outside[i].Line(), r.Outside[i].Line(); g != w {
			t.Errorf("outside %d read back as %q, want %q", i, g, w)
		}
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(js, &raw)
	for _, want := range []string{`"kind": "net"`, `"count": 3`, `"op": "connect"`, `"target": "127.0.0.1:8080"`} {
		if !strings.Contains(string(raw["blocked"]), want) {
			t.Errorf("blocked JSON lacks %s:\n%s", want, raw["blocked"])
		}
	}
	for _, want := range []string{`"path": "/home/u/.bashrc"`, `"default": true`, `"entries": 6`, `"cut": "10000 entries"`,
		`"unwatchable": [`, `"reason": "permission denied"`, `"skipped": "inside the workspace: the diff covers it"`} {
		if !strings.Contains(string(raw["watch"]), want) {
			t.Errorf("watch JSON lacks %s:\n%s", want, raw["watch"])
		}
	}
	for _, want := range []string{`"kind": "changed"`, `"aspects": [`, `"size"`, `"before": {`, `"path_b64": "L2hvbWUvdS8uenNocmP/"`} {
		if !strings.Contains(string(raw["outside"]), want) {
			t.Errorf("outside JSON lacks %s:\n%s", want, raw["outside"])
		}
	}

	md := string(render(t, r, (*Report).WriteMarkdown))
	for _, want := range []string{"### Blocked actions (3)", "| ⛔ net | `127.0.0.1:8080` | `pid 815 curl http://127.0.0.1:8080` | connect | 3 |",
		"### Outside the workspace (5)", "| 🟠 changed | `/home/u/.bashrc` | `size 3771 B -> 3773 B` |",
		"| 🟠 added | `/home/u/.config/autostart/evil.desktop` | `file 0644 120 B` |",
		"### Not watchable (1)", "- `/var/spool/cron/crontabs/u`: permission denied",
		"| Blocked actions | ❌ **3 blocked** |", "| Outside the workspace | ❌ **5 changes**; watched 6 paths"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "\x1b") {
		t.Error("Markdown holds a raw ESC")
	}

	page := string(render(t, r, (*Report).WriteHTML))
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	rowsOf := func(class string) []string {
		var out []string
		for _, n := range findAll(doc, func(n *html.Node) bool { return isElem("tr")(n) && hasClass(n, "row") && hasClass(n, class) }) {
			var cells []string
			for _, td := range findAll(n, isElem("td")) {
				cells = append(cells, textOf(td))
			}
			out = append(out, strings.Join(cells, "|"))
		}
		return out
	}
	if got := rowsOf("blocked"); len(got) != 3 || got[1] != "NET|127.0.0.1:8080|pid 815 curl http://127.0.0.1:8080|connect|3" ||
		!strings.Contains(got[2], `"/home/u/.ssh/id_\x1b[2Jed25519"`) {
		t.Errorf("blocked rows %q", got)
	}
	if got := rowsOf("outside"); len(got) != 5 || got[0] != "CHANGED|/home/u/.bashrc|size 3771 B -> 3773 B" {
		t.Errorf("outside rows %q", got)
	}
	for _, id := range []string{"blocked", "outside", "unwatchable"} {
		if byID(doc, id) == nil {
			t.Errorf("no #%s section", id)
		}
	}
	if len(changeRows(doc)) != len(r.Changes) {
		t.Errorf("%d change rows, want %d: the new groups are not change rows", len(changeRows(doc)), len(r.Changes))
	}
	if strings.Contains(page, "\x1b") {
		t.Error("HTML holds a raw ESC")
	}
	for _, want := range []string{`class="stat blocked bad"`, `class="stat outside bad"`, "walk cut short: /srv/big (10000 entries)"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %s", want)
		}
	}
}

// TestGuardedMarkdownBounded: thousands of blocked actions and changes
// outside the workspace still give a Markdown report within a pull-request
// comment, saying what it left out.
func TestGuardedMarkdownBounded(t *testing.T) {
	r := guardedReport()
	for i := 0; i < 5000; i++ {
		r.Blocked = append(r.Blocked, Blocked{Kind: "write", Target: fmt.Sprintf("/home/u/%s/%d", strings.Repeat("d", 100), i), PID: i, Cmd: strings.Repeat("c", 200), Op: "openat"})
		r.Outside = append(r.Outside, Outside{Path: fmt.Sprintf("/home/u/.config/autostart/%s%d", strings.Repeat("x", 100), i), Kind: diff.Added,
			After: &snapshot.Entry{Type: snapshot.File, Perm: 0o644, Size: 1}})
	}
	r.Evaluate()
	md := render(t, r, (*Report).WriteMarkdown)
	if len(md) > MaxMarkdown || !strings.Contains(string(md), "more blocked action") && !strings.Contains(string(md), "blocked actions,") {
		t.Fatalf("%d bytes; end:\n%s", len(md), md[max(0, len(md)-600):])
	}
	if !strings.Contains(string(md), "changes outside the workspace") {
		t.Errorf("the left-out line does not name the changes outside the workspace:\n%s", md[max(0, len(md)-600):])
	}
}

// TestBlockedDropped: blocked actions beyond the list's bound are counted
// in the verdict and said in the reports.
func TestBlockedDropped(t *testing.T) {
	r := guardedReport()
	r.Containment.BlockedDropped = 7
	r.Evaluate()
	if !slices.Contains(r.Reasons, "10 blocked actions") || r.Count().Blocked != 10 {
		t.Errorf("reasons %q counts %+v", r.Reasons, r.Count())
	}
	if md := string(render(t, r, (*Report).WriteMarkdown)); !strings.Contains(md, "7 more blocked actions, beyond the list's bound, counted but not listed.") ||
		!strings.Contains(md, "| Blocked actions | ❌ **10 blocked** |") {
		t.Errorf("Markdown:\n%s", md)
	}
	if page := string(render(t, r, (*Report).WriteHTML)); !strings.Contains(page, html.EscapeString("7 more blocked actions, beyond the list's bound")) || !strings.Contains(page, "10 blocked</span>") {
		t.Error("the HTML does not say the dropped blocked actions")
	}
	// By kind, in every report: the JSON, the Markdown and the HTML.
	r.Containment.BlockedDroppedKinds = map[string]int{"write": 5, "create": 2}
	want := "7 more blocked actions, beyond the list's bound, counted but not listed: create 2, write 5"
	if md := string(render(t, r, (*Report).WriteMarkdown)); !strings.Contains(md, want+".") {
		t.Errorf("Markdown lacks %q:\n%s", want, md)
	}
	if page := string(render(t, r, (*Report).WriteHTML)); !strings.Contains(page, html.EscapeString(want)) {
		t.Errorf("the HTML lacks %q", want)
	}
	if js := string(render(t, r, (*Report).WriteJSON)); !strings.Contains(js, `"blocked_dropped_by_kind": {`) {
		t.Errorf("the JSON lacks blocked_dropped_by_kind:\n%s", js)
	}
}
