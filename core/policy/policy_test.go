package policy

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bmatcuk/doublestar/v4"

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
	for _, s := range []string{".cache/", "logs/run.log", "added:logs/**", "added,changed:out/*.o", "!config.json", "setuid:bin/x", "**/*.{go,mod}", "a[b", "x:y", "\xff",
		".", "a//b", "a\x00b", "added,,changed:x", "out/{a,b}.o", "a/./b", "setuid:run.sh", "preset:python-venv"} {
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
			// A risk entry never allows an ordinary change.
			if d.Allowed && len(r.Risks) > 0 {
				t.Fatalf("risk entry %q allowed an ordinary change of %q", entry, path)
			}
			// A literal entry always covers the seed's ok() paths.
			if !r.Deny && len(r.Kinds) == 0 && !strings.HasPrefix(entry, "./") && seedOK(path, []string{entry}) && !d.Allowed {
				t.Fatalf("entry %q does not allow %q, the seed would", entry, path)
			}
		}
	})
}

func TestEntryValidation(t *testing.T) {
	for _, bad := range []string{".", "./.", "a//b", "a/./b", "x/.", "a\x00b", "added,,changed:x", "!a//b/**"} {
		_, err := Parse([]string{bad})
		if err == nil {
			t.Errorf("%q: no error", bad)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("%q", bad)) || strings.ContainsAny(msg, "\n\x00") {
			t.Errorf("%q: error does not name the entry in one line: %q", bad, msg)
		}
		// Given with --allow, the entry reaches Parse whole and is rejected.
		if _, err := Parse(SplitList(bad)); err == nil {
			t.Errorf("--allow %q: split into %q, accepted", bad, SplitList(bad))
		}
	}
	for _, good := range []string{"a/", "a/b/", ".cache/", "./a", "a.b/..c", ".../x"} {
		if _, err := Parse([]string{good}); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}

func TestRiskEntryAllowsOnlyTheRisk(t *testing.T) {
	p := MustParse("setuid:run.sh", "symlink-escape:links/", "added,special-file:dev/*")
	plain := file("run.sh", diff.Changed)
	if d := p.Decide(&plain); d.Allowed {
		t.Errorf("setuid:run.sh allowed a plain content change: %+v", d)
	}
	risky := file("run.sh", diff.Changed)
	risky.Risk = diff.Setuid
	if d := p.Decide(&risky); !d.Allowed || d.Rule != "setuid:run.sh" {
		t.Errorf("setuid:run.sh did not allow the setuid change: %+v", d)
	}
	// A content change next to the gained bit also needs an ordinary entry.
	both := file("run.sh", diff.Changed)
	both.Risk, both.Aspects = diff.Setuid, []diff.Aspect{diff.Content, diff.Mode}
	if d := p.Decide(&both); d.Allowed {
		t.Errorf("setuid:run.sh allowed a content change with the setuid bit: %+v", d)
	}
	if d := MustParse("setuid:run.sh", "run.sh").Decide(&both); !d.Allowed || d.Rule != "setuid:run.sh" {
		t.Errorf("setuid:run.sh with run.sh: %+v", d)
	}
	if d := MustParse("setuid:run.sh", "!run.sh").Decide(&both); d.Allowed {
		t.Errorf("a denial of run.sh let the content change through: %+v", d)
	}
	other := file("run.sh", diff.Changed)
	other.Risk = diff.SymlinkEscape
	if d := p.Decide(&other); d.Allowed {
		t.Errorf("setuid:run.sh allowed another risk: %+v", d)
	}
	for _, path := range []string{"links/a", "dev/null"} {
		c := file(path, diff.Added)
		if d := p.Decide(&c); d.Allowed {
			t.Errorf("%s: a risk entry allowed an ordinary addition: %+v", path, d)
		}
	}
}

func TestSplitListBraces(t *testing.T) {
	cases := map[string][]string{
		"out/{a,b}.o":                   {"out/{a,b}.o"},
		"out/{a,b}.o,logs/":             {"out/{a,b}.o", "logs/"},
		"added:{x,y/{p,q}}/**,z":        {"added:{x,y/{p,q}}/**", "z"},
		"a[,]b,c":                       {"a[,]b", "c"},
		`a\,b,c`:                        {`a\,b`, "c"},
		"added,changed:src/{a,b}.go,d/": {"added,changed:src/{a,b}.go", "d/"},
		"added,,changed:x":              {"added,,changed:x"},
		"x,added,,removed:y,,z":         {"x", "added,,removed:y", "z"},
	}
	for in, want := range cases {
		if got := SplitList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
	p := MustParse(SplitList("out/{a,b}.o")...)
	for path, want := range map[string]bool{"out/a.o": true, "out/b.o": true, "out/c.o": false} {
		c := file(path, diff.Added)
		if got := p.Decide(&c).Allowed; got != want {
			t.Errorf("out/{a,b}.o on %s: %v", path, got)
		}
	}
}

// referenceDecide is Decide written plainly: every rule tried in order,
// every glob matched with doublestar against the path and each ancestor.
func referenceDecide(rules []Rule, c *diff.Change) Decision {
	isDir := c.IsDir()
	matches := func(r *Rule) bool {
		base := strings.TrimRight(r.Pattern, "/")
		if c.Path == r.Pattern || strings.HasPrefix(c.Path, base+"/") || (isDir && c.Path == base) {
			return true
		}
		if !strings.ContainsAny(r.Pattern, "*?[{\\") {
			return false
		}
		// A glob with a trailing slash names folders: the path itself
		// when it is one, and its ancestors.
		pat := strings.TrimRight(r.Pattern, "/")
		for q := c.Path; ; {
			if ok, _ := doublestar.Match(pat, q); ok && (pat == r.Pattern || isDir || q != c.Path) {
				return true
			}
			i := strings.LastIndexByte(q, '/')
			if i < 0 {
				return false
			}
			q = q[:i]
		}
	}
	for i := range rules {
		r := &rules[i]
		if r.Deny && r.matchesKind(c.Kind) && matches(r) && (len(r.Risks) == 0 || r.grants(c.Risk)) {
			return Decision{Rule: r.Text}
		}
	}
	if NeedsPlainEntry(c) {
		plain := false
		for i := range rules {
			r := &rules[i]
			plain = plain || !r.Deny && len(r.Risks) == 0 && r.matchesKind(c.Kind) && matches(r)
		}
		if !plain {
			return Decision{}
		}
	}
	for i := range rules {
		r := &rules[i]
		if r.Deny || !r.matchesKind(c.Kind) || !matches(r) {
			continue
		}
		if c.Risk != diff.NoRisk && !r.grants(c.Risk) || c.Risk == diff.NoRisk && len(r.Risks) > 0 {
			continue
		}
		return Decision{Allowed: true, Rule: r.Text}
	}
	return Decision{}
}

// TestIndexAgreesWithReference decides random changes against random
// allowlists, large enough to be indexed, and compares every decision with
// the plain reference.
func TestIndexAgreesWithReference(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	segs := []string{"a", "b", "ab", "src", "x.o", "y.go", ".cache", "a-b"}
	globSegs := []string{"*", "**", "?", "a*", "*.o", "{a,b}", "{x.o,y.go}", "[ab]", "a?", "*b*"}
	quals := []string{"", "added:", "changed:", "added,removed:", "setuid:", "symlink-escape,added:", "!", "!changed:", "!setuid:"}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	randPath := func() string {
		n := 1 + rng.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = pick(segs)
		}
		return strings.Join(parts, "/")
	}
	kinds := []diff.Kind{diff.Added, diff.Removed, diff.Changed}
	risks := []diff.Risk{diff.NoRisk, diff.NoRisk, diff.Setuid, diff.SymlinkEscape}
	for round := 0; round < 200; round++ {
		var entries []string
		for len(entries) < 16+rng.IntN(60) {
			n := 1 + rng.IntN(4)
			parts := make([]string, n)
			for i := range parts {
				if rng.IntN(3) == 0 {
					parts[i] = pick(globSegs)
				} else {
					parts[i] = pick(segs)
				}
			}
			e := pick(quals) + strings.Join(parts, "/")
			if rng.IntN(4) == 0 {
				e += "/"
			}
			if _, err := ParseRule(e); err == nil {
				entries = append(entries, e)
			}
		}
		p := MustParse(entries...)
		for k := 0; k < 200; k++ {
			var c diff.Change
			if rng.IntN(3) == 0 {
				c = dir(randPath(), kinds[rng.IntN(3)])
			} else {
				c = file(randPath(), kinds[rng.IntN(3)])
			}
			c.Risk = risks[rng.IntN(len(risks))]
			if c.Kind == diff.Changed {
				c.Aspects = [][]diff.Aspect{nil, {diff.Content}, {diff.Mode}, {diff.Mode, diff.Content}, {diff.Target}}[rng.IntN(5)]
			}
			got, want := p.Decide(&c), referenceDecide(p.Rules, &c)
			if got != want {
				t.Fatalf("entries %q\n%s %s (risk %q, dir %v): indexed %+v, reference %+v", entries, c.Kind, c.Path, c.Risk, c.IsDir(), got, want)
			}
		}
	}
}

// TestRootIsNeverAllowed: a change to the workspace root itself is a
// violation whatever the entries; no suggestion claims to allow it.
func TestRootIsNeverAllowed(t *testing.T) {
	c := dir(diff.RootPath, diff.Changed)
	for _, e := range []string{"**", "*", "?", "**/", "{.,x}", "[.]", "./"} {
		p, err := Parse([]string{e})
		if err != nil {
			continue
		}
		if d := p.Decide(&c); d.Allowed {
			t.Errorf("%q allowed the root: %+v", e, d)
		}
	}
	if s := Suggest([]diff.Change{c}); len(s) != 0 {
		t.Errorf("suggested %q for the root", s)
	}
}

// FuzzSplitList: splitting a --allow LIST loses nothing but commas, and no
// entry is empty.
func FuzzSplitList(f *testing.F) {
	for _, s := range []string{".cache/,logs/run.log", "out/{a,b}.o", "added,,changed:x", "a[,]b,c", `a\,b`, "x,added,removed,changed:y/**", "{,", "],[,", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got := SplitList(list)
		for _, e := range got {
			if e == "" {
				t.Fatalf("%q: empty entry in %q", list, got)
			}
		}
		if a, b := strings.ReplaceAll(strings.Join(got, ","), ",", ""), strings.ReplaceAll(list, ",", ""); a != b {
			t.Fatalf("%q split into %q", list, got)
		}
	})
}

