package policy

import (
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

// Suggestion is an allowlist entry that would allow a change.
type Suggestion struct {
	// Label says what the entry covers ("Exact path", "Folder", ...).
	Label string
	// Entry is the allowlist entry, in policy syntax.
	Entry string
}

// Suggestions lists the entries that would allow c, narrowest first: the
// exact path, the path limited to this kind of change, its folder and a glob
// of its siblings with the same extension. A risky change gets entries that
// name its risk (only those silence it). Every suggestion is checked with the
// policy parser and against c itself.
func Suggestions(c *diff.Change) []Suggestion {
	if NeedsPlainEntry(c) {
		// The entries for the risk; Needed adds the ordinary one.
		rc := *c
		rc.Aspects = nil
		c = &rc
	}
	p := c.Path
	exact := EscapeGlob(p)
	var out []Suggestion
	add := func(label, pattern string, kind bool) {
		pattern = lineSafe(pattern)
		q := qualifiers(c, kind)
		e := pattern
		if q != "" {
			e = q + ":" + pattern
		} else if NeedsDotSlash(pattern) {
			e = "./" + pattern
		}
		for _, s := range out {
			if s.Entry == e {
				return
			}
		}
		r, err := ParseRule(e)
		if err != nil {
			return
		}
		probe := *c
		if !(&Policy{Rules: []Rule{r}}).Decide(&probe).Allowed {
			return
		}
		out = append(out, Suggestion{Label: label, Entry: e})
	}
	if c.IsDir() {
		add("This folder and everything in it", exact+"/", false)
	} else {
		add("Exact path", exact, false)
	}
	add("Exact path, only when "+string(c.Kind), exact, true)
	if dir := parentOf(p); dir != "" {
		add("Folder "+dir+"/", EscapeGlob(dir)+"/", false)
	}
	if !c.IsDir() {
		glob := "*"
		if ext := path.Ext(baseOf(p)); ext != "" && ext != baseOf(p) {
			glob = "*" + EscapeGlob(ext)
		}
		if dir := parentOf(p); dir != "" {
			glob = EscapeGlob(dir) + "/" + glob
		}
		add("Glob "+glob, glob, false)
	}
	return out
}

// qualifiers is the "kind,risk" prefix an entry for c needs.
func qualifiers(c *diff.Change, kind bool) string {
	var q []string
	if kind {
		q = append(q, string(c.Kind))
	}
	if c.Risk != diff.NoRisk {
		q = append(q, string(c.Risk))
	}
	return strings.Join(q, ",")
}

// EscapeGlob escapes glob metacharacters so a literal path stays literal.
func EscapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[]{}\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// NeedsDotSlash reports whether a bare pattern would be misread: a leading
// "!" (a denial) or a leading "word:" (qualifiers).
func NeedsDotSlash(p string) bool {
	if strings.HasPrefix(p, "!") {
		return true
	}
	head, _, ok := strings.Cut(p, ":")
	if !ok || head == "" {
		return false
	}
	for _, r := range head {
		if !(r >= 'a' && r <= 'z' || r == '-' || r == ',') {
			return false
		}
	}
	return true
}

// Needed returns the narrowest entries that together allow c: one, or for a
// risky change that also changed otherwise (NeedsPlainEntry), an ordinary
// entry and one naming the risk. Nil when no allow entry can allow c.
func Needed(c *diff.Change) []string {
	var out []string
	if NeedsPlainEntry(c) {
		pc := *c
		pc.Risk = diff.NoRisk
		s := Suggestions(&pc)
		if len(s) == 0 {
			return nil
		}
		out = append(out, s[0].Entry)
	}
	s := Suggestions(c)
	if len(s) == 0 {
		return nil
	}
	return append(out, s[0].Entry)
}

// Suggest returns the fewest allowlist entries that, added to the run's own,
// allow every violation an allow entry can allow (a change a ! entry denied
// stays denied). A folder that was added or removed as a whole becomes one
// "folder/" entry; every other change gets its exact path. A risky change
// always gets its own entry naming its risk and its exact path: a folder
// entry never silences a risk. The entries come sorted.
func Suggest(changes []diff.Change) []string {
	type pick struct {
		path, entry string
		risky       bool
	}
	var picks []pick
	roots := map[string]bool{} // folders added or removed as a whole
	for i := range changes {
		c := &changes[i]
		if c.Allowed || c.Rule != "" {
			continue // allowed, or denied by a ! entry
		}
		need := Needed(c)
		if len(need) == 0 {
			continue
		}
		if c.Risk == diff.NoRisk && c.IsDir() && c.Kind != diff.Changed {
			roots[c.Path] = true
		}
		for _, e := range need {
			picks = append(picks, pick{c.Path, e, c.Risk != diff.NoRisk})
		}
	}
	// under reports whether p lies in a folder that gets an entry of its own.
	under := func(p string) bool {
		for q := parentOf(p); q != ""; q = parentOf(q) {
			if roots[q] {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	var out []string
	for _, pk := range picks {
		if seen[pk.entry] || !pk.risky && under(pk.path) {
			continue
		}
		seen[pk.entry] = true
		out = append(out, pk.entry)
	}
	sort.Strings(out)
	return out
}

// lineSafe makes an escaped pattern fit on one line of an allowlist file and
// print safely on a terminal: each rune that is not printable (a control or
// format character, a byte that is not UTF-8), a "#" (a comment) and a space
// at either end (trimmed) becomes "?", which matches it.
func lineSafe(pattern string) string {
	if !strings.ContainsRune(pattern, '#') && strings.TrimSpace(pattern) == pattern && utf8.ValidString(pattern) &&
		strings.IndexFunc(pattern, func(r rune) bool { return r != ' ' && !strconv.IsPrint(r) }) < 0 {
		return pattern
	}
	var b strings.Builder
	n := len(pattern)
	for i := 0; i < n; {
		r, w := utf8.DecodeRuneInString(pattern[i:])
		switch {
		case r == utf8.RuneError && w == 1, r == '#', r != ' ' && !strconv.IsPrint(r),
			r == ' ' && (i == 0 || i == n-1):
			b.WriteByte('?')
		default:
			b.WriteString(pattern[i : i+w])
		}
		i += w
	}
	return b.String()
}

// parentOf is p's folder, "" at the top.
func parentOf(p string) string {
	dir, _ := snapshot.SplitPath(p)
	return dir
}

// baseOf is p's last segment.
func baseOf(p string) string {
	_, name := snapshot.SplitPath(p)
	return name
}

// vendorDirs are the vendor and cache trees a package manager or build
// fills: the review rolls them up, and Propose offers one entry for each.
// ".git/objects" is matched as a path.
var vendorDirs = []string{"node_modules", ".venv", "venv", "__pycache__", "target", "dist", "build"}

// generatedExts are the extensions of files a build or a run writes
// (objects, bytecode, logs): an added one is generated output.
var generatedExts = []string{".o", ".obj", ".pyc", ".pyo", ".class", ".log", ".tmp"}

// VendorDir returns the topmost vendor or cache folder that is p or holds
// it ("web/node_modules" for "web/node_modules/x/y.js"), and whether
// there is one.
func VendorDir(p string) (string, bool) {
	if i := strings.Index("/"+p+"/", "/.git/objects/"); i >= 0 {
		return p[:i] + ".git/objects", true
	}
	end := 0
	for part := range strings.SplitSeq(p, "/") {
		end += len(part)
		if slices.Contains(vendorDirs, part) {
			return p[:end], true
		}
		end++
	}
	return "", false
}

// Pick is a violation Propose leaves to the reviewer: the entries that
// would allow it (Needed), to be ticked one by one after reading it.
type Pick struct {
	Path    string
	Kind    diff.Kind
	Risk    diff.Risk
	Entries []string
}

// Proposal is what the review's Suggest allowlist offers for a run's
// violations. Bulk holds entries for what nobody reads line by line:
// folders added whole, vendor and cache folders, and added generated files
// (objects, bytecode, logs). Every other violation that an entry can allow
// (an edit or removal of a file that existed, an added file among the
// sources, a risk) is a Pick of its own, never in Bulk. Both come sorted.
type Proposal struct {
	Bulk  []string
	Picks []Pick
}

// Propose sorts the violations of changes into a Proposal (a change a !
// entry denied stays denied and gets nothing).
func Propose(changes []diff.Change) Proposal {
	var p Proposal
	roots := map[string]bool{} // folders added whole
	for i := range changes {
		c := &changes[i]
		if !c.Allowed && c.Rule == "" && c.Risk == diff.NoRisk && c.IsDir() && c.Kind == diff.Added {
			roots[c.Path] = true
		}
	}
	inRoot := func(path string) bool {
		for q := path; q != ""; q = parentOf(q) {
			if roots[q] {
				return true
			}
		}
		return false
	}
	bulk := map[string]bool{}
	for i := range changes {
		c := &changes[i]
		if c.Allowed || c.Rule != "" {
			continue
		}
		need := Needed(c)
		if len(need) == 0 {
			continue
		}
		if c.Risk == diff.NoRisk {
			if v, ok := VendorDir(c.Path); ok {
				if e := EscapeGlob(lineSafe(v)) + "/"; allows(e, c) {
					bulk[e] = true
					continue
				}
			}
			if c.Kind == diff.Added && inRoot(c.Path) {
				if !inRoot(parentOf(c.Path)) {
					bulk[need[0]] = true // the topmost root itself: "dir/"
				}
				continue
			}
			if c.Kind == diff.Added && !c.IsDir() && slices.Contains(generatedExts, path.Ext(baseOf(c.Path))) {
				bulk[need[0]] = true
				continue
			}
		}
		p.Picks = append(p.Picks, Pick{Path: c.Path, Kind: c.Kind, Risk: c.Risk, Entries: need})
	}
	// A root inside a vendor folder is covered by the folder's entry.
	for e := range bulk {
		if v, ok := VendorDir(strings.TrimSuffix(e, "/")); ok && e != EscapeGlob(lineSafe(v))+"/" && bulk[EscapeGlob(lineSafe(v))+"/"] {
			delete(bulk, e)
		}
	}
	p.Bulk = slices.Sorted(maps.Keys(bulk))
	sort.Slice(p.Picks, func(i, j int) bool { return p.Picks[i].Path < p.Picks[j].Path })
	return p
}

// allows reports whether entry parses and allows c.
func allows(entry string, c *diff.Change) bool {
	r, err := ParseRule(entry)
	if err != nil {
		return false
	}
	probe := *c
	return (&Policy{Rules: []Rule{r}}).Decide(&probe).Allowed
}
