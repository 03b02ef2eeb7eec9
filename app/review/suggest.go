package review

import (
	"path"
	"strings"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
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
	p := c.Path
	exact := escapeGlob(p)
	var out []Suggestion
	add := func(label, pattern string, kind bool) {
		q := qualifiers(c, kind)
		e := pattern
		if q != "" {
			e = q + ":" + pattern
		} else if needsDotSlash(pattern) {
			e = "./" + pattern
		}
		for _, s := range out {
			if s.Entry == e {
				return
			}
		}
		r, err := policy.ParseRule(e)
		if err != nil {
			return
		}
		probe := *c
		if !(&policy.Policy{Rules: []policy.Rule{r}}).Decide(&probe).Allowed {
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
		add("Folder "+dir+"/", escapeGlob(dir)+"/", false)
	}
	if !c.IsDir() {
		glob := "*"
		if ext := path.Ext(baseOf(p)); ext != "" && ext != baseOf(p) {
			glob = "*" + escapeGlob(ext)
		}
		if dir := parentOf(p); dir != "" {
			glob = escapeGlob(dir) + "/" + glob
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

// escapeGlob escapes glob metacharacters so a literal path stays literal.
func escapeGlob(s string) string {
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

// needsDotSlash reports whether a bare pattern would be misread: a leading
// "!" (a denial) or a leading "word:" (qualifiers).
func needsDotSlash(p string) bool {
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