// A glob written with a trailing slash names folders: the folder and what
// is below it, never a file of that name; indexed or not.
func TestGlobTrailingSlash(t *testing.T) {
	cases := []struct {
		c    diff.Change
		want bool
	}{
		{dir("__pycache__", diff.Added), true},
		{file("__pycache__/m.pyc", diff.Added), true},
		{dir("pkg/sub/__pycache__", diff.Added), true},
		{file("pkg/sub/__pycache__/m.cpython-312.pyc", diff.Changed), true},
		{file("pkg/__pycache__", diff.Added), false}, // a file of that name
		{file("pkg/__pycache__x/m.pyc", diff.Added), false},
		{file("pkg/m.py", diff.Added), false},
	}
	for _, entries := range [][]string{{"**/__pycache__/"}, {"pkg/*/__pycache__/", "**/__pycache__/"}} {
		p := MustParse(entries...)
		// The index is used from indexMin rules on: pad the list to try it too.
		padded := append([]string{}, entries...)
		for i := 0; len(padded) < indexMin+1; i++ {
			padded = append(padded, fmt.Sprintf("pad%d/", i))
		}
		pi := MustParse(padded...)
		for _, tc := range cases {
			if got := p.Decide(&tc.c).Allowed; got != tc.want {
				t.Errorf("%v: %s allowed %v, want %v", entries, tc.c.Path, got, tc.want)
			}
			if got := pi.Decide(&tc.c).Allowed; got != tc.want {
				t.Errorf("%v (indexed): %s allowed %v, want %v", entries, tc.c.Path, got, tc.want)
			}
		}
	}
	// The same glob written without the slash still matches the file too.
	if c := file("pkg/__pycache__", diff.Added); !MustParse("**/__pycache__").Decide(&c).Allowed {
		t.Error("**/__pycache__ no longer allows a file of that name")
	}
}

