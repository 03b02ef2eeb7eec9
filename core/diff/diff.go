// Package diff compares two manifests and lists what changed: entries added,
// removed or changed (in content, mode, type, symlink target or owner), with
// the before/after metadata and the risks an ordinary allow entry must not
// silence.
package diff

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/diffgate/diffgate/core/snapshot"
)

// Kind is what happened to a path.
type Kind string

// Change kinds, as in the report contract.
const (
	Added   Kind = "added"
	Removed Kind = "removed"
	Changed Kind = "changed"
)

// Aspect is one way in which a path changed.
type Aspect string

// Aspects of a change.
const (
	Content Aspect = "content"
	Mode    Aspect = "mode"
	TypeA   Aspect = "type"
	Target  Aspect = "target"
	Owner   Aspect = "owner"
)

// Risk names a finding that only an allow entry naming it can silence.
type Risk string

// Risks.
const (
	NoRisk        Risk = ""
	SymlinkEscape Risk = "symlink-escape"
	Setuid        Risk = "setuid"
	SpecialFile   Risk = "special-file"
)

// Risks lists every risk name.
var Risks = []Risk{SymlinkEscape, Setuid, SpecialFile}

// Change is one changed path. Allowed, Rule and TextDiff are filled in by
// later stages (policy, report); Compare leaves them empty.
type Change struct {
	// Path is relative to the workspace, '/'-separated, raw bytes; in JSON a
	// path that is not valid UTF-8 also carries path_b64.
	Path    string          `json:"path"`
	Kind    Kind            `json:"kind"`
	Aspects []Aspect        `json:"aspects"`
	Before  *snapshot.Entry `json:"before,omitempty"`
	After   *snapshot.Entry `json:"after,omitempty"`
	// Allowed says whether the allowlist covers the change.
	Allowed bool `json:"allowed"`
	// Rule is the allowlist entry that matched (or denied).
	Rule string `json:"rule"`
	// Risk is non-empty for a finding an ordinary allow entry does not silence.
	Risk Risk `json:"risk"`
	// TextDiff is a unified diff when both sides are small text files.
	TextDiff string `json:"text_diff,omitempty"`
}

// IsDir reports whether the change is about a directory on either side.
func (c *Change) IsDir() bool {
	return (c.Before == nil || c.Before.Type == snapshot.Dir) && (c.After == nil || c.After.Type == snapshot.Dir)
}

// Has reports whether the change has aspect a.
func (c *Change) Has(a Aspect) bool {
	for _, x := range c.Aspects {
		if x == a {
			return true
		}
	}
	return false
}

// Options tune Compare.
type Options struct {
	// Root is the workspace's absolute path, used to decide whether a symlink
	// points outside it. Defaults to the after manifest's Root.
	Root string
}

// Compare lists the changes from before to after, sorted by path. If either
// manifest is in the seed's format, both are compared as the seed does:
// regular files only, by size and SHA-256.
func Compare(before, after *snapshot.Manifest, opt Options) []Change {
	seed := before.Seed || after.Seed
	b, a := before.Entries, after.Entries
	if seed {
		b, a = filesOnly(b), filesOnly(a)
	}
	var out []Change
	var keep copier
	i, j := 0, 0
	for i < len(b) || j < len(a) {
		switch {
		case j >= len(a) || (i < len(b) && b[i].Path < a[j].Path):
			out = append(out, newChange(b[i].Path, Removed, keep.copy(&b[i]), nil))
			i++
		case i >= len(b) || a[j].Path < b[i].Path:
			c := newChange(a[j].Path, Added, nil, &a[j])
			c.Risk = riskOf(nil, &a[j], opt.Root)
			out = append(out, c)
			j++
		default:
			if aspects := compareEntries(&b[i], &a[j], seed); len(aspects) > 0 {
				c := newChange(a[j].Path, Changed, keep.copy(&b[i]), &a[j])
				c.Aspects = aspects
				c.Risk = riskOf(&b[i], &a[j], opt.Root)
				out = append(out, c)
			}
			i++
			j++
		}
	}
	return out
}

// copier copies before-entries out of the before manifest, a few hundred to
// an allocation, so the changes do not keep the whole manifest alive: after
// the comparison a gated run needs only the after manifest (its hash cache),
// and on a large tree the before manifest is most of the run's memory.
// After-entries point into the after manifest.
type copier struct{ buf []snapshot.Entry }

func (k *copier) copy(e *snapshot.Entry) *snapshot.Entry {
	if len(k.buf) == cap(k.buf) {
		k.buf = make([]snapshot.Entry, 0, 256)
	}
	k.buf = append(k.buf, *e)
	return &k.buf[len(k.buf)-1]
}

