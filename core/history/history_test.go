//go:build !js

package history

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/testenv"
)

// childEnv makes the test binary a child process that records runs into a
// database (see TestConcurrentProcesses).
const childEnv = "DIFFGATE_HISTORY_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(child(spec))
	}
	os.Exit(m.Run())
}

// child records N runs into the database: spec is "PATH|NAME|N".
func child(spec string) int {
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[2])
	db, err := Open(parts[0], zerolog.Nop())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	ws := "/ws/" + parts[1]
	if len(parts) > 3 { // one workspace for every child
		ws = parts[3]
	}
	for i := 0; i < n; i++ {
		rep := sampleReport(ws, 20)
		rep.Script.Args = []string{parts[1], strconv.Itoa(i)}
		m := sampleManifest(ws, 100)
		if _, err := db.Record(context.Background(), &Run{Report: rep, ScriptText: []byte("#!/bin/sh\n")}, sampleContents, m); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

var ctx = context.Background()

func openTest(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(path, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func tempDB(t testing.TB) (*DB, string) {
	path := filepath.Join(t.TempDir(), "sub", "history.db")
	return openTest(t, path), path
}

func shaOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// contentN is the i-th sample file content.
func contentN(i int) string {
	return "content of " + strconv.Itoa(i) + "\n" + strings.Repeat("line\n", i)
}

var contentBySHA = func() map[string][]byte {
	m := map[string][]byte{}
	for i := 0; i < 1000; i++ {
		m[shaOf(contentN(i))] = []byte(contentN(i))
	}
	return m
}()

// sampleContents serves the sample contents by hash, as gate.Result.Contents.
func sampleContents(sha string) ([]byte, bool) {
	b, ok := contentBySHA[sha]
	return b, ok
}

func fileEntry(path, content string, perm uint32) *snapshot.Entry {
	return &snapshot.Entry{Path: path, Type: snapshot.File, Perm: perm, Size: int64(len(content)),
		UID: 1000, GID: 1000, MTime: 1700000000123456789, CTime: 1700000000223456789, Dev: 42, Ino: 7,
		SHA256: shaOf(content)}
}

// sampleReport builds a failing report with n changes of every kind.
func sampleReport(ws string, n int) *report.Report {
	rep := &report.Report{
		Schema: report.Schema, Workspace: ws,
		Script:     report.Script{Path: ws + "/gen.sh", SHA256: shaOf("#!/bin/sh\n"), Args: []string{"-x", "two words"}},
		Allowlist:  []string{".cache/", "added:logs/**"},
		StartedAt:  time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC),
		FinishedAt: time.Date(2026, 3, 1, 10, 0, 2, 5, time.UTC),
		Process: report.Process{ExitCode: 3, Leftovers: []report.Leftover{{PID: 4211, Cmd: "sleep 300"}},
			StdoutTail: "out\n", StderrTail: "err\n"},
	}
	rep.Changes = make([]diff.Change, 0, n)
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("dir%03d/file%06d.txt", i%100, i)
		var c diff.Change
		switch i % 3 {
		case 0:
			c = diff.Change{Path: p, Kind: diff.Added, Aspects: []diff.Aspect{}, After: fileEntry(p, contentN(i%1000), 0o644)}
		case 1:
			c = diff.Change{Path: p, Kind: diff.Removed, Aspects: []diff.Aspect{}, Before: fileEntry(p, contentN(i%1000), 0o644)}
		default:
			c = diff.Change{Path: p, Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content, diff.Mode},
				Before: fileEntry(p, contentN(i%1000), 0o644), After: fileEntry(p, contentN((i+1)%1000), 0o755),
				TextDiff: "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n"}
		}
		if i%5 == 0 {
			c.Allowed, c.Rule = true, "added:logs/**"
		}
		rep.Changes = append(rep.Changes, c)
	}
	rep.Evaluate()
	return rep
}

func sampleManifest(root string, n int) *snapshot.Manifest {
	m := &snapshot.Manifest{Root: root, CreatedAt: time.Date(2026, 3, 1, 10, 0, 3, 17, time.UTC)}
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("src/pkg%04d/file%06d.go", i/50, i)
		m.Entries = append(m.Entries, snapshot.Entry{Path: p, Type: snapshot.File, Perm: 0o644, Size: int64(i),
			UID: 1, GID: 1, MTime: int64(i) * 1e9, CTime: int64(i)*1e9 + 1, Dev: 2049, Ino: uint64(1000 + i),
			SHA256: shaOf(p), Xattr: sampleXattrs[i%len(sampleXattrs)]})
	}
	m.Sort()
	return m
}

// sampleXattrs are the forms of Entry.Xattr: none, unknown, a digest, a
// digest with file capabilities.
var sampleXattrs = []string{snapshot.XattrNone, snapshot.XattrNone, "", shaOf("user.a=1"),
	shaOf("security.capability") + " caps=cap_net_raw+ep"}

// oddReport has paths with a newline and invalid UTF-8 and every field set.
func oddReport(ws string) *report.Report {
	nl, bad := "dir/new\nline.txt", "bad\xff\xfename"
	link := &snapshot.Entry{Path: "ln\xc3", Type: snapshot.Symlink, Perm: 0o777, Size: 9, UID: 0, GID: 0,
		MTime: 5, Target: "/etc/\xffpasswd"}
	dev := &snapshot.Entry{Path: "dev0", Type: snapshot.Char, Perm: 0o600, UID: -1, GID: -1, Rdev: 259}
	rep := &report.Report{
		Schema: report.Schema, Verdict: report.Fail,
		Reasons:   []string{"4 unexpected changes", "2 risky changes", "script timed out", "1 leftover process"},
		Workspace: ws,
		Script: report.Script{Path: ws + "/g\nen.sh", SHA256: shaOf("x"), Args: []string{"", "a\xffb", "c\nd"},
			Command: "/usr/bin/b\xffash", Inline: true},
		Unreadable: []diff.Unknown{{Path: "locked", When: "after", Reason: "permission denied"}, {Path: "x\ny", When: "both", Reason: "too deep"}},
		Allowlist:  []string{".cache/", "!secret\xfe", "added,changed:out/*.o"},
		StartedAt:  time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", 2*3600)),
		// FinishedAt in UTC: both forms must survive.
		FinishedAt: time.Date(2026, 1, 2, 1, 4, 9, 0, time.UTC),
		Process: report.Process{ExitCode: -1, Signal: "killed", TimedOut: true, Timeout: "2s", Cancelled: false,
			Leftovers:  []report.Leftover{{PID: 1, Cmd: "a"}, {PID: 99999, Cmd: "sh -c 'x\xff'"}},
			StdoutTail: "tail\xff", StderrTail: "", StdoutHead: "head\n", StderrHead: "e\x00rr", Supervisor: "killed"},
		Changes: []diff.Change{
			{Path: bad, Kind: diff.Added, Aspects: []diff.Aspect{}, After: fileEntry(bad, contentN(1), 0o644)},
			{Path: nl, Kind: diff.Changed, Aspects: []diff.Aspect{diff.Content}, Before: fileEntry(nl, contentN(2), 0o644),
				After: fileEntry(nl, contentN(3), 0o644), TextDiff: "-a\xff\n+b\n", Allowed: true, Rule: "dir/"},
			{Path: "ln\xc3", Kind: diff.Added, Aspects: []diff.Aspect{}, After: link, Risk: diff.SymlinkEscape},
			{Path: "dev0", Kind: diff.Added, Aspects: []diff.Aspect{}, After: dev, Risk: diff.SpecialFile, Rule: "!dev0"},
			{Path: "gone", Kind: diff.Removed, Aspects: []diff.Aspect{}, Before: &snapshot.Entry{Path: "gone", Type: snapshot.Dir, Perm: 0o755, UID: 3, GID: 4}},
			{Path: "suid", Kind: diff.Changed, Aspects: []diff.Aspect{diff.Mode, diff.Owner}, Risk: diff.Setuid,
				Before: &snapshot.Entry{Path: "suid", Type: snapshot.File, Perm: 0o755, UID: 1, GID: 1, Err: "permission denied"},
				After: &snapshot.Entry{Path: "suid", Type: snapshot.File, Perm: 0o4755, UID: 0, GID: 0,
					Xattr: "security.capability#abc caps=0100000200"}},
		},
	}
	for i := range rep.Changes {
		c := &rep.Changes[i]
		if c.Before != nil {
			c.Before.Path = c.Path
		}
		if c.After != nil {
			c.After.Path = c.Path
		}
	}
	return rep
}