// TestAutomationRiskNames: the contract's automation:PATH grants the
// risk, and runs-later:PATH, its name in allowlists approved before the
// contract named it, still does.
func TestAutomationRiskNames(t *testing.T) {
	ci := diff.Change{Path: ".github/workflows/ci.yml", Kind: diff.Added, Risk: diff.Automation, Aspects: []diff.Aspect{diff.Content}}
	for _, entry := range []string{"automation:.github/workflows/*.yml", "runs-later:.github/workflows/*.yml"} {
		if d := MustParse(entry).Decide(&ci); !d.Allowed {
			t.Errorf("%s does not allow %+v: %+v", entry, ci, d)
		}
	}
	if d := MustParse(".github/workflows/*.yml").Decide(&ci); d.Allowed {
		t.Error("a plain entry allowed the automation risk")
	}
}

// ParseLines checks allowlist text line by line, as the app's editor and
// the web app's Compare read it: comments and blank lines skipped, each
// bad line reported with its number, the good ones kept.
func TestParseLines(t *testing.T) {
	entries, problems := ParseLines("logs/   # the run's logs\n\n  [oops\n.cache/\nadded:\n")
	if strings.Join(entries, "|") != "logs/|.cache/" {
		t.Errorf("entries %q", entries)
	}
	if len(problems) != 2 || problems[0].Line != 3 || problems[0].Entry != "[oops" || problems[1].Line != 5 ||
		!strings.HasPrefix(problems[0].String(), "line 3: ") {
		t.Errorf("problems %+v", problems)
	}
	// ReadEntries splits lines alike.
	if got, _ := ReadEntries(strings.NewReader("logs/   # the run's logs\n\n.cache/\n")); strings.Join(got, "|") != "logs/|.cache/" {
		t.Errorf("ReadEntries %q", got)
	}
}
