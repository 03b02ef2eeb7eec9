// Package policy is the allowlist: it parses entries (the seed's exact-path and
// directory syntax, globs, kind limits, risk grants and !denials) and decides,
// with a reason, which changes they allow.
package policy

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"

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
	// gpat is the glob matched against paths: Pattern less a trailing "/".
	// A glob written with one (**/__pycache__/) names folders: it matches a
	// folder, and what is below it, never a file (dirOnly).
	gpat    string
	dirOnly bool
	// lit is a glob's literal prefix: every path it matches starts with it.
	lit string
	// segs is the number of segments every path a glob matches has, or -1
	// when that varies (a "**" or braces).
	segs int
}

// Policy is an ordered list of rules.
type Policy struct {
	Rules []Rule
	// idx indexes Rules by literal prefix; built on first use.
	idx atomic.Pointer[ruleIndex]
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
	if s == "runs-later" {
		// The name automation had before the contract named it (allowlist
		// versions approved then still parse).
		return diff.Automation, true
	}
	for _, r := range diff.Risks {
		if string(r) == s {
			return r, true
		}
	}
	return "", false
}

// riskNames lists the risk words, comma-separated.
func riskNames() string {
	names := make([]string, len(diff.Risks))
	for i, r := range diff.Risks {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
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
// list such as "added,changed:out/*.o" stays one entry, and so does a comma
// inside a glob's braces or brackets ("out/{a,b}.o") or after a backslash.
// Empty items are dropped, so an empty LIST yields no entries; an empty item
// inside a qualifier list ("added,,changed:x") keeps the entry whole, so that
// Parse rejects it rather than silently reading two entries.
func SplitList(list string) []string {
	toks := splitTop(list)
	var out []string
	for i := 0; i < len(toks); i++ {
		start := i
		for qualifierWords(strings.Join(toks[start:i+1], ",")) {
			j := i + 1
			for j < len(toks) && toks[j] == "" {
				j++
			}
			if j == len(toks) || !qualified(toks[j]) {
				break
			}
			i = j
		}
		if t := strings.Join(toks[start:i+1], ","); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// qualifierWords reports whether s is a comma list of qualifier words, empty
// items aside (ParseRule rejects those).
func qualifierWords(s string) bool {
	n := 0
	for _, q := range strings.Split(s, ",") {
		if q == "" {
			continue
		}
		if !isQualifier(q) {
			return false
		}
		n++
	}
	return n > 0
}

// splitTop splits s at the commas that are not inside {} or [] and not
// escaped by a backslash.
func splitTop(s string) []string {
	var out []string
	braces, bracket, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case bracket:
			if c == ']' {
				bracket = false
			}
		case c == '[':
			bracket = true
		case c == '{':
			braces++
		case c == '}' && braces > 0:
			braces--
		case c == ',' && braces == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
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
		if line := lineEntry(sc.Text()); line != "" {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

// lineEntry is the entry a line of allowlist text holds: the line without
// its comment ("#" to the end) and surrounding spaces; "" for none.
func lineEntry(line string) string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

// LineProblem is a line of allowlist text the parser rejects.
type LineProblem struct {
	// Line is the 1-based line number.
	Line int
	// Entry is the entry as written; Message is the parser's message.
	Entry, Message string
}

func (p LineProblem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Message) }

// ParseLines reads allowlist text as ReadEntries does (one entry a line,
// "#" starts a comment, blank lines are ignored) and checks each entry: it
// returns the valid entries and a LineProblem for every line the parser
// rejects, so that an editor can say which lines are wrong.
func ParseLines(text string) (entries []string, problems []LineProblem) {
	for n, line := range strings.Split(text, "\n") {
		line = lineEntry(line)
		if line == "" {
			continue
		}
		if _, err := Parse([]string{line}); err != nil {
			problems = append(problems, LineProblem{Line: n + 1, Entry: line, Message: err.Error()})
			continue
		}
		entries = append(entries, line)
	}
	return entries, problems
}

// Parse turns entries into a policy. A malformed entry is an error naming it.
func Parse(entries []string) (*Policy, error) {
	p := &Policy{}
	for _, e := range entries {
		if e == "" {
			continue
		}
		if strings.HasPrefix(e, presetPrefix) {
			rs, err := expandPreset(e)
			if err != nil {
				return nil, err
			}
			p.Rules = append(p.Rules, rs...)
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

// ParseRule parses one allowlist entry. A preset ("preset:NAME") stands for
// several entries: Parse expands it, ParseRule rejects it.
func ParseRule(text string) (Rule, error) {
	r := Rule{Text: text}
	bad := func(format string, a ...any) (Rule, error) {
		return Rule{}, fmt.Errorf("allowlist entry %q: %s", text, fmt.Sprintf(format, a...))
	}
	s := text
	if strings.HasPrefix(s, presetPrefix) {
		if _, err := expandPreset(s); err != nil {
			return Rule{}, err
		}
		return bad("a preset stands for several entries (use Parse)")
	}
	if strings.HasPrefix(s, "!") {
		r.Deny = true
		s = s[1:]
	}
	if head, rest, ok := strings.Cut(s, ":"); ok && looksLikeQualifiers(head) {
		for _, q := range strings.Split(head, ",") {
			if q == "" {
				return bad("empty kind or risk between commas")
			} else if k, ok := kindWords[q]; ok {
				r.Kinds = append(r.Kinds, k)
			} else if rk, ok := riskWord(q); ok {
				r.Risks = append(r.Risks, rk)
			} else {
				return bad("unknown kind or risk %q (kinds: added, removed, changed; risks: %s; write ./%s for a path with a colon)", q, riskNames(), s)
			}
		}
		s = rest
	}
	s = strings.TrimPrefix(s, "./")
	switch {
	case s == "":
		return bad("no path or pattern")
	case strings.IndexByte(text, 0) >= 0:
		return bad("contains a NUL byte")
	case strings.Contains(strings.TrimSuffix(s, "/"), "//"):
		return bad("empty path segment (//)")
	case hasDotSegment(s):
		return bad("a . segment names nothing (use ** to allow everything, or dir/ for a folder)")
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
		r.gpat = strings.TrimRight(s, "/")
		r.dirOnly = r.gpat != s
		r.lit = literalPrefix(s)
		r.segs = -1
		if !strings.Contains(s, "**") && !strings.ContainsAny(s, "{[\\") {
			r.segs = strings.Count(strings.TrimSuffix(s, "/"), "/") + 1
		}
	}
	return r, nil
}

// hasDotSegment reports whether a "/"-separated s has a "." segment.
func hasDotSegment(s string) bool {
	for _, seg := range strings.Split(s, "/") {
		if seg == "." {
			return true
		}
	}
	return false
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
	if !strings.HasPrefix(p, r.lit) {
		return false
	}
	n := strings.Count(p, "/") + 1
	for q := p; ; n-- {
		if (r.segs < 0 || n == r.segs) && (!r.dirOnly || isDir || len(q) < len(p)) {
			if ok, _ := doublestar.Match(r.gpat, q); ok {
				return true
			}
		}
		i := strings.LastIndexByte(q, '/')
		if i < 0 || n <= r.segs || len(q) < len(r.lit) {
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
// beats every allow; a risky change needs an allow entry naming its risk. The
// first matching entry in list order names the decision. Large lists are
// searched through an index of the entries' literal prefixes, so only the
// entries that can match c's path are tried.
func (p *Policy) Decide(c *diff.Change) Decision {
	if c.Path == diff.RootPath {
		// The workspace root itself: no entry names it ("." is refused).
		return Decision{}
	}
	if c.Path == diff.RootPath {
		return Decision{} // the workspace root itself: no entry can name it
	}
	if len(p.Rules) < indexMin {
		return p.decideAmong(c, nil, len(p.Rules))
	}
	var buf [32]int32
	cand := p.index().candidates(c.Path, buf[:0])
	return p.decideAmong(c, cand, len(cand))
}

// decideAmong decides c by the first n rules, or by the rules numbered in
// cand (ascending) when cand is not nil.
func (p *Policy) decideAmong(c *diff.Change, cand []int32, n int) Decision {
	isDir := c.IsDir()
	allow, deny, plain := -1, -1, -1
	needPlain := NeedsPlainEntry(c)
	for k := 0; k < n && deny < 0; k++ {
		i := k
		if cand != nil {
			i = int(cand[k])
		}
		r := &p.Rules[i]
		switch {
		case !r.matchesKind(c.Kind):
		case r.Deny:
			if (len(r.Risks) == 0 || r.grants(c.Risk)) && r.matchesPath(c.Path, isDir) {
				deny = i
			}
		// An entry naming a risk allows only a change carrying that risk,
		// never an ordinary change.
		case len(r.Risks) > 0:
			if allow < 0 && c.Risk != diff.NoRisk && r.grants(c.Risk) && r.matchesPath(c.Path, isDir) {
				allow = i
			}
		case c.Risk == diff.NoRisk:
			if allow < 0 && r.matchesPath(c.Path, isDir) {
				allow = i
			}
		// A risky change needs an entry naming its risk; what else changed
		// (a content change next to a gained setuid bit) also needs an
		// ordinary entry.
		case needPlain && plain < 0:
			if r.matchesPath(c.Path, isDir) {
				plain = i
			}
		}
	}
	if needPlain && plain < 0 {
		allow = -1
	}
	switch {
	case deny >= 0:
		return Decision{Allowed: false, Rule: p.Rules[deny].Text}
	case allow >= 0:
		return Decision{Allowed: true, Rule: p.Rules[allow].Text}
	}
	return Decision{}
}

// riskAspects lists, per risk, the aspects of a change that the risk
// itself is about: an entry naming the risk covers them, and only them.
var riskAspects = map[diff.Risk][]diff.Aspect{
	diff.Setuid:        {diff.Mode},
	diff.SymlinkEscape: {diff.Target, diff.TypeA},
	diff.SpecialFile:   {diff.TypeA, diff.Content},
	diff.Capability:    {diff.Xattr},
	diff.Automation:    {diff.Content, diff.Mode, diff.TypeA, diff.Target},
	// Writing through a hard link: a mode, owner or xattr change made
	// through it also needs an ordinary entry.
	diff.HardlinkEscape: {diff.Content},
}

// NeedsPlainEntry reports whether a risky change also needs an ordinary
// entry: a changed path with an aspect its risk is not about (the content of
// a file that also gained a setuid bit). An entry naming the risk allows the
// risk, never the ordinary change next to it.
func NeedsPlainEntry(c *diff.Change) bool {
	about, ok := riskAspects[c.Risk]
	if !ok || c.Kind != diff.Changed {
		return false
	}
	for _, a := range c.Aspects {
		if !slices.Contains(about, a) {
			return true
		}
	}
	return false
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