func newChange(p string, k Kind, before, after *snapshot.Entry) Change {
	return Change{Path: p, Kind: k, Before: before, After: after, Aspects: []Aspect{}}
}

// changeAlias has Change's fields without its methods.
type changeAlias Change

// MarshalJSON writes the change as in the report contract, adding path_b64
// for a path that is not valid UTF-8.
func (c Change) MarshalJSON() ([]byte, error) {
	text, b64 := snapshot.EncodeString(c.Path)
	a := changeAlias(c)
	a.Path = text
	if a.Aspects == nil {
		a.Aspects = []Aspect{}
	}
	return json.Marshal(struct {
		changeAlias
		PathB64 string `json:"path_b64,omitempty"`
	}{a, b64})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (c *Change) UnmarshalJSON(b []byte) error {
	var v struct {
		changeAlias
		PathB64 string `json:"path_b64,omitempty"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p, err := snapshot.DecodeString(v.Path, v.PathB64)
	if err != nil {
		return err
	}
	*c = Change(v.changeAlias)
	c.Path = p
	if c.Before != nil {
		c.Before.Path = p
	}
	if c.After != nil {
		c.After.Path = p
	}
	return nil
}

func filesOnly(es []snapshot.Entry) []snapshot.Entry {
	out := make([]snapshot.Entry, 0, len(es))
	for _, e := range es {
		if e.Type == snapshot.File {
			out = append(out, e)
		}
	}
	return out
}

func compareEntries(b, a *snapshot.Entry, seed bool) []Aspect {
	if seed {
		if b.Size != a.Size || b.SHA256 != a.SHA256 {
			return []Aspect{Content}
		}
		return nil
	}
	var out []Aspect
	if b.Type != a.Type {
		out = append(out, TypeA)
	}
	switch {
	case b.Type != a.Type:
		if b.Type == snapshot.File || a.Type == snapshot.File {
			out = append(out, Content)
		}
	case a.Type == snapshot.File:
		if b.Size != a.Size || b.SHA256 != a.SHA256 || (b.Err != a.Err) {
			out = append(out, Content)
		}
	case a.Type == snapshot.Block || a.Type == snapshot.Char:
		if b.Rdev != a.Rdev {
			out = append(out, Content)
		}
	}
	if b.Perm != a.Perm && a.Type != snapshot.Symlink {
		out = append(out, Mode)
	}
	if b.Target != a.Target && (b.Type == snapshot.Symlink || a.Type == snapshot.Symlink) {
		out = append(out, Target)
	}
	if b.UID >= 0 && a.UID >= 0 && (b.UID != a.UID || b.GID != a.GID) {
		out = append(out, Owner)
	}
	return out
}

// riskOf returns the risk an added or changed entry carries.
func riskOf(before, after *snapshot.Entry, root string) Risk {
	switch after.Type {
	case snapshot.Symlink:
		if (before == nil || before.Type != snapshot.Symlink || before.Target != after.Target) && escapes(after.Path, after.Target, root) {
			return SymlinkEscape
		}
	case snapshot.Block, snapshot.Char:
		return SpecialFile
	}
	const suid = snapshot.ModeSetuid | snapshot.ModeSetgid
	gained := after.Perm & suid
	if before != nil {
		gained &^= before.Perm
	}
	if gained != 0 && after.Type != snapshot.Dir {
		return Setuid
	}
	return NoRisk
}

// escapes reports whether a symlink at rel (relative to the workspace) with
// the given target resolves, lexically, outside the workspace rooted at root.
func escapes(rel, target, root string) bool {
	if target == "" {
		return false
	}
	if path.IsAbs(target) || strings.HasPrefix(target, `\`) || (len(target) > 1 && target[1] == ':') {
		if root == "" {
			return true
		}
		r := path.Clean(strings.ReplaceAll(root, `\`, "/"))
		t := path.Clean(target)
		return !(t == r || strings.HasPrefix(t, strings.TrimSuffix(r, "/")+"/"))
	}
	joined := path.Join(path.Dir(rel), target)
	return joined == ".." || strings.HasPrefix(joined, "../")
}

// Summary counts changes per kind.
type Summary struct {
	Added, Removed, Changed int
}

// Summarize counts the changes per kind.
func Summarize(cs []Change) Summary {
	var s Summary
	for _, c := range cs {
		switch c.Kind {
		case Added:
			s.Added++
		case Removed:
			s.Removed++
		case Changed:
			s.Changed++
		}
	}
	return s
}
