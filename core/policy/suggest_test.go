package policy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

func link(p string, k diff.Kind, target string, risk diff.Risk) diff.Change {
	c := file(p, k)
	if c.After != nil {
		c.After = &snapshot.Entry{Path: p, Type: snapshot.Symlink, Target: target}
	}
	c.Risk = risk
	return c
}

// violationsLeft applies entries to a copy of cs and returns the paths still
// not allowed.
func violationsLeft(t *testing.T, cs []diff.Change, entries []string) []string {
	t.Helper()
	p, err := Parse(entries)
	if err != nil {
		t.Fatalf("entries %q: %v", entries, err)
	}
	cp := slices.Clone(cs)
	p.Apply(cp)
	var left []string
	for _, c := range cp {
		if !c.Allowed {
			left = append(left, c.Path)
		}
	}
	return left
}

func TestSuggest(t *testing.T) {
	cases := []struct {
		name    string
		given   []string // the run's own entries
		changes []diff.Change
		want    []string
		denied  []string // what stays a violation
	}{
		{"a folder added whole rolls up; its risky link is named",
			nil,
			[]diff.Change{dir(".venv", diff.Added), dir(".venv/bin", diff.Added),
				link(".venv/bin/python", diff.Added, "python3", diff.NoRisk),
				link(".venv/bin/python3", diff.Added, "/usr/bin/python3", diff.SymlinkEscape),
				file(".venv/pyvenv.cfg", diff.Added), file("config.json", diff.Changed)},
			[]string{".venv/", "config.json", "symlink-escape:.venv/bin/python3"}, nil},
		{"changes in a folder that existed get exact entries",
			[]string{"logs/"},
			[]diff.Change{file("logs/a", diff.Added), file("src/a.go", diff.Changed), file("src/b.go", diff.Removed)},
			[]string{"src/a.go", "src/b.go"}, nil},
		{"nested added folders give the topmost",
			nil,
			[]diff.Change{dir("out", diff.Added), dir("out/x", diff.Added), file("out/x/y.o", diff.Added), dir("gone", diff.Removed), file("gone/f", diff.Removed)},
			[]string{"gone/", "out/"}, nil},
		{"a denied change stays denied and gets no entry",
			[]string{"!secret"},
			[]diff.Change{file("secret", diff.Added), file("ok", diff.Added)},
			[]string{"ok"}, []string{"secret"}},
		{"odd names stay literal",
			nil,
			[]diff.Change{file("a[1]*.txt", diff.Added), file("added:x", diff.Added), file("!bang", diff.Changed)},
			[]string{`./!bang`, `./added:x`, `a\[1\]\*.txt`}, nil},
		{"a content change next to a gained setuid bit needs both entries",
			nil,
			[]diff.Change{func() diff.Change {
				c := file("run.sh", diff.Changed)
				c.Risk, c.Aspects = diff.Setuid, []diff.Aspect{diff.Content, diff.Mode}
				return c
			}()},
			[]string{"run.sh", "setuid:run.sh"}, nil},
		{"unprintable names become ? so an entry fits a line",
			nil,
			[]diff.Change{file("a\x1bb#c ", diff.Added), file("x\xff", diff.Changed), file("nl\nx", diff.Added)},
			[]string{"a?b?c?", "nl?x", "x?"}, nil},
		{"setuid gained on a file that is also allowed plainly",
			[]string{"bin/"},
			[]diff.Change{func() diff.Change { c := file("bin/tool", diff.Changed); c.Risk = diff.Setuid; return c }()},
			[]string{"setuid:bin/tool"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			MustParse(tc.given...).Apply(tc.changes)
			got := Suggest(tc.changes)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Suggest: %q, want %q", got, tc.want)
			}
			all := append(slices.Clone(tc.given), got...)
			if left := violationsLeft(t, tc.changes, all); !reflect.DeepEqual(left, tc.denied) {
				t.Fatalf("with the suggestion, still not allowed: %q (want %q)", left, tc.denied)
			}
			// Minimal: dropping any suggested entry leaves a violation.
			for i := range got {
				fewer := append(slices.Clone(tc.given), slices.Delete(slices.Clone(got), i, i+1)...)
				if left := violationsLeft(t, tc.changes, fewer); len(left) == len(tc.denied) {
					t.Errorf("entry %q is not needed", got[i])
				}
			}
		})
	}
}

