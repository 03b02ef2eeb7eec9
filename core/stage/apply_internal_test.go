package stage

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

func entry(t snapshot.Type, perm uint32) *snapshot.Entry {
	return &snapshot.Entry{Type: t, Perm: perm}
}

// TestChoose: which changes an apply takes: only changes of the run, every
// path of the run valid, with the directories the run made that a chosen
// path lies in (not those it kept or changed).
func TestChoose(t *testing.T) {
	file := func(p string) diff.Change { return diff.Change{Path: p, After: entry(snapshot.File, 0o644)} }
	mkdir := func(p string) diff.Change { return diff.Change{Path: p, After: entry(snapshot.Dir, 0o755)} }
	chmod := func(p string) diff.Change {
		return diff.Change{Path: p, Before: entry(snapshot.Dir, 0o755), After: entry(snapshot.Dir, 0o700)}
	}
	retype := func(p string) diff.Change {
		return diff.Change{Path: p, Before: entry(snapshot.File, 0o644), After: entry(snapshot.Dir, 0o755)}
	}
	root := diff.Change{Path: diff.RootPath, Before: entry(snapshot.Dir, 0o755), After: entry(snapshot.Dir, 0o750)}
	run := []diff.Change{root, mkdir("a"), mkdir("a/b"), file("a/b/f"), chmod("c"), file("c/g"), retype("d"), file("d/h"), file("top")}
	for _, tc := range []struct {
		name    string
		changes []string // paths of run chosen
		all     bool     // opt.All is run (else the chosen are all)
		want    []string
	}{
		{name: "new parents come along", changes: []string{"a/b/f"}, all: true, want: []string{"a", "a/b", "a/b/f"}},
		{name: "a changed parent stays out", changes: []string{"c/g"}, all: true, want: []string{"c/g"}},
		{name: "a file turned directory is new", changes: []string{"d/h"}, all: true, want: []string{"d", "d/h"}},
		{name: "the root is no parent", changes: []string{"top"}, all: true, want: []string{"top"}},
		{name: "the root itself", changes: []string{diff.RootPath}, all: true, want: []string{diff.RootPath}},
		{name: "without All the chosen are all", changes: []string{"a/b/f"}, want: []string{"a/b/f"}},
		{name: "nothing chosen", all: true, want: []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var changes []diff.Change
			for _, p := range tc.changes {
				i := slices.IndexFunc(run, func(c diff.Change) bool { return c.Path == p })
				changes = append(changes, run[i])
			}
			var all []diff.Change
			if tc.all {
				all = run
			}
			byPath, chosen, err := choose(changes, all)
			if err != nil {
				t.Fatal(err)
			}
			if got := sortedPaths(chosen); !slices.Equal(got, tc.want) {
				t.Errorf("chosen %q, want %q", got, tc.want)
			}
			wantAll := len(run)
			if !tc.all {
				wantAll = len(changes)
			}
			if len(byPath) != wantAll {
				t.Errorf("%d changes of the run, want %d", len(byPath), wantAll)
			}
			for p, c := range chosen {
				if byPath[p] != c {
					t.Errorf("%s: chosen is not the run's change", p)
				}
			}
		})
	}
	for _, tc := range []struct {
		name         string
		changes, all []diff.Change
		err          string
	}{
		{name: "not a change of the run", changes: []diff.Change{file("x")}, all: run, err: `stage: "x" is not a change of the run`},
		{name: "absolute", changes: []diff.Change{file("/etc/passwd")}, err: `invalid path "/etc/passwd"`},
		{name: "dot-dot", changes: []diff.Change{file("a/../../x")}, err: `invalid path "a/../../x"`},
		{name: "empty component", changes: []diff.Change{file("a//x")}, err: `invalid path "a//x"`},
		{name: "dot", changes: []diff.Change{file("./x")}, err: `invalid path "./x"`},
		{name: "empty", changes: []diff.Change{file("")}, err: `invalid path ""`},
		{name: "NUL", changes: []diff.Change{file("a\x00b")}, err: `invalid path`},
		{name: "invalid in All, not chosen", changes: []diff.Change{file("top")}, all: []diff.Change{file("top"), file("../x")}, err: `invalid path "../x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, chosen, err := choose(tc.changes, tc.all)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want one saying %q (chosen %v)", err, tc.err, slices.Collect(maps.Keys(chosen)))
			}
		})
	}
}

// TestStaleReason: whether a path that differs from its before-state is a
// conflict, and why; resuming, the states an interrupted apply leaves are
// none.
func TestStaleReason(t *testing.T) {
	edit := &diff.Change{Before: entry(snapshot.File, 0o644), After: entry(snapshot.File, 0o600)}
	retype := &diff.Change{Before: entry(snapshot.File, 0o644), After: entry(snapshot.Dir, 0o755)}
	mkdir := &diff.Change{After: entry(snapshot.Dir, 0o755)}
	rm := &diff.Change{Before: entry(snapshot.File, 0o644)}
	for _, tc := range []struct {
		name                    string
		c                       *diff.Change
		k                       diff.Kind
		resume, asAfter, nowDir bool
		want                    string
	}{
		{name: "changed", c: edit, k: diff.Changed, want: "changed since the run"},
		{name: "created", c: mkdir, k: diff.Added, want: "created since the run"},
		{name: "removed", c: rm, k: diff.Removed, want: "removed since the run"},
		{name: "as after, not resuming", c: edit, k: diff.Changed, asAfter: true, want: "changed since the run"},
		{name: "resuming, applied already", c: edit, k: diff.Changed, resume: true, asAfter: true},
		{name: "resuming, not as after", c: edit, k: diff.Changed, resume: true, want: "changed since the run"},
		{name: "resuming, removed before retyped", c: retype, k: diff.Removed, resume: true},
		{name: "removed before retyped, not resuming", c: retype, k: diff.Removed, want: "removed since the run"},
		{name: "resuming, a removal that is no retype", c: edit, k: diff.Removed, resume: true, want: "removed since the run"},
		{name: "resuming, a removed file stays removed", c: rm, k: diff.Removed, resume: true, want: "removed since the run"},
		{name: "resuming, a made directory, mode not set", c: retype, k: diff.Changed, resume: true, nowDir: true},
		{name: "resuming, a new directory, mode not set", c: mkdir, k: diff.Added, resume: true, nowDir: true},
		{name: "resuming, a new directory that is no directory", c: mkdir, k: diff.Added, resume: true, want: "created since the run"},
		{name: "a directory, not resuming", c: mkdir, k: diff.Added, nowDir: true, want: "created since the run"},
		{name: "resuming, a directory where a file goes", c: edit, k: diff.Changed, resume: true, nowDir: true, want: "changed since the run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := staleReason(tc.c, tc.k, tc.resume, tc.asAfter, tc.nowDir); got != tc.want {
				t.Errorf("staleReason = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRootModeChanged: the workspace root's mode is a conflict when it is
// neither as before nor (resuming) as after.
func TestRootModeChanged(t *testing.T) {
	chmod := &diff.Change{Path: diff.RootPath, Before: entry(snapshot.Dir, 0o755), After: entry(snapshot.Dir, 0o700)}
	gone := &diff.Change{Path: diff.RootPath, Before: entry(snapshot.Dir, 0o755)}
	made := &diff.Change{Path: diff.RootPath, After: entry(snapshot.Dir, 0o755)}
	for _, tc := range []struct {
		name   string
		c      *diff.Change
		self   *snapshot.Entry
		resume bool
		want   bool
	}{
		{name: "not chosen", self: entry(snapshot.Dir, 0o777)},
		{name: "no before-state", c: made, self: entry(snapshot.Dir, 0o777)},
		{name: "root unread", c: chmod},
		{name: "as before", c: chmod, self: entry(snapshot.Dir, 0o755)},
		{name: "as after, not resuming", c: chmod, self: entry(snapshot.Dir, 0o700), want: true},
		{name: "as after, resuming", c: chmod, self: entry(snapshot.Dir, 0o700), resume: true},
		{name: "neither", c: chmod, self: entry(snapshot.Dir, 0o777), want: true},
		{name: "neither, resuming", c: chmod, self: entry(snapshot.Dir, 0o777), resume: true, want: true},
		{name: "no after-state, resuming", c: gone, self: entry(snapshot.Dir, 0o700), resume: true, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rootModeChanged(tc.c, tc.self, tc.resume); got != tc.want {
				t.Errorf("rootModeChanged = %v, want %v", got, tc.want)
			}
		})
	}
	if belowRemovedReason(true) == belowRemovedReason(false) {
		t.Error("an entry below a removed folder: the same reason for a change of the run and a new entry")
	}
}