// recordGet records a run of rep (with a script text and sampleContents)
// and reads it back.
func recordGet(t *testing.T, db *DB, rep *report.Report) (int64, *Run) {
	t.Helper()
	id, err := db.Record(ctx, &Run{Report: rep, ScriptText: []byte("x")}, sampleContents, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return id, got
}

func jsonOf(t *testing.T, r *report.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sameReport compares two reports field by field (times by instant and
// offset) and by their JSON.
func sameReport(t *testing.T, got, want *report.Report) {
	t.Helper()
	if !bytes.Equal(jsonOf(t, got), jsonOf(t, want)) {
		t.Errorf("JSON differs:\n got %s\nwant %s", jsonOf(t, got), jsonOf(t, want))
	}
	g, w := *got, *want
	for _, p := range [][2]*time.Time{{&g.StartedAt, &w.StartedAt}, {&g.FinishedAt, &w.FinishedAt}} {
		if !p[0].Equal(*p[1]) || p[0].Format(time.RFC3339Nano) != p[1].Format(time.RFC3339Nano) {
			t.Errorf("time %v, want %v", *p[0], *p[1])
		}
		*p[0], *p[1] = time.Time{}, time.Time{}
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("report differs:\n got %#v\nwant %#v", g, w)
		for i := range g.Changes {
			if i < len(w.Changes) && !reflect.DeepEqual(g.Changes[i], w.Changes[i]) {
				t.Errorf("change %d:\n got %#v %#v %#v\nwant %#v %#v %#v", i, g.Changes[i], g.Changes[i].Before, g.Changes[i].After,
					w.Changes[i], w.Changes[i].Before, w.Changes[i].After)
			}
		}
	}
}

func testRoundTripOddPaths(t *testing.T, newStore storeFn) {
	db, _ := newStore(t)
	want := oddReport("/abs/work\nspace\xff")
	run := &Run{Report: want, ScriptText: []byte("#!/bin/sh\necho \xff\n"), AllowlistVersion: 3}
	id, err := db.Record(ctx, run, sampleContents, nil)
	if err != nil {
		t.Fatal(err)
	}
	if id != 1 || run.ID != 1 || len(run.Hash) != 64 {
		t.Fatalf("id %d, run %+v", id, run)
	}
	got, err := db.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	sameReport(t, got.Report, want)
	if !bytes.Equal(got.ScriptText, run.ScriptText) || got.AllowlistVersion != 3 || got.Hash != run.Hash || got.ID != id {
		t.Errorf("run fields: %+v", got)
	}
	if got.Report.Changes[1].Path != "dir/new\nline.txt" || got.Report.Changes[0].Path != "bad\xff\xfename" {
		t.Errorf("paths %q %q", got.Report.Changes[0].Path, got.Report.Changes[1].Path)
	}
	// The rebuilt report prints the CLI's lines exactly as the original.
	if !reflect.DeepEqual(got.Report.Lines(), want.Lines()) {
		t.Errorf("lines %q, want %q", got.Report.Lines(), want.Lines())
	}
	// Contents of the changed files came along (bad: after; nl: before and after).
	for _, n := range []int{1, 2, 3} {
		data, err := db.Content(ctx, shaOf(contentN(n)))
		if err != nil || string(data) != contentN(n) {
			t.Errorf("content %d: %q, %v", n, data, err)
		}
	}
	if _, err := db.Content(ctx, shaOf("nope")); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing content: %v", err)
	}
	if _, err := db.Get(ctx, 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing run: %v", err)
	}
	list, err := db.List(ctx, Filter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("list %v, %v", list, err)
	}
	s := list[0]
	if s.ID != 1 || s.Workspace != want.Workspace || s.Script != want.Script.Path || s.Verdict != "fail" ||
		s.Added != 3 || s.Removed != 1 || s.Changed != 2 || s.Violations != 5 || !s.StartedAt.Equal(want.StartedAt) {
		t.Errorf("summary %+v", s)
	}
	if b, err := db.Verify(ctx); b != nil || err != nil {
		t.Errorf("verify: %+v, %v", b, err)
	}
}

func testRoundTripEmptyReport(t *testing.T, newStore storeFn) {
	db, _ := newStore(t)
	want := &report.Report{Schema: report.Schema, Verdict: report.Pass, Workspace: "/w"}
	id, err := db.Record(ctx, &Run{Report: want}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(jsonOf(t, got.Report), jsonOf(t, want)) || got.ScriptText != nil || got.AllowlistVersion != 0 {
		t.Errorf("got %s %+v", jsonOf(t, got.Report), got)
	}
	if _, err := db.Record(ctx, &Run{Report: &report.Report{Verdict: "maybe"}}, nil, nil); err == nil {
		t.Error("a bad verdict was recorded")
	}
	if _, err := db.Record(ctx, &Run{}, nil, nil); err == nil {
		t.Error("a run without report was recorded")
	}
}

func testListFilterDecide(t *testing.T, newStore storeFn) {
	db, _ := newStore(t)
	for i := 0; i < 5; i++ {
		rep := sampleReport(fmt.Sprintf("/ws/%d", i%2), 3)
		if i == 4 {
			rep = &report.Report{Verdict: report.Pass, Workspace: "/ws/0"}
		}
		if _, err := db.Record(ctx, &Run{Report: rep}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(f Filter) []int64 {
		t.Helper()
		l, err := db.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, s := range l {
			out = append(out, s.ID)
		}
		n, err := db.Count(ctx, f)
		if err != nil || (f.Limit == 0 && n != len(out)) {
			t.Errorf("count %d, %v; list %v", n, err, out)
		}
		return out
	}
	for _, c := range []struct {
		f    Filter
		want []int64
	}{
		{Filter{}, []int64{5, 4, 3, 2, 1}},
		{Filter{Limit: 2}, []int64{5, 4}},
		{Filter{Workspace: "/ws/0"}, []int64{5, 3, 1}},
		{Filter{Workspace: "/ws/0", Verdict: "fail"}, []int64{3, 1}},
		{Filter{Verdict: "pass"}, []int64{5}},
		{Filter{Workspace: "/nowhere"}, nil},
	} {
		if got := ids(c.f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.f, got, c.want)
		}
	}
	// Workspaces: each once, the most recently run first (run 5 is /ws/0).
	if ws, err := db.Workspaces(ctx, 0); err != nil || !reflect.DeepEqual(ws, []string{"/ws/0", "/ws/1"}) {
		t.Errorf("workspaces %q, %v", ws, err)
	}
	if ws, err := db.Workspaces(ctx, 1); err != nil || !reflect.DeepEqual(ws, []string{"/ws/0"}) {
		t.Errorf("workspaces, limit 1: %q, %v", ws, err)
	}
	if latest, err := db.Latest(ctx); err != nil || latest != 5 {
		t.Errorf("latest %d, %v", latest, err)
	}
	if err := db.Decide(ctx, 2, Reject, "writes outside logs/"); err != nil {
		t.Fatal(err)
	}
	if err := db.Decide(ctx, 2, Approve, "fine after all"); err != nil {
		t.Fatal(err)
	}
	if err := db.Decide(ctx, 2, "maybe", ""); err == nil {
		t.Error("bad decision accepted")
	}
	if err := db.Decide(ctx, 42, Reject, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("decision on a missing run: %v", err)
	}
	r, err := db.Get(ctx, 2)
	if err != nil || r.Decision != Approve || r.DecisionNote != "fine after all" || r.DecidedAt.IsZero() {
		t.Errorf("run 2: %+v, %v", r, err)
	}
	l, _ := db.List(ctx, Filter{Limit: 4})
	if l[3].ID != 2 || l[3].Decision != Approve || l[2].Decision != "" {
		t.Errorf("list decisions: %+v", l)
	}
	// Decisions are not part of the chain.
	if b, err := db.Verify(ctx); b != nil || err != nil {
		t.Errorf("verify: %+v, %v", b, err)
	}
	// A workspace run last comes first, its bytes kept.
	if _, err := db.Record(ctx, &Run{Report: sampleReport("/ws/odd\n\xff", 1)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if ws, err := db.Workspaces(ctx, 0); err != nil || !reflect.DeepEqual(ws, []string{"/ws/odd\n\xff", "/ws/0", "/ws/1"}) {
		t.Errorf("workspaces after an odd one: %q, %v", ws, err)
	}
}

func TestContentStore(t *testing.T) {
	db, _ := tempDB(t)
	big := strings.Repeat("x", MaxContent+1)
	liar := "not what the hash says"
	rep := &report.Report{Verdict: report.Fail, Workspace: "/w", Changes: []diff.Change{
		{Path: "a", Kind: diff.Added, After: fileEntry("a", contentN(7), 0o644)},
		{Path: "b", Kind: diff.Added, After: fileEntry("b", contentN(7), 0o644)}, // same content: stored once
		{Path: "big", Kind: diff.Added, After: fileEntry("big", big, 0o644)},
		{Path: "liar", Kind: diff.Added, After: fileEntry("liar", "truth", 0o644)},
		{Path: "empty", Kind: diff.Added, After: fileEntry("empty", "", 0o644)},
	}}
	calls := map[string]int{}
	contents := func(sha string) ([]byte, bool) {
		calls[sha]++
		switch sha {
		case shaOf(big):
			return []byte(big), true
		case shaOf("truth"):
			return []byte(liar), true
		case shaOf(""):
			return []byte{}, true
		}
		return sampleContents(sha)
	}
	if _, err := db.Record(ctx, &Run{Report: rep}, contents, nil); err != nil {
		t.Fatal(err)
	}
	if calls[shaOf(contentN(7))] != 1 || calls[shaOf(big)] != 0 {
		t.Errorf("calls %v", calls)
	}
	if d, err := db.Content(ctx, shaOf(contentN(7))); err != nil || string(d) != contentN(7) {
		t.Errorf("content 7: %q %v", d, err)
	}
	if d, err := db.Content(ctx, shaOf("")); err != nil || len(d) != 0 {
		t.Errorf("empty content: %q %v", d, err)
	}
	for _, s := range []string{big, "truth", liar} {
		if _, err := db.Content(ctx, shaOf(s)); !errors.Is(err, ErrNotFound) {
			t.Errorf("content %.10q stored: %v", s, err)
		}
	}
	var n int
	db.sql.QueryRow("SELECT count(*) FROM contents").Scan(&n)
	if n != 2 {
		t.Errorf("%d contents stored, want 2", n)
	}
	// A second run with the same content adds nothing, and the stored
	// content is checked against its hash when read.
	if _, err := db.Record(ctx, &Run{Report: rep}, contents, nil); err != nil {
		t.Fatal(err)
	}
	db.sql.QueryRow("SELECT count(*) FROM contents").Scan(&n)
	if n != 2 {
		t.Errorf("%d contents stored after a repeat, want 2", n)
	}
	if _, err := db.sql.Exec("UPDATE contents SET encoding = 'raw', data = ?, size = 3 WHERE sha256 = ?", []byte("abc"), shaOf(contentN(7))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Content(ctx, shaOf(contentN(7))); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("tampered content: %v", err)
	}
}

// chainedDB records runs, allowlists and decisions, interleaved. The chain:
// 1 run 1, 2 allowlist v1, 3 run 2, 4 decision 1 (on run 2), 5 run 3,
// 6 allowlist v2, 7 run 4.
func chainedDB(t *testing.T) *DB {
	t.Helper()
	db, _ := tempDB(t)
	rec := func() {
		if _, err := db.Record(ctx, &Run{Report: sampleReport("/w", 5), ScriptText: []byte("echo")}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	rec()
	if _, err := db.Approve(ctx, "/w", []string{"logs/"}, "first"); err != nil {
		t.Fatal(err)
	}
	rec()
	if err := db.Decide(ctx, 2, Reject, "no"); err != nil {
		t.Fatal(err)
	}
	rec()
	if _, err := db.Approve(ctx, "/w", []string{"logs/", "out/"}, "second"); err != nil {
		t.Fatal(err)
	}
	rec()
	if b, err := db.Verify(ctx); b != nil || err != nil {
		t.Fatalf("before any edit: %+v, %v", b, err)
	}
	return db
}

func TestVerifyCatchesEdits(t *testing.T) {
	star := "x'01022a2a'" // encodeList([]string{"**"})
	for _, c := range []struct {
		name, sql    string
		what, reason string
	}{
		{"exit code", "UPDATE runs SET exit_code = 0 WHERE id = 2", "run 2", "altered"},
		{"verdict", "UPDATE runs SET verdict = 'pass' WHERE id = 3", "run 3", "altered"},
		{"script text", "UPDATE runs SET script_text = x'00' WHERE id = 1", "run 1", "altered"},
		{"change path", "UPDATE changes SET path = CAST('evil' AS BLOB) WHERE run_id = 2 AND seq = 1", "run 2", "altered"},
		{"change allowed", "UPDATE changes SET allowed = 1 WHERE run_id = 3 AND seq = 2", "run 3", "altered"},
		{"change deleted", "DELETE FROM changes WHERE run_id = 1 AND seq = 0", "run 1", "altered"},
		{"change added", "INSERT INTO changes SELECT run_id, 99, path, kind, aspects, before, after, allowed, rule, risk, text_diff, diff_note, links_inside, renamed_to, renamed_from, similarity, rename_diff FROM changes WHERE run_id = 2 AND seq = 0", "run 2", "altered"},
		{"hash rewritten", "UPDATE runs SET hash = '" + strings.Repeat("0", 64) + "' WHERE id = 2", "run 2", "altered"},
		{"newest run edited", "UPDATE runs SET violations = 0 WHERE id = 4", "run 4", "altered"},
		{"run deleted", "DELETE FROM runs WHERE id = 2", "run 2", "run 2 is missing"},
		{"first run deleted", "DELETE FROM runs WHERE id = 1", "run 1", "run 1 is missing"},
		{"runs deleted", "DELETE FROM runs WHERE id IN (2, 3)", "run 2", "run 2 is missing"},
		{"run and its link deleted", "DELETE FROM runs WHERE id = 3; DELETE FROM chain WHERE kind = 'run' AND ref = 3",
			"allowlist version 2 of /w", "chain link 5 is missing"},
		{"runs and their links deleted", "DELETE FROM runs WHERE id IN (3, 4); DELETE FROM chain WHERE kind = 'run' AND ref = 3; " +
			"DELETE FROM chain WHERE kind = 'allowlist' AND ref = 2; DELETE FROM allowlists WHERE id = 2; " +
			"INSERT INTO runs SELECT 5, workspace, script_path, script_sha256, script_text, args, allowlist, allowlist_version, started_at, finished_at, verdict, reasons, exit_code, signal, timed_out, timeout, cancelled, leftovers, stdout_head, stdout_tail, stderr_head, stderr_tail, added, removed, changed, violations, hash, extra FROM runs WHERE id = 2; " +
			"UPDATE chain SET ref = 5 WHERE kind = 'run' AND ref = 4",
			"run 5", "runs 3 to 4 are missing"},
		{"allowlist entries edited", "UPDATE allowlists SET entries = " + star + " WHERE version = 1", "allowlist version 1 of /w", "altered"},
		{"allowlist note edited", "UPDATE allowlists SET note = 'fine' WHERE version = 2", "allowlist version 2 of /w", "altered"},
		{"allowlist deleted", "DELETE FROM allowlists WHERE version = 1", "allowlist 1", "missing"},
		{"allowlist inserted", "INSERT INTO allowlists (workspace, version, entries, note, created_at) VALUES (CAST('/w' AS BLOB), 3, " + star + ", 'x', '2026-01-01T00:00:00Z')",
			"allowlist version 3 of /w", "not in the hash chain"},
		{"decision edited", "UPDATE decisions SET decision = 'approve' WHERE id = 1", "decision 1 on run 2", "altered"},
		{"decision deleted", "DELETE FROM decisions WHERE id = 1", "decision 1", "missing"},
		{"decision inserted", "INSERT INTO decisions (run_id, decision, note, decided_at) VALUES (3, 'approve', '', '2026-01-01T00:00:00Z')",
			"decision 2 on run 3", "not in the hash chain"},
		{"link rewritten", "UPDATE chain SET hash = '" + strings.Repeat("0", 64) + "' WHERE seq = 2", "allowlist version 1 of /w", "altered"},
		{"run inserted", "INSERT INTO runs SELECT 5, workspace, script_path, script_sha256, script_text, args, allowlist, allowlist_version, started_at, finished_at, verdict, reasons, exit_code, signal, timed_out, timeout, cancelled, leftovers, stdout_head, stdout_tail, stderr_head, stderr_tail, added, removed, changed, violations, hash, extra FROM runs WHERE id = 2",
			"run 5", "not in the hash chain (inserted behind diffgate's back)"},
		{"links swapped", "UPDATE chain SET ref = 99 WHERE kind = 'run' AND ref = 1; UPDATE chain SET ref = 1 WHERE kind = 'run' AND ref = 2; " +
			"UPDATE chain SET ref = 2 WHERE kind = 'run' AND ref = 99", "run 2", "run 1 is missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := chainedDB(t)
			if res, err := db.sql.Exec(c.sql); err != nil {
				t.Fatal(err)
			} else if n, _ := res.RowsAffected(); n == 0 {
				t.Fatal("the edit changed nothing")
			}
			b, err := db.Verify(ctx)
			if err != nil || b == nil || b.What != c.what || !strings.Contains(b.Reason, c.reason) {
				t.Fatalf("after the edit: %+v, %v; want broken at %s (%s)", b, err, c.what, c.reason)
			}
		})
	}
}

// TestTamperedAllowlistRefused: an allowlist edited in SQLite is never used.
func TestTamperedAllowlistRefused(t *testing.T) {
	db := chainedDB(t)
	if a, err := db.LatestAllowlist(ctx, "/w"); err != nil || a.Version != 2 {
		t.Fatalf("latest: %+v, %v", a, err)
	}
	if _, err := db.sql.Exec("UPDATE allowlists SET entries = x'01022a2a' WHERE version = 2"); err != nil {
		t.Fatal(err)
	}
	a, err := db.LatestAllowlist(ctx, "/w")
	if a != nil || err == nil || !strings.Contains(err.Error(), "hash chain") {
		t.Fatalf("tampered latest: %+v, %v", a, err)
	}
	if _, err := db.Allowlist(ctx, "/w", 2); err == nil {
		t.Error("tampered version 2 was returned")
	}
	if a, err := db.Allowlist(ctx, "/w", 1); err != nil || a.Entries[0] != "logs/" {
		t.Errorf("untouched version 1: %+v, %v", a, err)
	}
	// An allowlist inserted behind diffgate's back is refused too.
	if _, err := db.sql.Exec("INSERT INTO allowlists (workspace, version, entries, note, created_at) VALUES (CAST('/v' AS BLOB), 1, x'01022a2a', 'x', '2026-01-01T00:00:00Z')"); err != nil {
		t.Fatal(err)
	}
	if a, err := db.LatestAllowlist(ctx, "/v"); a != nil || err == nil {
		t.Errorf("inserted allowlist: %+v, %v", a, err)
	}
}

func testAllowlistVersions(t *testing.T, newStore storeFn) {
	db, _ := newStore(t)
	ws := "/abs/ws"
	if a, err := db.LatestAllowlist(ctx, ws); a != nil || err != nil {
		t.Fatalf("no allowlist yet: %+v, %v", a, err)
	}
	if _, err := db.Approve(ctx, "rel/ws", nil, ""); err == nil && !db.IsTeam() { // a team store's keys are ids
		t.Error("a relative workspace was accepted")
	}
	v1, err := db.Approve(ctx, ws, []string{".cache/", "logs/run.log"}, "first")
	if err != nil {
		t.Fatal(err)
	}
	v2, err := db.Approve(ctx, ws, []string{".cache/", "added:out/**", "!secret\xff"}, "second")
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.Approve(ctx, "/abs/other", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if v1.Version != 1 || v2.Version != 2 || other.Version != 1 || other.Entries == nil {
		t.Errorf("versions %d %d %d", v1.Version, v2.Version, other.Version)
	}
	latest, err := db.LatestAllowlist(ctx, ws)
	if err != nil || !reflect.DeepEqual(latest, v2) {
		t.Errorf("latest %+v, %v; want %+v", latest, err, v2)
	}
	old, err := db.Allowlist(ctx, ws, 1)
	if err != nil || !reflect.DeepEqual(old, v1) {
		t.Errorf("version 1 %+v, %v; want %+v", old, err, v1)
	}
	if _, err := db.Allowlist(ctx, ws, 3); !errors.Is(err, ErrNotFound) {
		t.Errorf("version 3: %v", err)
	}
	all, err := db.Allowlists(ctx, ws)
	if err != nil || len(all) != 2 || !reflect.DeepEqual(all[0], *v1) || !reflect.DeepEqual(all[1], *v2) {
		t.Errorf("all %+v, %v", all, err)
	}
	added, removed := DiffAllowlists(v1, v2)
	if !reflect.DeepEqual(added, []string{"added:out/**", "!secret\xff"}) || !reflect.DeepEqual(removed, []string{"logs/run.log"}) {
		t.Errorf("diff 1->2: +%q -%q", added, removed)
	}
	added, removed = DiffAllowlists(v2, v1)
	if !reflect.DeepEqual(removed, []string{"added:out/**", "!secret\xff"}) || !reflect.DeepEqual(added, []string{"logs/run.log"}) {
		t.Errorf("diff 2->1: +%q -%q", added, removed)
	}
	added, removed = DiffAllowlists(nil, v1)
	if !reflect.DeepEqual(added, v1.Entries) || removed != nil {
		t.Errorf("diff nil->1: +%q -%q", added, removed)
	}
	// A run records the version it used.
	id, err := db.Record(ctx, &Run{Report: sampleReport(ws, 1), AllowlistVersion: latest.Version}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := db.Get(ctx, id); r.AllowlistVersion != 2 {
		t.Errorf("run used version %d", r.AllowlistVersion)
	}
}

func testHashCache(t *testing.T, newStore storeFn) {
	db, _ := newStore(t)
	ws := "/abs/ws"
	if m, err := db.HashCache(ctx, ws); m != nil || err != nil {
		t.Fatalf("no cache yet: %v, %v", m, err)
	}
	const n = 200_000
	m := sampleManifest(ws, n)
	// Only regular files with a hash are cached.
	m.Entries = append(m.Entries,
		snapshot.Entry{Path: "zz/dir", Type: snapshot.Dir},
		snapshot.Entry{Path: "zz/err", Type: snapshot.File, SHA256: shaOf("x"), Err: "EACCES"},
		snapshot.Entry{Path: "zz/nohash", Type: snapshot.File},
		snapshot.Entry{Path: "zz/odd\n\xff", Type: snapshot.File, SHA256: shaOf("odd"), Ino: 1, Dev: 1, Size: 3},
	)
	start := time.Now()
	if _, err := db.Record(ctx, &Run{Report: sampleReport(ws, 1)}, nil, m); err != nil {
		t.Fatal(err)
	}
	recorded := time.Since(start)
	start = time.Now()
	got, err := db.HashCache(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d entries: record %v, load %v", n, recorded, time.Since(start))
	if len(got.Entries) != n+1 || got.Root != ws || !got.CreatedAt.Equal(m.CreatedAt) {
		t.Fatalf("%d entries, root %q, created %v", len(got.Entries), got.Root, got.CreatedAt)
	}
	for i, e := range got.Entries[:n] {
		w := m.Entries[i]
		if e.Path != w.Path || e.Dev != w.Dev || e.Ino != w.Ino || e.Size != w.Size || e.MTime != w.MTime ||
			e.CTime != w.CTime || e.SHA256 != w.SHA256 || e.Type != snapshot.File {
			t.Fatalf("entry %d: %+v, want %+v", i, e, w)
		}
	}
	if e := got.Lookup("zz/odd\n\xff"); e == nil || e.SHA256 != shaOf("odd") {
		t.Errorf("odd path: %+v", e)
	}
	// The next run replaces it.
	small := sampleManifest(ws, 3)
	if _, err := db.Record(ctx, &Run{Report: sampleReport(ws, 1)}, nil, small); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.HashCache(ctx, ws); len(got.Entries) != 3 {
		t.Errorf("after a second run: %d entries", len(got.Entries))
	}
	// Without a manifest, the cache stays.
	if _, err := db.Record(ctx, &Run{Report: sampleReport(ws, 1)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.HashCache(ctx, ws); got == nil || len(got.Entries) != 3 {
		t.Errorf("after a run without manifest: %v", got)
	}
	if got, _ := db.HashCache(ctx, "/abs/other"); got != nil {
		t.Errorf("other workspace: %v", got)
	}
}

func TestCacheCodecRejectsGarbage(t *testing.T) {
	z, _ := encodeCache(sampleManifest("/w", 10))
	if _, err := decodeCache(z); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeCache(z[:len(z)/2]); err == nil {
		t.Error("truncated cache decoded")
	}
	for _, bad := range [][]byte{nil, []byte("DGHC\x02"), []byte("DGHC\x01\xff\xff"), append(z, 0)} {
		if _, err := decodeCache(bad); err == nil {
			t.Errorf("garbage cache %q decoded", bad)
		}
	}
}

func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "history.db")
	const perChild = 50
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|p%d|%d", childEnv, path, i, perChild))
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Errorf("child %d: %v: %s", i, errs[i], outs[i])
		}
	}
	db := openTest(t, path)
	for _, ws := range []string{"", "/ws/p0", "/ws/p1"} {
		n, err := db.Count(ctx, Filter{Workspace: ws})
		want := perChild
		if ws == "" {
			want = 2 * perChild
		}
		if err != nil || n != want {
			t.Errorf("workspace %q: %d runs, %v; want %d", ws, n, err, want)
		}
	}
	if b, err := db.Verify(ctx); b != nil || err != nil {
		t.Errorf("verify: %+v, %v", b, err)
	}
}

func testConcurrentGoroutines(t *testing.T, newStore storeFn) {
	db, path := newStore(t)
	other := openTest(t, path) // a second pool on the same file
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := db
			if i%2 == 1 {
				d = other
			}
			for j := 0; j < 5; j++ {
				if _, err := d.Record(ctx, &Run{Report: sampleReport("/w", 10)}, sampleContents, nil); err != nil {
					errs <- err
				}
				if _, err := d.Approve(ctx, "/w", []string{strconv.Itoa(j)}, ""); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, _ := db.Count(ctx, Filter{}); n != 40 {
		t.Errorf("%d runs", n)
	}
	if l, _ := db.Allowlists(ctx, "/w"); len(l) != 40 || l[39].Version != 40 {
		t.Errorf("%d allowlist versions", len(l))
	}
	if b, err := db.Verify(ctx); b != nil || err != nil {
		t.Errorf("verify: %+v, %v", b, err)
	}
}

func TestRecord100k(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	db, _ := tempDB(t)
	rep := sampleReport("/w", 100_000)
	start := time.Now()
	id, err := db.Record(ctx, &Run{Report: rep}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded 100,000 changes in %v", time.Since(start))
	start = time.Now()
	got, err := db.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("read them back in %v", time.Since(start))
	if len(got.Report.Changes) != 100_000 || !reflect.DeepEqual(got.Report.Changes[99_999], rep.Changes[99_999]) {
		t.Fatalf("%d changes back", len(got.Report.Changes))
	}
	start = time.Now()
	if b, err := db.Verify(ctx); b != nil || err != nil {
		t.Errorf("verify: %+v, %v", b, err)
	}
	t.Logf("verified in %v", time.Since(start))
}

func BenchmarkRecord100k(b *testing.B) {
	db, _ := tempDB(b)
	rep := sampleReport("/w", 100_000)
	cpu := cpuTime()
	for b.Loop() {
		if _, err := db.Record(ctx, &Run{Report: rep}, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time is steadier than wall time on a busy machine.
	if d := cpuTime() - cpu; d > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkHashCache200k(b *testing.B) {
	db, _ := tempDB(b)
	m := sampleManifest("/w", 200_000)
	if _, err := db.Record(ctx, &Run{Report: sampleReport("/w", 0)}, nil, m); err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			encodeCache(m)
		}
	})
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.HashCache(ctx, "/w"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestMigrationFiles(t *testing.T) {
	if len(migrations) == 0 || migrations[0].version != 1 {
		t.Fatalf("migrations %v", migrations)
	}
	bad := fstest.MapFS{
		"migrations/0001_init.sql": {Data: []byte("SELECT 1;")},
		"migrations/0003_gap.sql":  {Data: []byte("SELECT 1;")},
	}
	if _, err := loadMigrations(bad); err == nil {
		t.Error("a gap in migration numbers was accepted")
	}
	bad = fstest.MapFS{"migrations/1_init.sql": {Data: []byte("SELECT 1;")}}
	if _, err := loadMigrations(bad); err == nil {
		t.Error("a badly named migration was accepted")
	}
}

// schemaOf returns the database's schema SQL, sorted.
func schemaOf(t *testing.T, db *DB) string {
	t.Helper()
	rows, err := db.sql.Query("SELECT type, name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, s string
		rows.Scan(&typ, &name, &s)
		fmt.Fprintf(&b, "%s %s: %s\n", typ, name, s)
	}
	return b.String()
}

// seeds write data in the schema of a given version through raw SQL, so an
// upgrade from that version is tested with data in it. Keep each seed as is
// when adding a migration: it describes the old schema.
var seeds = map[int]func(t *testing.T, db *DB){
	1: seedV1,
	2: seedV2,
	// Version 3: the data of version 2 (migration 3 added runs.extra, empty
	// for them).
	3: seedV2,
	// Version 4: the same (migration 4 added stage events, none for them).
	4: seedV2,
	// Version 5: the same (migration 5 added changes.diff_note, empty for
	// them).
	5: seedV2,
	// Version 6: the same (migration 6 added changes.links_inside, empty
	// for them; migration 7, the viewed marks, none for them).
	6: seedV2,
	// Version 7: the same (migration 8 added decisions.allowlist_version,
	// 0 for them).
	7: seedV2,
	// Version 8: the same (migration 9 rebuilt stage_events, none for
	// them: TestStageEventsSurviveMigration9 covers rows).
	8: seedV2,
	// Version 9: the same (migration 10 added the changes' rename fields,
	// empty for them: TestRenamesStored covers rows).
	9: seedV2,
	// Version 10: the same (migration 11 added allowlists.approved_by,
	// empty for them).
	10: seedV2,
	// Version 11: the same (migration 12 added pending_push, empty).
	11: seedV2,
	// Version 12: the same (migration 13 added workspace_shape, empty).
	12: seedV2,
}

// seedV2 writes the data of version 1, in the chain as migration 2 put it.
var seedV2 = func(t *testing.T, db *DB) {
	seedV1(t, db)
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO chain (kind, ref, hash) SELECT 'run', id, hash FROM runs ORDER BY id"); err != nil {
		t.Fatal(err)
	}
	if err := adoptIntoChain(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func seedV1(t *testing.T, db *DB) {
	{
		_, err := db.sql.Exec(`INSERT INTO allowlists (workspace, version, entries, note, created_at)
			VALUES (CAST('/seed' AS BLOB), 1, ?, 'seeded', '2026-01-01T00:00:00Z')`, encodeList([]string{"a/", "b"}))
		if err != nil {
			t.Fatal(err)
		}
		// Two runs, chained as version 1 chained runs (to the previous
		// run), and a decision on the first.
		prev := ""
		for i := 1; i <= 2; i++ {
			row, err := newRunRow(&Run{Report: sampleReport("/seed", 0)})
			if err != nil {
				t.Fatal(err)
			}
			row.exitCode = int64(i)
			prev = chainHash(prev, newCanon(row).sum())
			_, err = db.sql.Exec(`INSERT INTO runs (workspace, script_path, script_sha256, script_text,
				args, allowlist, allowlist_version, started_at, finished_at, verdict, reasons, exit_code, signal,
				timed_out, timeout, cancelled, leftovers, stdout_head, stdout_tail, stderr_head, stderr_tail,
				added, removed, changed, violations, hash)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				blob(row.workspace), blob(row.scriptPath), row.scriptSHA, blob(row.scriptText),
				blob(row.args), blob(row.allowlist), row.allowlistVersion, row.startedAt, row.finishedAt,
				row.verdict, blob(row.reasons), row.exitCode, row.signal, row.timedOut, row.timeout, row.cancelled,
				blob(row.leftovers), blob(row.stdoutHead), blob(row.stdoutTail), blob(row.stderrHead), blob(row.stderrTail),
				row.added, row.removed, row.changed, row.viol, prev)
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.sql.Exec(`INSERT INTO decisions (run_id, decision, note, decided_at)
			VALUES (1, 'approve', 'seeded', '2026-01-01T00:00:01Z')`); err != nil {
			t.Fatal(err)
		}
	}
}

// checks verify after an upgrade that a seed's data is still readable.
var checks = map[int]func(t *testing.T, db *DB){
	1: func(t *testing.T, db *DB) {
		a, err := db.LatestAllowlist(ctx, "/seed")
		if err != nil || a == nil || a.Version != 1 || !reflect.DeepEqual(a.Entries, []string{"a/", "b"}) || a.Note != "seeded" {
			t.Errorf("seeded allowlist: %+v, %v", a, err)
		}
		if r, err := db.Get(ctx, 1); err != nil || r.Decision != Approve || r.Report.Process.ExitCode != 1 {
			t.Errorf("seeded run 1: %+v, %v", r, err)
		}
		// The old runs, allowlist and decision are in the chain, and an edit
		// of any of them is caught.
		if b, err := db.Verify(ctx); b != nil || err != nil {
			t.Fatalf("verify after the upgrade: %+v, %v", b, err)
		}
		var links int
		db.sql.QueryRow("SELECT count(*) FROM chain").Scan(&links)
		if links != 4 {
			t.Errorf("%d links after the upgrade, want 4", links)
		}
		if _, err := db.Approve(ctx, "/seed", []string{"c"}, "after"); err != nil {
			t.Fatal(err)
		}
		if b, err := db.Verify(ctx); b != nil || err != nil {
			t.Fatalf("verify after a new approval: %+v, %v", b, err)
		}
		for _, edit := range []struct{ sql, undo, what string }{
			{"UPDATE allowlists SET entries = x'01022a2a' WHERE workspace = CAST('/seed' AS BLOB) AND version = 1",
				"UPDATE allowlists SET entries = x'0202612f0162' WHERE workspace = CAST('/seed' AS BLOB) AND version = 1", "allowlist version 1 of /seed"},
			{"UPDATE decisions SET decision = 'reject' WHERE id = 1", "UPDATE decisions SET decision = 'approve' WHERE id = 1", "decision 1 on run 1"},
			{"UPDATE runs SET exit_code = 0 WHERE id = 2", "UPDATE runs SET exit_code = 2 WHERE id = 2", "run 2"},
		} {
			if _, err := db.sql.Exec(edit.sql); err != nil {
				t.Fatal(err)
			}
			if b, err := db.Verify(ctx); err != nil || b == nil || b.What != edit.what {
				t.Errorf("after %s: %+v, %v; want broken at %s", edit.sql, b, err, edit.what)
			}
			if _, err := db.sql.Exec(edit.undo); err != nil {
				t.Fatal(err)
			}
			if b, err := db.Verify(ctx); b != nil || err != nil {
				t.Fatalf("after undoing %s: %+v, %v", edit.sql, b, err)
			}
		}
	},
}

func TestMigrateFromEveryVersion(t *testing.T) {
	fresh, _ := tempDB(t)
	want := schemaOf(t, fresh)
	if v, _ := fresh.SchemaVersion(ctx); v != len(migrations) {
		t.Fatalf("fresh database at version %d", v)
	}
	var appID int
	fresh.sql.QueryRow("PRAGMA application_id").Scan(&appID)
	if appID != applicationID {
		t.Errorf("application id %#x", appID)
	}
	var mode string
	fresh.sql.QueryRow("PRAGMA journal_mode").Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal mode %q", mode)
	}
	for from := 0; from < len(migrations); from++ {
		t.Run(fmt.Sprintf("from %d", from), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.db")
			if from > 0 {
				old, err := open(path, zerolog.Nop(), from)
				if err != nil {
					t.Fatal(err)
				}
				if v, _ := old.SchemaVersion(ctx); v != from {
					t.Fatalf("built version %d, want %d", v, from)
				}
				if seed := seeds[from]; seed != nil {
					seed(t, old)
				} else {
					t.Errorf("no seed for version %d", from)
				}
				old.Close()
			}
			db := openTest(t, path)
			if v, _ := db.SchemaVersion(ctx); v != len(migrations) {
				t.Errorf("upgraded to %d, want %d", v, len(migrations))
			}
			if got := schemaOf(t, db); got != want {
				t.Errorf("schema after upgrade from %d:\n%s\nwant:\n%s", from, got, want)
			}
			for v := 1; v <= from; v++ {
				if check := checks[v]; check != nil {
					check(t, db)
				}
			}
			// Reopening an up-to-date database changes nothing.
			db.Close()
			db = openTest(t, path)
			if got := schemaOf(t, db); got != want {
				t.Errorf("schema after reopening changed")
			}
		})
	}
	// An empty (0-byte) file is a new database.
	path := filepath.Join(t.TempDir(), "empty.db")
	os.WriteFile(path, nil, 0o600)
	if got := schemaOf(t, openTest(t, path)); got != want {
		t.Errorf("schema from an empty file:\n%s", got)
	}
}

func TestRefuseNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	db := openTest(t, path)
	if _, err := db.sql.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	_, err := Open(path, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), path) ||
		strings.Contains(err.Error(), "\n") {
		t.Fatalf("open a newer database: %v", err)
	}
	t.Log(err)
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("the newer database was altered")
	}
}

func TestRefuseCorruptOrForeign(t *testing.T) {
	dir := t.TempDir()
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*7 + i/13)
	}
	foreign := filepath.Join(dir, "foreign.db")
	{
		sdb, err := sql.Open("sqlite", foreign)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sdb.Exec("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine')"); err != nil {
			t.Fatal(err)
		}
		sdb.Close()
	}
	otherApp := filepath.Join(dir, "otherapp.db")
	{
		sdb, _ := sql.Open("sqlite", otherApp)
		if _, err := sdb.Exec("PRAGMA application_id = 1234; PRAGMA user_version = 1"); err != nil {
			t.Fatal(err)
		}
		sdb.Close()
	}
	half := filepath.Join(dir, "half.db")
	{
		good := filepath.Join(dir, "good.db")
		db := openTest(t, good)
		db.Record(ctx, &Run{Report: sampleReport("/w", 10)}, nil, nil)
		db.Close()
		data, _ := os.ReadFile(good)
		copy(data[:100], garbage) // a destroyed header
		os.WriteFile(half, data, 0o600)
	}
	os.WriteFile(filepath.Join(dir, "garbage.db"), garbage, 0o600)
	os.Mkdir(filepath.Join(dir, "adir.db"), 0o755)
	for _, c := range []struct{ name, want string }{
		{"garbage.db", "not an SQLite database"},
		{"adir.db", "is a directory"},
		{"foreign.db", "not a diffgate history"},
		{"otherapp.db", "not a diffgate history"},
		{"half.db", "not an SQLite database"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			before, _ := os.ReadFile(path)
			_, err := Open(path, zerolog.Nop())
			if err == nil {
				t.Fatal("opened")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.Contains(msg, path) || !strings.Contains(msg, c.want) || strings.ContainsAny(msg, "\r\n") {
				t.Errorf("error %q: want one line naming %s and saying %q", msg, path, c.want)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Error("the file was altered")
			}
		})
	}
}

func TestNewDatabaseIsPrivate(t *testing.T) {
	_, path := tempDB(t)
	for _, p := range []string{path, path + "-wal", filepath.Dir(path)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v", p, fi.Mode())
		}
	}
}

// TestUnreadableDatabase: a database file that cannot be read is a
// one-line error naming it (as a normal user: root reads a mode 000 file).
func TestUnreadableDatabase(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	path := filepath.Join(t.TempDir(), "history.db")
	os.WriteFile(path, nil, 0o000)
	_, err := Open(path, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("open a mode 000 file: %v", err)
	}
}

func TestOddDatabasePath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?x=1#frag%20")
	path := filepath.Join(dir, "hist ory.db")
	db := openTest(t, path)
	if _, err := db.Record(ctx, &Run{Report: sampleReport("/w", 1)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 && !exists(path+"-wal") {
		t.Fatalf("database not at %s: %v", path, err)
	}
	if db.Path() != path {
		t.Errorf("Path() %q", db.Path())
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestDefaultPath(t *testing.T) {
	t.Setenv(EnvDB, "/x/y.db")
	if p, err := DefaultPath(); p != "/x/y.db" || err != nil {
		t.Errorf("%q %v", p, err)
	}
	t.Setenv(EnvDB, "")
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	t.Setenv("HOME", "/home/u")
	p, err := DefaultPath()
	if err != nil || !strings.HasSuffix(p, filepath.Join("diffgate", "history.db")) {
		t.Errorf("%q %v", p, err)
	}
}

func TestCheckOutside(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	os.Symlink(ws, filepath.Join(dir, "link"))
	os.Symlink(filepath.Join(ws, "sub"), filepath.Join(dir, "sublink"))
	for _, c := range []struct {
		db, ws string
		inside bool
	}{
		{filepath.Join(ws, "h.db"), ws, true},
		{filepath.Join(ws, "sub", "new", "h.db"), ws, true},
		{filepath.Join(dir, "link", "h.db"), ws, true},
		{filepath.Join(dir, "sublink", "h.db"), ws, true},
		{filepath.Join(ws, "h.db"), filepath.Join(dir, "link"), true},
		{ws, ws, true},
		{filepath.Join(dir, "h.db"), ws, false},
		{filepath.Join(dir, "ws2", "h.db"), ws, false},
		{filepath.Join(dir, "wsx.db"), ws, false},
	} {
		err := CheckOutside(c.db, resolved(t, c.ws))
		if (err != nil) != c.inside {
			t.Errorf("CheckOutside(%s, %s) = %v, want inside=%v", c.db, c.ws, err, c.inside)
		}
	}
}

// resolved is ws resolved once, as the pipeline hands it down.
func resolved(t *testing.T, ws string) fspath.Dir {
	t.Helper()
	d, err := fspath.ResolveDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestWorkspaceKey(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.Symlink(dir, filepath.Join(dir, "l"))
	if k, err := WorkspaceKey(filepath.Join(dir, "l")); err != nil || k != dir {
		t.Errorf("%q %v", k, err)
	}
	if k, _ := WorkspaceKey(filepath.Join(dir, "missing", "..", "x")); k != filepath.Join(dir, "x") {
		t.Errorf("%q", k)
	}
}

func TestCodec(t *testing.T) {
	for _, l := range [][]string{{}, {""}, {"a", "\xff\n", strings.Repeat("z", 300)}} {
		got, err := decodeList(encodeList(l))
		if err != nil || !reflect.DeepEqual(got, l) {
			t.Errorf("%q: %q %v", l, got, err)
		}
	}
	for _, b := range [][]byte{nil, {5}, {1, 9, 'a'}, {0, 0}} {
		if _, err := decodeList(b); err == nil {
			t.Errorf("%v decoded", b)
		}
	}
}

// TestReadOnlyDatabase: a database this user may read but not write (a
// 0444 file, a read-only directory, or both) can still be listed, read and
// verified; writing it fails with one line, and the file is left as it was.
func TestReadOnlyDatabase(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	for _, c := range []struct {
		name              string
		fileMode, dirMode os.FileMode
	}{
		{"read-only file", 0o444, 0o755},
		{"read-only directory", 0o644, 0o555},
		{"both", 0o444, 0o555},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "h")
			path := filepath.Join(dir, "history.db")
			db := openTest(t, path)
			for i := 0; i < 3; i++ {
				if _, err := db.Record(ctx, &Run{Report: sampleReport("/w", 10)}, sampleContents, nil); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Approve(ctx, "/w", []string{"logs/"}, "ok"); err != nil {
				t.Fatal(err)
			}
			db.Close()
			os.Chmod(path, c.fileMode)
			os.Chmod(dir, c.dirMode)
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			before, _ := os.ReadFile(path)
			ro, err := Open(path, zerolog.Nop())
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer ro.Close()
			if !ro.ReadOnly() {
				t.Error("ReadOnly() = false")
			}
			if runs, err := ro.List(ctx, Filter{}); err != nil || len(runs) != 3 {
				t.Errorf("list: %d runs, %v", len(runs), err)
			}
			if r, err := ro.Get(ctx, 2); err != nil || len(r.Report.Changes) != 10 {
				t.Errorf("get: %v", err)
			}
			if b, err := ro.Verify(ctx); b != nil || err != nil {
				t.Errorf("verify: %+v, %v", b, err)
			}
			if a, err := ro.LatestAllowlist(ctx, "/w"); err != nil || a == nil {
				t.Errorf("allowlist: %+v, %v", a, err)
			}
			_, err = ro.Record(ctx, &Run{Report: sampleReport("/w", 1)}, nil, nil)
			if err == nil || !strings.Contains(err.Error(), "read-only") || strings.Contains(err.Error(), "\n") {
				t.Errorf("record into a read-only database: %v", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Error("the read-only database was altered")
			}
		})
	}
}

// TestDiskFull fills a small tmpfs with the history: the write fails with
// one line that says the disk is full, and what was recorded stays intact.
func TestDiskFull(t *testing.T) {
	dir := tmpfs(t)
	db := openTest(t, filepath.Join(dir, "history.db"))
	data := map[string][]byte{}
	var full error
	for i := 0; i < 100 && full == nil; i++ {
		b := make([]byte, 100<<10)
		for j := range b {
			b[j] = byte(rand.N(256))
		}
		sha := shaOf(string(b))
		data[sha] = b
		rep := sampleReport("/w", 0)
		e := &snapshot.Entry{Path: "blob", Type: snapshot.File, Perm: 0o644, Size: int64(len(b)), SHA256: sha}
		rep.Changes = []diff.Change{{Path: "blob", Kind: diff.Added, Aspects: []diff.Aspect{}, After: e}}
		_, full = db.Record(ctx, &Run{Report: rep}, func(s string) ([]byte, bool) { d, ok := data[s]; return d, ok }, nil)
	}
	if full == nil {
		t.Fatal("768 KiB held 100 runs of 100 KiB each")
	}
	msg := full.Error()
	t.Log(msg)
	if !strings.Contains(msg, "no space left on device") || strings.Contains(msg, "disk I/O error") || strings.Contains(msg, "\n") {
		t.Errorf("a full disk: %q", msg)
	}
	n, err := db.Count(ctx, Filter{})
	if err != nil || n == 0 {
		t.Fatalf("count after the disk filled: %d, %v", n, err)
	}
	if b, err := db.Verify(ctx); b != nil || err != nil {
		t.Errorf("verify after the disk filled: %+v, %v", b, err)
	}
	db.Close()

	// A disk that filled while the database was closed: SQLite cannot make
	// its WAL index and says only "disk I/O error (4874)".
	dir = tmpfs(t)
	path := filepath.Join(dir, "history.db")
	db = openTest(t, path)
	if _, err := db.Record(ctx, &Run{Report: sampleReport("/w", 10)}, sampleContents, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err = f.Write(make([]byte, 64<<10)); err == nil; _, err = f.Write(make([]byte, 4096)) {
	}
	f.Close()
	for _, name := range []string{"history.db", "new.db"} {
		db, err := Open(filepath.Join(dir, name), zerolog.Nop())
		if err == nil {
			_, err = db.Record(ctx, &Run{Report: sampleReport("/w", 10)}, sampleContents, nil)
			db.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "no space left on device") || strings.Contains(err.Error(), "disk I/O") {
			t.Errorf("%s on a full disk: %v", name, err)
		}
		t.Log(err)
	}
}

// tmpfs mounts a 768 KiB tmpfs for the test, or skips it.
func tmpfs(t *testing.T) string {
	t.Helper()
	if !testenv.IsRoot() {
		t.Skip("needs root to mount a small tmpfs (RLIMIT_FSIZE gives EFBIG, not a full disk)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=768k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestCheckOutsideHardLink: a database hard-linked into the workspace is
// refused, though its path lies outside.
func TestCheckOutsideHardLink(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	path := filepath.Join(dir, "history.db")
	openTest(t, path).Close()
	if err := CheckOutside(path, resolved(t, ws)); err != nil {
		t.Fatalf("a database with one link: %v", err)
	}
	if err := os.Link(path, filepath.Join(ws, "innocent.txt")); err != nil {
		t.Skipf("hard link: %v", err)
	}
	err := CheckOutside(path, resolved(t, ws))
	if err == nil || !strings.Contains(err.Error(), "2 hard links") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a database hard-linked into the workspace: %v", err)
	}
}

// TestRoundTripContainment: the containment levels are recorded with the
// run (hashed, in runs.extra version 3), with and without a stage.
func TestRoundTripContainment(t *testing.T) {
	db, _ := tempDB(t)
	for i, stage := range []*report.Stage{nil, {ID: "s1", Mechanism: "overlay", State: report.StagePending}} {
		want := oddReport("/ws")
		want.Stage = stage
		want.Containment = &report.Containment{Mode: "auto", LandlockABI: 7, Why: "blocked actions not observable: x",
			Layers: []report.Layer{{Name: "env", Requested: true, Enforced: true, How: "allow list"},
				{Name: "network", Requested: true, Why: "net: none"}}}
		_, got := recordGet(t, db, want)
		if got.Report.Containment == nil || !reflect.DeepEqual(got.Report.Containment.Layers[0], want.Containment.Layers[0]) ||
			got.Report.Containment.LandlockABI != 7 || got.Report.Containment.Mode != "auto" || (got.Report.Stage == nil) != (stage == nil) {
			t.Fatalf("%d: containment %+v stage %+v", i, got.Report.Containment, got.Report.Stage)
		}
	}
	if bad, err := db.Verify(ctx); err != nil || bad != nil {
		t.Fatalf("Verify: %v %v", bad, err)
	}
}

// TestRoundTripDiffNote: why a change has no text diff survives the history
// (a run reopened says "budget", not a generic line), is in the hash chain,
// and a change without a note keeps the hash it had before migration 5.
func TestRoundTripDiffNote(t *testing.T) {
	db, _ := tempDB(t)
	want := sampleReport("/ws", 3)
	want.Changes[2].TextDiff, want.Changes[2].DiffNote = "", diff.NoteBudget
	id, got := recordGet(t, db, want)
	if n := got.Report.Changes[2].DiffNote; n != diff.NoteBudget {
		t.Fatalf("diff_note after the round trip %q", n)
	}
	if got.Report.Changes[0].DiffNote != "" {
		t.Fatalf("a change without a note came back with %q", got.Report.Changes[0].DiffNote)
	}
	if bad, err := db.Verify(ctx); err != nil || bad != nil {
		t.Fatalf("Verify: %v %v", bad, err)
	}
	if _, err := db.sql.Exec("UPDATE changes SET diff_note = 'binary' WHERE run_id = ? AND seq = 2", id); err != nil {
		t.Fatal(err)
	}
	if bad, err := db.Verify(ctx); err != nil || bad == nil {
		t.Fatalf("an edited diff_note is not caught: %v %v", bad, err)
	}
	// The canonical form of a change without a note is what it was.
	row := changeRow{path: "p", kind: "added"}
	a, b := newCanon(&runRow{}), newCanon(&runRow{})
	a.change(&row)
	row.diffNote = diff.NoteBinary
	b.change(&row)
	if bytes.Equal(a.sum(), b.sum()) {
		t.Fatal("the note does not reach the change's hash")
	}
}

// TestRoundTripHardlinkEscape: a hardlink-escape change keeps its link
// count (the after entry) and how many of its names lie in the workspace
// (links_inside, migration 6), both in the hash chain; a change without
// them keeps the hash it had before.
func TestRoundTripHardlinkEscape(t *testing.T) {
	db, _ := tempDB(t)
	want := sampleReport("/ws", 3)
	c := &want.Changes[2]
	if c.After == nil || c.Kind != diff.Changed {
		t.Fatalf("sample change 2 is not a change with an after side: %+v", c)
	}
	c.Risk, c.LinksInside = diff.HardlinkEscape, 1
	after := *c.After
	after.Nlink = 2
	c.After = &after
	id, got := recordGet(t, db, want)
	g := got.Report.Changes[2]
	if g.Risk != diff.HardlinkEscape || g.LinksInside != 1 || g.After == nil || g.After.Nlink != 2 {
		t.Fatalf("after the round trip: risk %q links_inside %d after %+v", g.Risk, g.LinksInside, g.After)
	}
	if line, want := report.ChangeLine(&g), report.ChangeLine(c); line != want || !strings.Contains(line, "2 links, 1 in the workspace") {
		t.Errorf("reopened line %q, want %q", line, want)
	}
	if o := got.Report.Changes[0]; o.LinksInside != 0 || (o.After != nil && o.After.Nlink != 0) {
		t.Errorf("a change without links came back with %+v", o)
	}
	if bad, err := db.Verify(ctx); err != nil || bad != nil {
		t.Fatalf("Verify: %v %v", bad, err)
	}
	for _, edit := range []string{"UPDATE changes SET links_inside = 2 WHERE run_id = ? AND seq = 2",
		"UPDATE changes SET links_inside = 0 WHERE run_id = ? AND seq = 2"} {
		if _, err := db.sql.Exec(edit, id); err != nil {
			t.Fatal(err)
		}
		if bad, err := db.Verify(ctx); err != nil || bad == nil {
			t.Fatalf("%s is not caught: %v %v", edit, bad, err)
		}
		db.sql.Exec("UPDATE changes SET links_inside = 1 WHERE run_id = ? AND seq = 2", id)
		if bad, err := db.Verify(ctx); err != nil || bad != nil {
			t.Fatalf("after undoing %s: %v %v", edit, bad, err)
		}
	}
	// The canonical form of a change and an entry without links is what
	// it was before migration 6.
	row := changeRow{path: "p", kind: "added", risk: "setuid"}
	a, b := newCanon(&runRow{}), newCanon(&runRow{})
	a.change(&row)
	row.linksInside = 1
	b.change(&row)
	if bytes.Equal(a.sum(), b.sum()) {
		t.Fatal("links_inside does not reach the change's hash")
	}
	e := snapshot.Entry{Path: "p", Type: snapshot.File, Perm: 0o644, Size: 1, UID: 1, GID: 1}
	old := encodeEntry(&e)
	e.Nlink = 2
	if linked := encodeEntry(&e); bytes.Equal(old, linked) || !bytes.HasPrefix(linked, old) {
		t.Fatalf("entry encodings: %x and %x", old, linked)
	}
	if back, err := decodeEntry(encodeEntry(&e), "p"); err != nil || back.Nlink != 2 || back.Xattr != "" {
		t.Fatalf("decode: %+v %v", back, err)
	}
	e.Xattr = "user.a#0"
	if back, err := decodeEntry(encodeEntry(&e), "p"); err != nil || back.Nlink != 2 || back.Xattr != "user.a#0" {
		t.Fatalf("decode with xattrs: %+v %v", back, err)
	}
}

// TestRoundTripGuarded: blocked actions, the watch and the changes outside
// the workspace are recorded with the run (runs.extra version 4, raw bytes:
// a path that is not valid UTF-8 comes back as it was), give the same
// lines when the run is reopened, and are covered by the hash chain.
func TestRoundTripGuarded(t *testing.T) {
	db, _ := tempDB(t)
	for i, stage := range []*report.Stage{nil, {ID: "s2", Mechanism: "copy", State: report.StagePending}} {
		want := sampleReport("/ws", 3)
		want.Stage = stage
		if i == 0 {
			want.Containment = &report.Containment{Mode: "auto", LandlockABI: 7, Observed: true, Layers: []report.Layer{}}
		}
		want.Blocked = []report.Blocked{{Kind: "write", Target: "/home/u/.bashrc", PID: 7, Cmd: "sh", Op: "openat", Count: 2},
			{Kind: "net", Target: "127.0.0.1:9\xff", PID: 8, Cmd: "curl", Op: "connect", Count: 1}}
		before := &snapshot.Entry{Path: "/home/u/.bashrc", Type: snapshot.File, Perm: 0o644, Size: 5, UID: 1, GID: 1, MTime: 1, CTime: 1, Ino: 9}
		after := *before
		after.Size, after.MTime, after.CTime, after.Nlink = 7, 2, 2, 2
		want.Watch = &report.Watch{Entries: 3, Paths: []report.WatchedPath{{Path: "/home/u/.bashrc", Default: true, Entries: 1},
			{Path: "/srv/x\xfe", Entries: 2, Cut: "depth 8", Via: "/l"}, {Path: "/var/spool/cron/crontabs", For: "/var/spool/cron/crontabs/u", Entries: 1}, {Path: "/ws/sub", Skipped: "inside the workspace"}},
			Unwatchable: []report.Unwatchable{{Path: "/var/spool/cron/crontabs/u", Reason: "permission denied"}}}
		want.Outside = []report.Outside{
			{Path: "/home/u/.bashrc", Kind: diff.Changed, Aspects: []string{report.OutsideSize, report.OutsideLinks}, Before: before, After: &after},
			{Path: "/srv/x\xfe/new", Kind: diff.Added, Aspects: []string{}, After: &snapshot.Entry{Path: "/srv/x\xfe/new", Type: snapshot.Dir, Perm: 0o755, UID: 0, GID: 0}},
		}
		want.Evaluate()
		id, got := recordGet(t, db, want)
		g := got.Report
		if !reflect.DeepEqual(g.Blocked, want.Blocked) || !reflect.DeepEqual(g.Watch, want.Watch) || !reflect.DeepEqual(g.Outside, want.Outside) {
			t.Fatalf("%d: after the round trip\nblocked %+v\nwatch %+v\noutside %+v", i, g.Blocked, g.Watch, g.Outside)
		}
		if !reflect.DeepEqual(g.Lines(), want.Lines()) || (g.Stage == nil) != (stage == nil) || (g.Containment == nil) != (want.Containment == nil) {
			t.Fatalf("%d: lines %q, want %q; stage %+v containment %+v", i, g.Lines(), want.Lines(), g.Stage, g.Containment)
		}
		if !slices.Contains(g.Reasons, "2 blocked actions") || !slices.Contains(g.Reasons, "2 changes outside the workspace") {
			t.Errorf("%d: reasons %q", i, g.Reasons)
		}
		if bad, err := db.Verify(ctx); err != nil || bad != nil {
			t.Fatalf("Verify: %v %v", bad, err)
		}
		// Drop a blocked action from the record behind diffgate's back.
		edited := *want
		edited.Blocked = want.Blocked[1:]
		if _, err := db.sql.Exec("UPDATE runs SET extra = ? WHERE id = ?", encodeExtra(&edited), id); err != nil {
			t.Fatal(err)
		}
		if bad, err := db.Verify(ctx); err != nil || bad == nil || bad.RunID != id {
			t.Fatalf("%d: a blocked action deleted from the record is not caught: %+v %v", i, bad, err)
		}
		if _, err := db.sql.Exec("UPDATE runs SET extra = ? WHERE id = ?", encodeExtra(want), id); err != nil {
			t.Fatal(err)
		}
	}
	// A run without them keeps the encoding it had.
	plain := sampleReport("/ws", 1)
	plain.Containment = &report.Containment{Mode: "off", Layers: []report.Layer{}}
	if b := encodeExtra(plain); len(b) == 0 || b[0] != extraV3 {
		t.Errorf("a run without blocked actions or a watch is encoded as version %v", b)
	}
}

// TestApproveRun: approving a run saves the next allowlist version and the
// decision naming it in one transaction; the run reads back which version
// it approved; the version is in the decision's hash-chain link; a run that
// is missing or of another workspace approves nothing.
func testApproveRun(t *testing.T, newStore storeFn) {
	db, _ := newStore(t)
	for _, ws := range []string{"/ws/a", "/ws/b"} {
		if _, err := db.Record(ctx, &Run{Report: sampleReport(ws, 1)}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Approve(ctx, "/ws/a", []string{"x/"}, "by the CLI"); err != nil {
		t.Fatal(err)
	}
	al, err := db.ApproveRun(ctx, 1, "/ws/a", []string{"x/", "y"}, "fine")
	if err != nil || al.Version != 2 {
		t.Fatalf("ApproveRun: %+v, %v", al, err)
	}
	r, err := db.Get(ctx, 1)
	if err != nil || r.Decision != Approve || r.ApprovedVersion != 2 || r.DecisionNote != "fine" {
		t.Fatalf("run 1: %+v, %v", r, err)
	}
	if err := db.Decide(ctx, 1, Reject, "no"); err != nil {
		t.Fatal(err)
	}
	if r, _ := db.Get(ctx, 1); r.Decision != Reject || r.ApprovedVersion != 0 {
		t.Errorf("after a rejection: %s, version %d", r.Decision, r.ApprovedVersion)
	}
	for _, c := range []struct {
		run  int64
		ws   string
		want string
	}{{7, "/ws/a", "run 7: not found"}, {2, "/ws/a", "run 2 is a run of /ws/b, not of /ws/a"}} {
		if _, err := db.ApproveRun(ctx, c.run, c.ws, []string{"z"}, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ApproveRun(%d, %s): %v, want %q", c.run, c.ws, err, c.want)
		}
	}
	if latest, _ := db.LatestAllowlist(ctx, "/ws/a"); latest.Version != 2 {
		t.Errorf("a refused approval saved version %d", latest.Version)
	}
	if b, err := db.Verify(ctx); b != nil || err != nil {
		t.Fatalf("verify: %+v, %v", b, err)
	}
	// The version is hashed: changing it behind diffgate's back is caught.
	if db.IsTeam() {
		return // the server refuses the UPDATE (TestTeamStoreTamper)
	}
	if _, err := db.sql.Exec("UPDATE decisions SET allowlist_version = 1 WHERE allowlist_version = 2"); err != nil {
		t.Fatal(err)
	}
	if b, err := db.Verify(ctx); err != nil || b == nil || !strings.Contains(b.What, "decision") || !strings.Contains(b.What, "on run 1") {
		t.Errorf("verify after editing the approved version: %+v, %v", b, err)
	}
}

// TestListContainment: List says how each run was contained and counts its
// blocked actions and changes outside the workspace, so a run that was not
// contained never looks like one that was.
func TestListContainment(t *testing.T) {
	db := openTest(t, filepath.Join(t.TempDir(), "history.db"))
	for _, c := range []*report.Containment{
		nil,
		{Mode: "off"},
		{Mode: "auto", Contained: true},
		{Mode: "auto", Layers: []report.Layer{{Name: "filesystem", Requested: true}}},
	} {
		r := sampleReport("/ws", 0)
		r.Containment = c
		if c != nil && c.Contained {
			r.Blocked = []report.Blocked{{Kind: "write", Target: "/home/u/.bashrc", PID: 1, Cmd: "sh", Op: "openat", Count: 1}}
			r.Outside = []report.Outside{{Kind: "changed", Path: "/home/u/.profile"}}
		}
		if _, err := db.Record(ctx, &Run{Report: r}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := db.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range runs {
		got = append(got, fmt.Sprintf("%s/%d/%d", s.Contained, s.Blocked, s.Outside))
	}
	if want := "NO/0/0 yes/1/1 off/0/0 /0/0"; strings.Join(got, " ") != want {
		t.Fatalf("List: %q, want %q", strings.Join(got, " "), want)
	}
}

// TestRoundTripNetwork: the requests through the gate's proxy are recorded
// with the run (runs.extra version 5) and covered by the hash chain; a
// run with blocked actions but no request keeps version 4.
func TestRoundTripNetwork(t *testing.T) {
	db, _ := tempDB(t)
	want := sampleReport("/ws", 2)
	want.Containment = &report.Containment{Mode: "auto", LandlockABI: 7, Observed: true, Layers: []report.Layer{}}
	want.Network = []report.NetRequest{
		{Host: "registry.npmjs.org", Port: 443, Method: "CONNECT", BytesOut: 900, BytesIn: 120000, Allowed: true, PID: 7, Cmd: "npm install", Addr: "104.16.0.1"},
		{Host: "evil.example", Port: 80, Method: "GET", Reason: "host not allowed", PID: 8, Cmd: "curl"},
	}
	want.NetworkDropped = 3
	want.Blocked = []report.Blocked{{Kind: "net", Target: "evil.example:80", PID: 8, Cmd: "curl", Op: "proxy GET", Count: 1}}
	want.Evaluate()
	if b := encodeExtra(want); len(b) == 0 || b[0] != extraV5 {
		t.Fatalf("encoded as %v", b)
	}
	id, got := recordGet(t, db, want)
	g := got.Report
	if !reflect.DeepEqual(g.Network, want.Network) || g.NetworkDropped != 3 || !reflect.DeepEqual(g.Blocked, want.Blocked) {
		t.Fatalf("after the round trip: %+v (+%d) %+v", g.Network, g.NetworkDropped, g.Blocked)
	}
	if bad, err := db.Verify(ctx); err != nil || bad != nil {
		t.Fatalf("Verify: %v %v", bad, err)
	}
	edited := *want
	edited.Network = want.Network[:1] // the refused request dropped behind diffgate's back
	if _, err := db.sql.Exec("UPDATE runs SET extra = ? WHERE id = ?", encodeExtra(&edited), id); err != nil {
		t.Fatal(err)
	}
	if bad, err := db.Verify(ctx); err != nil || bad == nil || bad.RunID != id {
		t.Fatalf("a request deleted from the record is not caught: %+v %v", bad, err)
	}
	plain := *want
	plain.Network, plain.NetworkDropped = nil, 0
	if b := encodeExtra(&plain); len(b) == 0 || b[0] != extraV4 {
		t.Errorf("a run without requests is encoded as version %v", b)
	}
}

func TestWorkspaceShapeStoredAndDropped(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, filepath.Join(t.TempDir(), "h.db"))
	if got, err := db.WorkspaceShape(ctx, "/ws"); got != nil || err != nil {
		t.Fatalf("no shape yet: %q, %v", got, err)
	}
	if err := db.SetWorkspaceShape(ctx, "/ws", 3, []byte(`{"git_dirs":[".git"]}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.WorkspaceShape(ctx, "/ws"); string(got) != `{"git_dirs":[".git"]}` {
		t.Fatalf("shape %q", got)
	}
	if got, _ := db.WorkspaceShape(ctx, "/other"); got != nil {
		t.Fatalf("another workspace's shape: %q", got)
	}
	if err := db.SetWorkspaceShape(ctx, "/ws", 0, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.WorkspaceShape(ctx, "/ws"); got != nil {
		t.Fatalf("dropped shape still there: %q", got)
	}
}

// TestCacheCodecRoundTrip: every field the walk's reuse rule reads (path,
// dev, ino, size, mtime, ctime, hash; root and creation time for the racy
// rule) comes back from the blob as it went in, for paths longer than the
// decoder's buffer and block, negative times, and enough entries to span
// many blocks of decoded paths.
func TestCacheCodecRoundTrip(t *testing.T) {
	m := sampleManifest("/w", 5000)
	long := strings.Repeat("d/", 40<<10) + "long"        // 80 KiB: more than one buffer
	longer := strings.Repeat("e", 70<<10) + "/\xffbytes" // shares nothing with it
	for i, p := range []string{long, longer, long + "er"} {
		m.Entries = append(m.Entries, snapshot.Entry{Path: p, Type: snapshot.File, Size: 1 << 40, MTime: -1e9, CTime: -7,
			Dev: 1<<63 + 5, Ino: uint64(i), SHA256: shaOf(p)})
	}
	m.Sort()
	b, n := encodeCache(m)
	if n != len(m.Entries) {
		t.Fatalf("encoded %d of %d entries", n, len(m.Entries))
	}
	got, err := decodeCache(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Root != m.Root || !got.CreatedAt.Equal(m.CreatedAt) || len(got.Entries) != len(m.Entries) {
		t.Fatalf("root %q at %v, %d entries; want %q at %v, %d", got.Root, got.CreatedAt, len(got.Entries), m.Root, m.CreatedAt, len(m.Entries))
	}
	for i := range m.Entries {
		w, g := &m.Entries[i], &got.Entries[i]
		if g.Path != w.Path || g.Dev != w.Dev || g.Ino != w.Ino || g.Size != w.Size || g.MTime != w.MTime ||
			g.CTime != w.CTime || g.SHA256 != w.SHA256 || g.Type != snapshot.File {
			t.Fatalf("entry %d: %+v\nwant %+v", i, *g, *w)
		}
	}
}

// TestCacheCodecParts: a cache of cachePartMin entries or more is written
// in parts (each decoded on a goroutine of its own) that come back as one
// manifest: paths that share prefixes across a part's start, extended
// attribute records numbered anew in each part, every hash in its place.
// A part table that points out of order or out of bounds, and any
// truncation, is an error, never a panic or a wrong manifest.
func TestCacheCodecParts(t *testing.T) {
	m := sampleManifest("/w", 3*cachePartMin)
	m.Listed = true
	for i := range m.Entries {
		if i%7 == 3 { // an unusable file: kept by name and type, no hash
			m.Entries[i].Err = "cannot read: permission denied"
		}
	}
	b, n := encodeCache(m)
	if n != len(m.Entries) {
		t.Fatalf("encoded %d of %d entries", n, len(m.Entries))
	}
	meta := (&dec{b: b[len(cacheMagic):]}).bytes()
	c := &cacheReader{b: meta, kinds: true, withXattrs: true}
	c.header()
	parts := c.parts(c.uvar(), len(m.Entries))
	if c.err != nil || len(parts) != cacheParts {
		t.Fatalf("%d parts (%v), want %d", len(parts), c.err, cacheParts)
	}
	got, err := decodeCache(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Entries {
		w, g := &m.Entries[i], &got.Entries[i]
		usable := w.Err == ""
		if g.Path != w.Path || g.Ino != w.Ino || g.CTime != w.CTime || (g.Err == "") != usable ||
			(usable && (g.SHA256 != w.SHA256 || g.Xattr != w.Xattr)) {
			t.Fatalf("entry %d: %+v\nwant %+v", i, *g, *w)
		}
	}
	// A part table out of order, or pointing past the entries.
	for _, mutate := range []func(p []cachePart){
		func(p []cachePart) { p[1], p[2] = p[2], p[1] },
		func(p []cachePart) { p[3].first = len(m.Entries) + 1 },
		func(p []cachePart) { p[3].off = 1 << 40 },
		func(p []cachePart) { p[3].hash = len(m.Entries) + 5 },
		func(p []cachePart) { p[2].off++ }, // a part that starts mid-entry
		func(p []cachePart) { p[2].hash-- },
	} {
		bad := append([]cachePart(nil), parts...)
		mutate(bad)
		if _, err := decodeCache(withParts(t, m, bad)); err == nil {
			t.Errorf("a cache with parts %v decoded", bad)
		}
	}
	if _, err := decodeCache(withParts(t, m, parts)); err != nil {
		t.Fatalf("the cache rebuilt with its own parts: %v", err)
	}
	for cut := len(cacheMagic); cut < len(b); cut += len(b) / 97 {
		if _, err := decodeCache(b[:cut]); err == nil {
			t.Errorf("the cache cut at %d of %d bytes decoded", cut, len(b))
		}
	}
}

// withParts returns m's cache with its part table replaced by parts.
func withParts(t *testing.T, m *snapshot.Manifest, parts []cachePart) []byte {
	t.Helper()
	b, _ := encodeCache(m)
	outer := dec{b: b[len(cacheMagic):]}
	meta := outer.bytes()
	sums := outer.b
	c := &cacheReader{b: meta, kinds: true, withXattrs: true}
	c.header()
	n := c.uvar()
	head := meta[:len(meta)-len(c.b)]
	c.parts(n, len(sums)/32)
	body := c.b
	var e enc
	e.b = append(e.b, head...)
	e.uint(uint64(len(parts)))
	for _, p := range parts[1:] {
		e.uint(uint64(p.first))
		e.uint(uint64(p.off))
		e.uint(uint64(p.hash))
	}
	e.b = append(e.b, body...)
	out := enc{b: []byte(cacheMagic)}
	out.raw(e.b)
	out.b = append(out.b, sums...)
	return out.b
}

// TestHashCacheKeptWhenUnchanged: a run whose after-manifest holds exactly
// the entries of the hash cache loaded for it does not write the cache again
// (the stored row keeps its run); a changed entry, a racy ctime (within the
// margin of the loaded cache's time), another workspace or nothing loaded
// writes it.
func TestHashCacheKeptWhenUnchanged(t *testing.T) {
	db, _ := tempDB(t)
	ws := "/abs/ws"
	m := sampleManifest(ws, 50)
	cacheRun := func() int64 {
		var id int64
		if err := db.sql.QueryRowContext(ctx, "SELECT run_id FROM hash_cache WHERE workspace = ?", blob(ws)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	record := func(m *snapshot.Manifest) int64 {
		id, err := db.Record(ctx, &Run{Report: sampleReport(ws, 0)}, nil, m)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	load := func() {
		if got, err := db.HashCache(ctx, ws); err != nil || got == nil {
			t.Fatal(got, err)
		}
	}
	later := func(m *snapshot.Manifest) *snapshot.Manifest {
		c := *m
		c.Entries = slices.Clone(m.Entries)
		c.CreatedAt = m.CreatedAt.Add(time.Minute)
		return &c
	}
	first := record(m)
	record(later(m)) // nothing loaded: written
	second := cacheRun()
	if second == first {
		t.Fatal("a cache recorded without one loaded was not written")
	}
	load()
	m2 := later(later(m))
	record(m2)
	if got := cacheRun(); got != second {
		t.Fatalf("an unchanged cache was written again (run %d, want %d)", got, second)
	}
	// The stored cache is the older one, which reuses no more than m2.
	if got, _ := db.HashCache(ctx, ws); !got.CreatedAt.Equal(later(m).CreatedAt) {
		t.Fatalf("stored cache from %v", got.CreatedAt)
	}
	m3 := later(m2)
	m3.Entries[7].CTime++
	id := record(m3)
	if got := cacheRun(); got != id {
		t.Fatalf("a changed cache was not written (run %d, want %d)", got, id)
	}
	// Loaded, then recorded twice unchanged: the second record has no memo
	// left only if the first wrote; it did not, so both keep the row.
	load()
	record(later(m3))
	record(later(later(m3)))
	if got := cacheRun(); got != id {
		t.Fatalf("unchanged caches were written (run %d, want %d)", got, id)
	}
	// A racy entry: its ctime within the margin of the stored cache's time.
	m4 := later(m3)
	m4.Entries[3].CTime = m4.CreatedAt.UnixNano() - int64(time.Second)
	id = record(m4) // changed: written
	load()
	record(later(m4))
	if got := cacheRun(); got == id {
		t.Fatal("a cache with a racy entry was kept: it would stay racy for good")
	}
	// Another workspace's load does not vouch for this one.
	load()
	if _, err := db.HashCache(ctx, "/abs/other"); err != nil {
		t.Fatal(err)
	}
	other := sampleManifest("/abs/other", 5)
	if _, err := db.Record(ctx, &Run{Report: sampleReport("/abs/other", 0)}, nil, other); err != nil {
		t.Fatal(err)
	}
}

// encodeCacheFiles writes m's regular files in format 0x02, as versions
// before 0x03 did: no flags, no kinds (the metadata, then the sums).
func encodeCacheFiles(m *snapshot.Manifest) (meta, sums []byte) {
	e := enc{}
	e.str(m.Root)
	e.bool(true)
	e.int(m.CreatedAt.UnixNano())
	var files []snapshot.Entry
	for _, x := range m.Entries {
		if cacheable(&x) {
			files = append(files, x)
		}
	}
	e.uint(uint64(len(files)))
	prev := ""
	for _, x := range files {
		shared := 0
		for shared < len(prev) && shared < len(x.Path) && prev[shared] == x.Path[shared] {
			shared++
		}
		e.uint(uint64(shared))
		e.str(x.Path[shared:])
		e.uint(x.Dev)
		e.uint(x.Ino)
		e.int(x.Size)
		e.int(x.MTime)
		e.int(x.CTime)
		sum, _ := hex.DecodeString(x.SHA256)
		sums = append(sums, sum...)
		prev = x.Path
	}
	return e.b, sums
}

// TestCacheCodecReadsOlderFormats: hash caches written by earlier versions
// (format 0x03: no extended attributes; 0x02: regular files, no kinds;
// 0x01: the same DEFLATE'd) decode to the entries the current format gives
// of a manifest that is not Listed, with the extended attributes unknown.
func TestCacheCodecReadsOlderFormats(t *testing.T) {
	m := sampleManifest("/w", 3000)
	cur, _ := encodeCache(m)
	v3, _ := writeCache(m, false)
	if string(v3[:len(cacheMagicKinds)]) != cacheMagicKinds {
		t.Fatalf("writeCache without xattrs wrote %q", v3[:len(cacheMagicKinds)])
	}
	meta, sums := encodeCacheFiles(m)
	v2 := enc{b: []byte(cacheMagicFiles)}
	v2.raw(meta)
	v2.b = append(v2.b, sums...)
	v1 := enc{b: []byte(cacheMagicDeflate)}
	v1.raw(deflate(meta, flate.BestSpeed))
	v1.b = append(v1.b, sums...)
	want, err := decodeCache(cur)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Entries {
		if want.Entries[i].Xattr != m.Entries[i].Xattr {
			t.Fatalf("%s: xattrs %q decoded as %q", m.Entries[i].Path, m.Entries[i].Xattr, want.Entries[i].Xattr)
		}
		want.Entries[i].Xattr = ""
	}
	for name, blob := range map[string][]byte{"0x03": v3, "0x02": v2.b, "0x01": v1.b} {
		got, err := decodeCache(blob)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) || len(got.Entries) != len(m.Entries) {
			t.Errorf("format %s decoded to %d entries, the current format to %d", name, len(got.Entries), len(want.Entries))
		}
		if _, err := decodeCache(blob[:len(blob)-40]); err == nil {
			t.Errorf("truncated format %s cache decoded", name)
		}
	}
}

// TestCacheKeepsListedManifest: the cache of a Listed manifest keeps every
// entry, with its type, a symlink's target and a file's hash; of the
// entries with an error or without a hash only the name and type, marked
// so that nothing of them is reused. A manifest that is not Listed keeps
// its usable files only.
func TestCacheKeepsListedManifest(t *testing.T) {
	m := sampleManifest("/w", 20)
	extra := []snapshot.Entry{
		{Path: "src", Type: snapshot.Dir, Perm: 0o755, MTime: 7, CTime: 8, Dev: 2049, Ino: 5, Xattr: shaOf("user.d")},
		{Path: "src/pkg0000", Type: snapshot.Dir, Perm: 0o755, MTime: 7, CTime: 8, Dev: 2049, Ino: 6},
		{Path: "src/locked", Type: snapshot.Dir, Err: "cannot open directory: permission denied", Dev: 2049, Ino: 7},
		{Path: "src/pkg0000/link", Type: snapshot.Symlink, Size: 7, Target: "file000", MTime: 1, CTime: 2, Dev: 2049, Ino: 8},
		{Path: "src/pkg0000/unread", Type: snapshot.File, Size: 3, Err: "cannot read: permission denied", Dev: 2049, Ino: 9},
		{Path: "src/pkg0000/fifo", Type: snapshot.FIFO, Dev: 2049, Ino: 10},
	}
	m.Entries = append(m.Entries, extra...)
	m.Sort()
	m.Listed = true
	blob, n := encodeCache(m)
	got, err := decodeCache(blob)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(m.Entries) || len(got.Entries) != len(m.Entries) || !got.Listed {
		t.Fatalf("%d entries kept, %d decoded, listed %v; want %d, listed", n, len(got.Entries), got.Listed, len(m.Entries))
	}
	for i, g := range got.Entries {
		w := m.Entries[i]
		if g.Path != w.Path || g.Type != w.Type || g.Dev != w.Dev || g.Ino != w.Ino || g.MTime != w.MTime || g.CTime != w.CTime || g.Size != w.Size {
			t.Errorf("entry %d: %+v, want %+v", i, g, w)
		}
		if usable := w.Err == ""; usable != (g.Err == "") {
			t.Errorf("%s: error %q decoded as %q", w.Path, w.Err, g.Err)
		}
		if w.Err == "" && (g.SHA256 != w.SHA256 || g.Target != w.Target || g.Xattr != w.Xattr) {
			t.Errorf("%s: hash %q target %q xattrs %q, want %q %q %q", w.Path, g.SHA256, g.Target, g.Xattr, w.SHA256, w.Target, w.Xattr)
		}
	}
	// A decoded cache's fingerprint is the manifest's: a run that finds
	// the same tree keeps the stored cache.
	if a, _ := cacheFingerprint(m); a != must(cacheFingerprint(got)) {
		t.Error("the decoded cache's fingerprint differs from its manifest's")
	}
	m.Listed = false
	if _, n := encodeCache(m); n != 20 {
		t.Errorf("a manifest that is not Listed: %d entries kept, want its 20 files", n)
	}
	if a, _ := cacheFingerprint(m); a == must(cacheFingerprint(got)) {
		t.Error("Listed or not, the fingerprint is the same: a stored file-only cache would be kept")
	}
}

func must[T, U any](v T, _ U) T { return v }
