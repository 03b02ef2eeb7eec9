// Package policy is the allowlist: it parses entries (the seed's exact-path and
// directory syntax, globs, kind limits, risk grants and !denials) and decides,
// with a reason, which changes they allow.
package policy

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/diffgate/diffgate/core/diff"
)

// Rule is one parsed allowlist entry.
type Rule struct {
	// Text is the entry as written; decisions name it.
	Text string
	// Deny is set for a !entry: a matching change is never allowed.
	Deny bool
	// Kinds limits the rule to these change kinds; empty means every kind.
	Kinds []diff.Kind
	// Risks lists the risks this rule grants; a risky change needs one.
	Risks []diff.Risk
	// Pattern is the path or glob, relative to the workspace.
	Pattern string
	// base is Pattern without trailing slashes, as the seed compares.
	base string
	// glob is set when Pattern has glob metacharacters.
	glob bool
}

// Policy is an ordered list of rules.
type Policy struct {
	Rules []Rule
}

// Decision explains what the policy says about one change.
type Decision struct {
	// Allowed says whether the change is covered.
	Allowed bool
	// Rule is the text of the entry that allowed or denied it ("" if none).
	Rule string
}

var kindWords = map[string]diff.Kind{"added": diff.Added, "removed": diff.Removed, "changed": diff.Changed}

func riskWord(s string) (diff.Risk, bool) {
	for _, r := range diff.Risks {
		if string(r) == s {
			return r, true
		}
	}
	return "", false
}

func isQualifier(s string) bool {
	s = strings.TrimPrefix(s, "!")
	if _, ok := kindWords[s]; ok {
		return true
	}
	_, ok := riskWord(s)
	return ok
}