func TestPresets(t *testing.T) {
	p, err := Parse([]string{"preset:python-venv"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		c     diff.Change
		allow bool
		rule  string
	}{
		{file(".venv/pyvenv.cfg", diff.Added), true, ".venv/ (preset:python-venv)"},
		{dir(".venv", diff.Added), true, ".venv/ (preset:python-venv)"},
		{link(".venv/bin/python3", diff.Added, "/usr/bin/python3", diff.SymlinkEscape), true, "symlink-escape:.venv/bin/python* (preset:python-venv)"},
		{link(".venv/bin/evil", diff.Added, "/etc", diff.SymlinkEscape), false, ""},
		{link(".venv/lib/python3", diff.Added, "/usr/bin/python3", diff.SymlinkEscape), false, ""},
		{file("config.json", diff.Changed), false, ""},
	}
	for _, tc := range cases {
		if d := p.Decide(&tc.c); d.Allowed != tc.allow || d.Rule != tc.rule {
			t.Errorf("%s: %+v, want %v %q", tc.c.Path, d, tc.allow, tc.rule)
		}
	}
	if p := MustParse("preset:python-venv=env"); !p.Decide(ptr(link("env/bin/python", diff.Added, "/usr/bin/python3", diff.SymlinkEscape))).Allowed {
		t.Error("preset:python-venv=env does not move the venv")
	}
	for _, pr := range Presets {
		if _, err := Parse([]string{"preset:" + pr.Name}); err != nil || pr.Doc == "" {
			t.Errorf("preset %s: %v (doc %q)", pr.Name, err, pr.Doc)
		}
	}
	for _, bad := range []string{"preset:nope", "preset:", "preset:node=", "preset:node=*/x", "preset:git=../x", "!preset:git"} {
		if _, err := Parse([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestHardlinkEscapeEntries: only an entry naming hardlink-escape allows a
// file with a name outside the workspace; it covers a write through it,
// while a chmod through it also needs an ordinary entry; Needed and Suggest
// name the risk.
func TestHardlinkEscapeEntries(t *testing.T) {
	escaped := func(k diff.Kind, aspects ...diff.Aspect) diff.Change {
		c := file("data/x", k)
		c.Aspects, c.Risk, c.LinksInside = aspects, diff.HardlinkEscape, 1
		c.After.Nlink = 2
		return c
	}
	added, written, chmodded := escaped(diff.Added), escaped(diff.Changed, diff.Content), escaped(diff.Changed, diff.Mode)
	for _, tc := range []struct {
		c       diff.Change
		entries []string
		allowed bool
	}{
		{added, []string{"data/"}, false},
		{added, []string{"data/x"}, false},
		{added, []string{"symlink-escape:data/x"}, false},
		{added, []string{"hardlink-escape:data/x"}, true},
		{added, []string{"hardlink-escape:data/**"}, true},
		{written, []string{"data/x"}, false},
		{written, []string{"hardlink-escape:data/x"}, true},
		{chmodded, []string{"hardlink-escape:data/x"}, false},
		{chmodded, []string{"hardlink-escape:data/x", "data/x"}, true},
		{written, []string{"hardlink-escape:data/x", "!data/x"}, false},
	} {
		if left := violationsLeft(t, []diff.Change{tc.c}, tc.entries); (len(left) == 0) != tc.allowed {
			t.Errorf("%s %v with %q: allowed %v, want %v", tc.c.Kind, tc.c.Aspects, tc.entries, len(left) == 0, tc.allowed)
		}
	}
	for c, want := range map[*diff.Change][]string{&added: {"hardlink-escape:data/x"}, &written: {"hardlink-escape:data/x"},
		&chmodded: {"data/x", "hardlink-escape:data/x"}} {
		if got := Needed(c); !reflect.DeepEqual(got, want) {
			t.Errorf("Needed(%s %v) = %q, want %q", c.Kind, c.Aspects, got, want)
		}
	}
	if got := Suggest([]diff.Change{dir("data", diff.Added), added}); !reflect.DeepEqual(got, []string{"data/", "hardlink-escape:data/x"}) {
		t.Errorf("Suggest = %q", got)
	}
	if _, err := Parse([]string{"hardlinks:x"}); err == nil || !strings.Contains(err.Error(), "hardlink-escape") {
		t.Errorf("the error for an unknown risk does not list hardlink-escape: %v", err)
	}
}

// TestProposeKeepsEditsApart: Propose offers entries in bulk only for
// folders added whole, vendor folders and added generated files; an edit
// or removal of a file that existed, an added source file and a risk are
// picks of their own, each with the entries that allow it. With the bulk
// entries alone, every pick is still a violation.
func TestProposeKeepsEditsApart(t *testing.T) {
	cs := []diff.Change{
		dir("out", diff.Added), dir("out/x", diff.Added), file("out/x/y.o", diff.Added),
		dir("web/node_modules/pkg", diff.Added), file("web/node_modules/pkg/index.js", diff.Added),
		file("web/node_modules/.package-lock.json", diff.Changed),
		file("src/main.o", diff.Added), file("run.log", diff.Added),
		file("src/config.js", diff.Changed), file("src/mod7.js", diff.Added), file("old.txt", diff.Removed),
		dir("gone", diff.Removed), file("gone/f", diff.Removed),
		link("cache/passwd", diff.Added, "/etc/passwd", diff.SymlinkEscape),
		func() diff.Change {
			c := file(".github/workflows/ci.yml", diff.Added)
			c.Risk = diff.Automation
			return c
		}(),
		file("secret", diff.Added),
	}
	MustParse("!secret").Apply(cs)
	p := Propose(cs)
	if want := []string{"out/", "run.log", "src/main.o", "web/node_modules/"}; !reflect.DeepEqual(p.Bulk, want) {
		t.Errorf("bulk %q, want %q", p.Bulk, want)
	}
	var picks []string
	for _, pk := range p.Picks {
		picks = append(picks, string(pk.Kind)+" "+pk.Path+" "+strings.Join(pk.Entries, "+"))
	}
	want := []string{
		"added .github/workflows/ci.yml automation:.github/workflows/ci.yml",
		"added cache/passwd symlink-escape:cache/passwd",
		"removed gone gone/", "removed gone/f gone/f",
		"removed old.txt old.txt", "changed src/config.js src/config.js", "added src/mod7.js src/mod7.js",
	}
	if !reflect.DeepEqual(picks, want) {
		t.Errorf("picks:\n%s\nwant:\n%s", strings.Join(picks, "\n"), strings.Join(want, "\n"))
	}
	left := violationsLeft(t, cs, append([]string{"!secret"}, p.Bulk...))
	slices.Sort(left)
	if wantLeft := []string{".github/workflows/ci.yml", "cache/passwd", "gone", "gone/f", "old.txt", "secret", "src/config.js", "src/mod7.js"}; !reflect.DeepEqual(left, wantLeft) {
		t.Errorf("with the bulk entries, still violations: %q, want %q", left, wantLeft)
	}
	// A plain folder entry never allows a new workflow; only its risk's does.
	ci := cs[14]
	if d := MustParse(".github/").Decide(&ci); d.Allowed {
		t.Errorf(".github/ allowed a new workflow: %+v", d)
	}
	if d := MustParse("automation:.github/workflows/*.yml").Decide(&ci); !d.Allowed {
		t.Errorf("automation:.github/workflows/*.yml: %+v", d)
	}
	for p, want := range map[string]string{"node_modules/a/b": "node_modules", "web/node_modules": "web/node_modules",
		"a/.git/objects/ab/cd": "a/.git/objects", ".git/objects/x": ".git/objects", "src/a": ""} {
		if got, _ := VendorDir(p); got != want {
			t.Errorf("VendorDir(%q) = %q, want %q", p, got, want)
		}
	}
}
