package policy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

// seedOK is the seed's ok() from diff.py, transcribed.
func seedOK(p string, allow []string) bool {
	for _, a := range allow {
		if p == a || strings.HasPrefix(p, strings.TrimRight(a, "/")+"/") {
			return true
		}
	}
	return false
}

func file(p string, k diff.Kind) diff.Change {
	e := &snapshot.Entry{Path: p, Type: snapshot.File}
	c := diff.Change{Path: p, Kind: k}
	if k != diff.Added {
		c.Before = e
	}
	if k != diff.Removed {
		c.After = e
	}
	return c
}

func dir(p string, k diff.Kind) diff.Change {
	c := file(p, k)
	if c.Before != nil {
		c.Before = &snapshot.Entry{Path: p, Type: snapshot.Dir}
	}
	if c.After != nil {
		c.After = &snapshot.Entry{Path: p, Type: snapshot.Dir}
	}
	return c
}

func TestSeedSyntaxVerbatim(t *testing.T) {
	list := ".cache/,logs/run.log"
	entries := SplitList(list)
	if !reflect.DeepEqual(entries, []string{".cache/", "logs/run.log"}) {
		t.Fatalf("split %v", entries)
	}
	p := MustParse(entries...)
	for _, path := range []string{".cache/x", ".cache/a/b", "logs/run.log", "logs/run.log/x", "logs/run.log2", "logs/other", "config.json", ".cache", ".cachex/y"} {
		c := file(path, diff.Changed)
		got := p.Decide(&c).Allowed
		if want := seedOK(path, entries); got != want {
			t.Errorf("%s: allowed=%v, seed says %v", path, got, want)
		}
	}
}

func TestDecide(t *testing.T) {
	p := MustParse("added:logs/**", "added,changed:out/*.o", "!out/secret.o", "src/", "setuid:bin/tool", "**/*.tmp", "symlink-escape,added:links/*")
	cases := []struct {
		c     diff.Change
		allow bool
		rule  string
	}{
		{file("logs/a/b.log", diff.Added), true, "added:logs/**"},
		{file("logs/a/b.log", diff.Changed), false, ""},
		{file("out/x.o", diff.Changed), true, "added,changed:out/*.o"},
		{file("out/x.o", diff.Removed), false, ""},
		{file("out/secret.o", diff.Added), false, "!out/secret.o"},
		{file("src/main.go", diff.Removed), true, "src/"},
		{dir("src", diff.Added), true, "src/"},
		{file("a/b/c.tmp", diff.Added), true, "**/*.tmp"},
		{file("config.json", diff.Changed), false, ""},
	}
	for _, tc := range cases {
		d := p.Decide(&tc.c)
		if d.Allowed != tc.allow || d.Rule != tc.rule {
			t.Errorf("%s %s: got %+v, want allowed=%v rule=%q", tc.c.Kind, tc.c.Path, d, tc.allow, tc.rule)
		}
	}
	// Risks need an entry naming them.
	r := file("bin/tool", diff.Changed)
	r.Risk = diff.Setuid
	if d := p.Decide(&r); !d.Allowed || d.Rule != "setuid:bin/tool" {
		t.Errorf("setuid grant: %+v", d)
	}
	r2 := file("src/evil", diff.Added)
	r2.Risk = diff.Setuid
	if d := p.Decide(&r2); d.Allowed {
		t.Errorf("plain entry silenced a risk: %+v", d)
	}
	l := file("links/x", diff.Added)
	l.Risk = diff.SymlinkEscape
	if d := p.Decide(&l); !d.Allowed {
		t.Errorf("symlink-escape grant: %+v", d)
	}
}

func TestImpliedDirectories(t *testing.T) {
	cs := []diff.Change{dir("logs", diff.Added), file("logs/run.log", diff.Added), dir("other", diff.Added), dir("x", diff.Added), file("x-y", diff.Added), file("x/z", diff.Added)}
	MustParse("logs/run.log", "x/z").Apply(cs)
	got := map[string]bool{}
	for _, c := range cs {
		got[c.Path] = c.Allowed
	}
	want := map[string]bool{"logs": true, "logs/run.log": true, "other": false, "x": true, "x-y": false, "x/z": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	if cs[0].Rule != "logs/run.log" {
		t.Errorf("implied rule %q", cs[0].Rule)
	}
}

func TestEmptyListAllowsNothing(t *testing.T) {
	if e := SplitList(""); len(e) != 0 {
		t.Fatalf("%v", e)
	}
	p := MustParse(SplitList("")...)
	c := file("a", diff.Added)
	if p.Decide(&c).Allowed {
		t.Fatal("empty list allowed a change")
	}
}

func TestSplitListQualifiers(t *testing.T) {
	cases := map[string][]string{
		"added,changed:out/*.o,logs/":  {"added,changed:out/*.o", "logs/"},
		"a,,b":                         {"a", "b"},
		"added":                        {"added"},
		"!added,removed:x":             {"!added,removed:x"},
		"x,added,removed,changed:y/**": {"x", "added,removed,changed:y/**"},
	}
	for in, want := range cases {
		if got := SplitList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

func TestMalformedEntries(t *testing.T) {
	for _, bad := range []string{"addded:logs/**", "/etc/passwd", "../up", "a/../../b", "!", "added:", "logs/[", "setuid,bogus:x"} {
		_, err := Parse([]string{bad})
		if err == nil {
			t.Errorf("%q: no error", bad)
			continue
		}
		if !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error does not name the entry in one line: %v", bad, err)
		}
	}
	if _, err := Parse([]string{"./foo:bar", "Foo:bar", "x/y:z"}); err != nil {
		t.Errorf("paths with colons: %v", err)
	}
}

func TestReadEntries(t *testing.T) {
	got, err := ReadEntries(strings.NewReader("# header\n.cache/\n  logs/run.log  # the log\n\n!secret\n"))
	if err != nil || !reflect.DeepEqual(got, []string{".cache/", "logs/run.log", "!secret"}) {
		t.Fatalf("%v %v", got, err)
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{".cache/", "logs/run.log", "added:logs/**", "added,changed:out/*.o", "!config.json", "setuid:bin/x", "**/*.{go,mod}", "a[b", "x:y", "\xff"} {
		f.Add(s, "logs/a/b.log")
	}
	f.Fuzz(func(t *testing.T, entry, path string) {
		r, err := ParseRule(entry)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(entry, "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		if r.Text != entry || r.Pattern == "" {
			t.Fatalf("rule %+v from %q", r, entry)
		}
		p := &Policy{Rules: []Rule{r}}
		for _, k := range []diff.Kind{diff.Added, diff.Removed, diff.Changed} {
			c := file(path, k)
			d := p.Decide(&c)
			if d.Allowed && r.Deny {
				t.Fatalf("deny rule %q allowed %q", entry, path)
			}
			// A literal entry always covers the seed's ok() paths.
			if !r.Deny && len(r.Kinds) == 0 && !strings.HasPrefix(entry, "./") && seedOK(path, []string{entry}) && !d.Allowed {
				t.Fatalf("entry %q does not allow %q, the seed would", entry, path)
			}
		}
	})
}