// SplitList splits a comma-separated --allow LIST into entries. A qualifier
// list such as "added,changed:out/*.o" stays one entry; empty items are
// dropped, so an empty LIST yields no entries.
func SplitList(list string) []string {
	toks := strings.Split(list, ",")
	var out []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		for allQualifiers(t) && i+1 < len(toks) && qualified(toks[i+1]) {
			i++
			t += "," + toks[i]
		}
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// allQualifiers reports whether s is a comma list of qualifier words only.
func allQualifiers(s string) bool {
	for _, q := range strings.Split(s, ",") {
		if !isQualifier(q) {
			return false
		}
	}
	return true
}

// qualified reports whether tok starts with "qualifier[,qualifier]:" or is a bare qualifier.
func qualified(tok string) bool {
	if isQualifier(tok) {
		return true
	}
	head, _, ok := strings.Cut(tok, ":")
	return ok && allQualifiers(head)
}

// ReadEntries reads an allowlist file: one entry per line, blank lines and
// text after '#' ignored, surrounding white space trimmed.
func ReadEntries(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

// Parse turns entries into a policy. A malformed entry is an error naming it.
func Parse(entries []string) (*Policy, error) {
	p := &Policy{}
	for _, e := range entries {
		if e == "" {
			continue
		}
		r, err := ParseRule(e)
		if err != nil {
			return nil, err
		}
		p.Rules = append(p.Rules, r)
	}
	return p, nil
}

// MustParse is Parse for entries known to be valid; it panics otherwise.
func MustParse(entries ...string) *Policy {
	p, err := Parse(entries)
	if err != nil {
		panic(err)
	}
	return p
}

// ParseRule parses one allowlist entry.
func ParseRule(text string) (Rule, error) {
	r := Rule{Text: text}
	bad := func(format string, a ...any) (Rule, error) {
		return Rule{}, fmt.Errorf("allowlist entry %q: %s", text, fmt.Sprintf(format, a...))
	}
	s := text
	if strings.HasPrefix(s, "!") {
		r.Deny = true
		s = s[1:]
	}
	if head, rest, ok := strings.Cut(s, ":"); ok && looksLikeQualifiers(head) {
		for _, q := range strings.Split(head, ",") {
			if k, ok := kindWords[q]; ok {
				r.Kinds = append(r.Kinds, k)
			} else if rk, ok := riskWord(q); ok {
				r.Risks = append(r.Risks, rk)
			} else {
				return bad("unknown kind or risk %q (kinds: added, removed, changed; risks: symlink-escape, setuid, special-file; write ./%s for a path with a colon)", q, s)
			}
		}
		s = rest
	}
	s = strings.TrimPrefix(s, "./")
	switch {
	case s == "":
		return bad("no path or pattern")
	case strings.HasPrefix(s, "/"):
		return bad("paths are relative to the workspace, not absolute")
	case s == ".." || strings.HasPrefix(s, "../") || strings.Contains(s, "/../") || strings.HasSuffix(s, "/.."):
		return bad("paths may not leave the workspace (..)")
	}
	r.Pattern = s
	r.base = strings.TrimRight(s, "/")
	if strings.ContainsAny(s, "*?[{\\") {
		if !doublestar.ValidatePattern(s) {
			return bad("invalid glob pattern")
		}
		r.glob = true
	}
	return r, nil
}

// looksLikeQualifiers reports whether head is a comma list of lower-case words
// (so "added,changed" or a misspelt "addded"), not part of a path.
func looksLikeQualifiers(head string) bool {
	if head == "" {
		return false
	}
	for _, c := range head {
		if !(c >= 'a' && c <= 'z' || c == '-' || c == ',') {
			return false
		}
	}
	return true
}

// String returns the entry text.
func (r Rule) String() string { return r.Text }

// matchesPath reports whether the rule's pattern covers path p: equal to it or
// under it (the seed's ok()), or matched by the glob, itself or an ancestor.
func (r *Rule) matchesPath(p string, isDir bool) bool {
	if p == r.Pattern || strings.HasPrefix(p, r.base+"/") || (isDir && p == r.base) {
		return true
	}
	if !r.glob {
		return false
	}
	for q := p; ; {
		if ok, _ := doublestar.Match(r.Pattern, q); ok {
			return true
		}
		i := strings.LastIndexByte(q, '/')
		if i < 0 {
			return false
		}
		q = q[:i]
	}
}

func (r *Rule) matchesKind(k diff.Kind) bool {
	if len(r.Kinds) == 0 {
		return true
	}
	for _, x := range r.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

func (r *Rule) grants(risk diff.Risk) bool {
	for _, x := range r.Risks {
		if x == risk {
			return true
		}
	}
	return false
}

// Decide says whether c is allowed and by which entry. A matching deny entry
// beats every allow; a risky change needs an allow entry naming its risk.
func (p *Policy) Decide(c *diff.Change) Decision {
	isDir := c.IsDir()
	for i := range p.Rules {
		r := &p.Rules[i]
		if r.Deny && r.matchesKind(c.Kind) && r.matchesPath(c.Path, isDir) && (len(r.Risks) == 0 || r.grants(c.Risk)) {
			return Decision{Allowed: false, Rule: r.Text}
		}
	}
	for i := range p.Rules {
		r := &p.Rules[i]
		if r.Deny || !r.matchesKind(c.Kind) || !r.matchesPath(c.Path, isDir) {
			continue
		}
		if c.Risk != diff.NoRisk && !r.grants(c.Risk) {
			continue
		}
		return Decision{Allowed: true, Rule: r.Text}
	}
	return Decision{}
}

// Apply sets Allowed and Rule on every change. A directory that was only
// added or removed is allowed when an allowed change lies below it (creating
// logs/ to write an allowed logs/run.log), unless an entry denied it.
func (p *Policy) Apply(cs []diff.Change) {
	for i := range cs {
		d := p.Decide(&cs[i])
		cs[i].Allowed, cs[i].Rule = d.Allowed, d.Rule
	}
	for i := range cs {
		c := &cs[i]
		if c.Allowed || c.Rule != "" || c.Kind == diff.Changed || !c.IsDir() || c.Risk != diff.NoRisk {
			continue
		}
		prefix := c.Path + "/"
		for j := i + 1; j < len(cs) && cs[j].Path < c.Path+"0"; j++ {
			if cs[j].Allowed && strings.HasPrefix(cs[j].Path, prefix) {
				c.Allowed, c.Rule = true, cs[j].Rule
				break
			}
		}
	}
}

// Violations returns the changes that are not allowed.
func Violations(cs []diff.Change) []diff.Change {
	var out []diff.Change
	for _, c := range cs {
		if !c.Allowed {
			out = append(out, c)
		}
	}
	return out
}
