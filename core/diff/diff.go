// Package diff compares two manifests and lists what changed: entries added,
// removed or changed (in content, mode, type, symlink target or owner), with
// the before/after metadata and the risks an ordinary allow entry must not
// silence.
package diff

import (
	"encoding/hex"
	"encoding/json"
	"path"
	"slices"
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
	Xattr   Aspect = "xattr"
)

// Risk names a finding that only an allow entry naming it can silence.
type Risk string

// Risks.
const (
	NoRisk        Risk = ""
	SymlinkEscape Risk = "symlink-escape"
	// HardlinkEscape is a regular file with a name outside the workspace
	// (a hard link): writing through it changes a file outside.
	HardlinkEscape Risk = "hardlink-escape"
	Setuid         Risk = "setuid"
	SpecialFile    Risk = "special-file"
	Capability     Risk = "capability"
	// Automation is an added or changed file that something runs later,
	// outside the gate: a CI workflow or a git hook (IsAutomation).
	Automation Risk = "automation"
)

// Risks lists every risk name.
var Risks = []Risk{SymlinkEscape, HardlinkEscape, Setuid, SpecialFile, Capability, Automation}

// IsAutomation reports whether path (relative, '/'-separated) is where a
// file is run later by something else: a GitHub workflow
// (.github/workflows/*.yml or *.yaml), a GitLab pipeline (.gitlab-ci.yml)
// or a git hook (.git/hooks/NAME, but not the NAME.sample git ships),
// at the top of the workspace or of a repository inside it.
func IsAutomation(path string) bool {
	dir, base := snapshot.SplitPath(path)
	under := func(d string) bool { return dir == d || strings.HasSuffix(dir, "/"+d) }
	switch {
	case base == ".gitlab-ci.yml":
		return true
	case under(".github/workflows"):
		return strings.HasSuffix(base, ".yml") || strings.HasSuffix(base, ".yaml")
	case under(".git/hooks"):
		return !strings.HasSuffix(base, ".sample")
	}
	return false
}

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
	// DiffNote says why a change of a file's content has no TextDiff: one of
	// the Note* values.
	DiffNote string `json:"diff_note,omitempty"`
	// LinksInside is, for a HardlinkEscape, how many of the file's names
	// (After.Nlink) the workspace holds; the others lie outside it.
	LinksInside int `json:"links_inside,omitempty"`
	// RenamedTo (on a removed file) and RenamedFrom (on an added file)
	// pair the two changes of a rename: the same content, or text at least
	// 90% alike (textdiff.MarkRenames). Each stays a change of its own that
	// the allowlist judges. In JSON a path that is not valid UTF-8 also
	// carries a _b64 twin, as path does.
	RenamedTo   string `json:"renamed_to,omitempty"`
	RenamedFrom string `json:"renamed_from,omitempty"`
	// Similarity is how alike a rename's contents are, in percent (100:
	// the same content), on both of its changes.
	Similarity int `json:"similarity,omitempty"`
	// RenameDiff, on the added file of a rename with edits, is the text
	// diff from the removed file's content to the added file's.
	RenameDiff string `json:"rename_diff,omitempty"`
}

// Why a content change has no text diff (Change.DiffNote).
const (
	// NoteBinary: a side is not text.
	NoteBinary = "binary"
	// NoteTooLarge: a side is over the size limit of text diffs.
	NoteTooLarge = "too-large"
	// NoteNotKept: the before-content was never read or kept (e.g. its
	// hash was reused from the cache and no copy is stored), or the file
	// changed again before the gate could read it.
	NoteNotKept = "not-kept"
	// NoteBudget: the run's budget for text diffs (given out in
	// report.RankOrder) was spent. Reports of older runs also used it for
	// the two keep budgets below.
	NoteBudget = "budget"
	// NoteKeepBudget: the before-content was not kept because the
	// workspace's text exceeds a keep budget: the run's, for contents kept
	// in memory (source-like files first), or the history's text store's.
	NoteKeepBudget = "keep-budget"
)

// NoteBeforeMissing reports whether note says the before-content was not
// there to diff (what Load full diff of a staged run can make up for).
func NoteBeforeMissing(note string) bool {
	switch note {
	case NoteTooLarge, NoteNotKept, NoteBudget, NoteKeepBudget:
		return true
	}
	return false
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

// RootPath is the path of a change to the workspace root itself.
const RootPath = "."

// Compare lists the changes from before to after, sorted by path, a change
// to the workspace root itself (path ".") first. If either manifest is in
// the seed's format, both are compared as the seed does: regular files
// only, by size and SHA-256.
//
// What the gate could not read is not a change: an entry whose content is
// unknown is never called changed or unchanged in content (Unreadable lists
// it), and nothing below a directory the after-snapshot could not open is
// called removed.
func Compare(before, after *snapshot.Manifest, opt Options) []Change {
	seed := before.Seed || after.Seed
	b, a := before.Entries, after.Entries
	if seed {
		b, a = filesOnly(b), filesOnly(a)
	}
	root := opt.Root
	if root == "" {
		root = after.Root
	}
	rb, ra := &resolver{m: before, root: root}, &resolver{m: after, root: root}
	var out []Change
	if !seed {
		if c, ok := compareRoot(before.Self, after.Self); ok {
			out = append(out, c)
		}
	}
	hidden := hiddenDirs(after)
	var links linkIndex
	if !seed {
		links, _ = countLinks(after)
	}
	var keep copier
	symlinks := false // some symlink changed (symlinkChanged)
	var i, j int
	for i < len(b) || j < len(a) {
		switch step(b, a, i, j) {
		case -1:
			symlinks = symlinks || symlinkChanged(&b[i], nil)
			if !hidden.covers(b[i].Path) {
				out = append(out, newChange(b[i].Path, Removed, keep.copy(&b[i]), nil))
			}
			i++
		case 1:
			symlinks = symlinks || symlinkChanged(nil, &a[j])
			c := newChange(a[j].Path, Added, nil, &a[j])
			c.Risk = riskOf(nil, &a[j], ra)
			links.mark(&c)
			out = append(out, c)
			j++
		default:
			symlinks = symlinks || symlinkChanged(&b[i], &a[j])
			if aspects := compareEntries(&b[i], &a[j], seed); len(aspects) > 0 {
				c := newChange(a[j].Path, Changed, keep.copy(&b[i]), &a[j])
				c.Aspects = aspects
				c.Risk = riskOf(&b[i], &a[j], ra)
				links.mark(&c)
				out = append(out, c)
			}
			i++
			j++
		}
	}
	if symlinks && !seed {
		out = mergeByPath(out, escaping(b, a, rb, ra, &keep))
	}
	return out
}

// symlinkChanged reports whether the symlinks differ at one path of the
// merge (b or a nil when only one side holds it): one added, removed,
// retargeted or turned into something else. A link resolves (resolver)
// through the manifest's symlinks alone, every other entry is a plain
// component: while before and after hold the same symlinks with the same
// targets, an unchanged link resolves the same way in both, and none can
// have come to lead outside. A no-op run then resolves none of them (the
// bench's real tree holds tens of thousands, in /usr/lib: 26 ms of its
// diff). The merge notes even the paths it does not report (below a
// directory the after-snapshot could not open).
func symlinkChanged(b, a *snapshot.Entry) bool {
	bl, al := b != nil && b.Type == snapshot.Symlink, a != nil && a.Type == snapshot.Symlink
	return bl != al || bl && b.Target != a.Target
}

// escaping returns a change of risk SymlinkEscape, in path order, for each
// unchanged link that leads outside the workspace after and did not before:
// what it resolves through changed. It is called only when some symlink
// changed (symlinkChanged), and merges b and a again to find them.
func escaping(b, a []snapshot.Entry, rb, ra *resolver, keep *copier) []Change {
	var out []Change
	for i, j := 0, 0; i < len(b) && j < len(a); {
		switch step(b, a, i, j) {
		case -1:
			i++
		case 1:
			j++
		default:
			eb, ea := &b[i], &a[j]
			if ea.Type == snapshot.Symlink && len(compareEntries(eb, ea, false)) == 0 &&
				ra.escapes(ea.Path, ea.Target) && !rb.escapes(eb.Path, eb.Target) {
				c := newChange(ea.Path, Changed, keep.copy(eb), ea)
				c.Risk = SymlinkEscape
				out = append(out, c)
			}
			i++
			j++
		}
	}
	return out
}

// mergeByPath merges more (sorted by path) into out (sorted by path after
// the root's own change, which stays first).
func mergeByPath(out, more []Change) []Change {
	if len(more) == 0 {
		return out
	}
	head := 0
	if len(out) > 0 && out[0].Path == RootPath {
		head = 1
	}
	merged := make([]Change, 0, len(out)+len(more))
	merged = append(merged, out[:head]...)
	rest := out[head:]
	for len(rest) > 0 || len(more) > 0 {
		if len(more) == 0 || len(rest) > 0 && rest[0].Path < more[0].Path {
			merged, rest = append(merged, rest[0]), rest[1:]
		} else {
			merged, more = append(merged, more[0]), more[1:]
		}
	}
	return merged
}

// step says which side a merge of the sorted entries b and a takes next,
// from b[i] and a[j] (at least one is there): -1 b's only, 1 a's only, 0
// both (the same path). Equal paths, by far the most common case, are told
// by one comparison.
func step(b, a []snapshot.Entry, i, j int) int {
	switch {
	case j >= len(a):
		return -1
	case i >= len(b):
		return 1
	case b[i].Path == a[j].Path:
		return 0
	case b[i].Path < a[j].Path:
		return -1
	}
	return 1
}

// devIno identifies an inode.
type devIno struct{ dev, ino uint64 }

// linkIndex counts, per inode, the names a manifest holds of its regular
// files that have more than one name (Entry.Nlink > 1): the few hard links
// of a tree, so it stays small.
type linkIndex map[devIno]int

// countLinks indexes m's files of more than one name, and returns where
// in m they are: a caller that looks at them again need not pass over
// every entry a second time.
func countLinks(m *snapshot.Manifest) (linkIndex, []int) {
	var x linkIndex
	var at []int
	for i := range m.Entries {
		if e := &m.Entries[i]; linked(e) {
			if x == nil {
				x = linkIndex{}
			}
			x[devIno{e.Dev, e.Ino}]++
			at = append(at, i)
		}
	}
	return x, at
}

func linked(e *snapshot.Entry) bool { return e.Type == snapshot.File && e.Nlink > 1 && e.Ino != 0 }

// inside returns how many names of e's inode the manifest holds and
// whether some other name lies outside it.
func (x linkIndex) inside(e *snapshot.Entry) (n int, escapes bool) {
	if !linked(e) {
		return 0, false
	}
	n = x[devIno{e.Dev, e.Ino}]
	return n, n < int(e.Nlink)
}

// writesThrough lists the aspects of a change that reach every name of
// the file's inode: a write or a chmod through one name changes them all.
var writesThrough = []Aspect{Content, Mode, Owner, Xattr}

// mark gives an added file, or a file whose content or metadata changed,
// the risk HardlinkEscape when it has a name outside the workspace (and no
// other risk).
func (x linkIndex) mark(c *Change) {
	if c.Risk != NoRisk || c.After == nil {
		return
	}
	if c.Kind == Changed {
		through := false
		for _, a := range writesThrough {
			through = through || c.Has(a)
		}
		if !through || c.Has(TypeA) {
			return
		}
	}
	if n, escapes := x.inside(c.After); escapes {
		c.Risk, c.LinksInside = HardlinkEscape, n
	}
}

// HardlinkEscapes lists the regular files of m (paths relative to its
// root, sorted) that have a name outside it: their link count is above the
// number of names m holds of their inode. Writing through one changes a
// file outside the tree; under containment the supervisor can refuse
// writes to them (Landlock checks paths, so a hard link made before the
// run is a hole a path rule cannot see).
func HardlinkEscapes(m *snapshot.Manifest) []string {
	x, at := countLinks(m)
	var out []string
	for _, i := range at {
		if _, escapes := x.inside(&m.Entries[i]); escapes {
			out = append(out, m.Entries[i].Path)
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

// compareRoot compares the root's own entries (type, mode, owner).
func compareRoot(b, a *snapshot.Entry) (Change, bool) {
	switch {
	case b == nil && a == nil:
		return Change{}, false
	case a == nil:
		// The after-snapshot found no root: the workspace was removed.
		return newChange(RootPath, Removed, b, nil), true
	case b == nil:
		return Change{}, false // an older manifest: nothing to compare
	}
	aspects := compareEntries(b, a, false)
	if len(aspects) == 0 {
		return Change{}, false
	}
	c := newChange(RootPath, Changed, b, a)
	c.Aspects = aspects
	if a.Type == snapshot.Symlink {
		c.Risk = SymlinkEscape
	} else {
		c.Risk = riskOf(b, a, nil)
	}
	return c, true
}

// hidden is the set of directories below which the after-snapshot knows
// nothing.
type hidden map[string]bool

func hiddenDirs(m *snapshot.Manifest) hidden {
	var h hidden
	if m.Self != nil && m.Self.Err != "" {
		return hidden{"": true}
	}
	for i := range m.Entries {
		if e := &m.Entries[i]; e.Hides() {
			if h == nil {
				h = hidden{}
			}
			h[e.Path] = true
		}
	}
	return h
}

// covers reports whether p lies below a hidden directory.
func (h hidden) covers(p string) bool {
	if len(h) == 0 {
		return false
	}
	if h[""] {
		return true
	}
	for {
		k := strings.LastIndexByte(p, '/')
		if k < 0 {
			return false
		}
		p = p[:k]
		if h[p] {
			return true
		}
	}
}

// Unknown is an entry the gate could not fully read, before or after the
// run: a directory it could not open or list (what is below it is unknown),
// a file it could not read (its content is unknown). It is a finding of its
// own: the gate cannot vouch for it.
type Unknown struct {
	Path string `json:"path"`
	// When is "before", "after" or "both".
	When string `json:"when"`
	// Reason is what went wrong, after the run if it went wrong then.
	Reason string `json:"reason"`
}

// MarshalJSON adds path_b64 for a path that is not valid UTF-8.
func (u Unknown) MarshalJSON() ([]byte, error) {
	type alias Unknown
	text, b64 := snapshot.EncodeString(u.Path)
	a := alias(u)
	a.Path = text
	return json.Marshal(struct {
		alias
		PathB64 string `json:"path_b64,omitempty"`
	}{a, b64})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (u *Unknown) UnmarshalJSON(b []byte) error {
	type alias Unknown
	var v struct {
		alias
		PathB64 string `json:"path_b64,omitempty"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p, err := snapshot.DecodeString(v.Path, v.PathB64)
	if err != nil {
		return err
	}
	*u = Unknown(v.alias)
	u.Path = p
	return nil
}

// Line renders u as the CLI's "UNREADABLE path (reason)" line, the path
// quoted by quote.
func (u *Unknown) Line(quote func(string) string) string {
	r := u.Reason
	if u.When == "before" {
		r = "before the run: " + r
	}
	return "UNREADABLE " + quote(u.Path) + " (" + r + ")"
}

// Unreadable lists the entries either manifest could not fully record,
// sorted by path, the root first. Entries below a directory that is itself
// unreadable on the same side are not listed again.
func Unreadable(before, after *snapshot.Manifest) []Unknown {
	var out []Unknown
	add := func(b, a *snapshot.Entry) {
		switch {
		case b != nil && b.Unreadable() && a != nil && a.Unreadable():
			out = append(out, Unknown{Path: a.Path, When: "both", Reason: a.Err})
		case a != nil && a.Unreadable():
			out = append(out, Unknown{Path: a.Path, When: "after", Reason: a.Err})
		case b != nil && b.Unreadable():
			out = append(out, Unknown{Path: b.Path, When: "before", Reason: b.Err})
		}
	}
	if before.Seed || after.Seed {
		return nil
	}
	add(before.Self, after.Self)
	hb, ha := hiddenDirs(before), hiddenDirs(after)
	b, a := before.Entries, after.Entries
	var i, j int
	for i < len(b) || j < len(a) {
		switch step(b, a, i, j) {
		case -1:
			if !hb.covers(b[i].Path) {
				add(&b[i], nil)
			}
			i++
		case 1:
			if !ha.covers(a[j].Path) {
				add(nil, &a[j])
			}
			j++
		default:
			pb, pa := &b[i], &a[j]
			if hb.covers(pb.Path) {
				pb = nil
			}
			if ha.covers(pa.Path) {
				pa = nil
			}
			add(pb, pa)
			i++
			j++
		}
	}
	return out
}

func newChange(p string, k Kind, before, after *snapshot.Entry) Change {
	return Change{Path: p, Kind: k, Before: before, After: after, Aspects: []Aspect{}}
}

// changeAlias has Change's fields without its methods.
type changeAlias Change

// MarshalJSON writes the change as in the report contract, adding path_b64
// for a path that is not valid UTF-8.
func (c Change) MarshalJSON() ([]byte, error) {
	a := changeAlias(c)
	var v changeJSON
	a.Path, v.PathB64 = snapshot.EncodeString(c.Path)
	a.RenamedTo, v.RenamedToB64 = snapshot.EncodeString(c.RenamedTo)
	a.RenamedFrom, v.RenamedFromB64 = snapshot.EncodeString(c.RenamedFrom)
	if a.Aspects == nil {
		a.Aspects = []Aspect{}
	}
	v.changeAlias = a
	return json.Marshal(v)
}

// changeJSON is a change as JSON: its fields and the _b64 twins of its
// paths.
type changeJSON struct {
	changeAlias
	PathB64        string `json:"path_b64,omitempty"`
	RenamedToB64   string `json:"renamed_to_b64,omitempty"`
	RenamedFromB64 string `json:"renamed_from_b64,omitempty"`
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (c *Change) UnmarshalJSON(b []byte) error {
	var v changeJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p, err := snapshot.DecodeString(v.Path, v.PathB64)
	if err != nil {
		return err
	}
	to, err := snapshot.DecodeString(v.RenamedTo, v.RenamedToB64)
	if err != nil {
		return err
	}
	from, err := snapshot.DecodeString(v.RenamedFrom, v.RenamedFromB64)
	if err != nil {
		return err
	}
	*c = Change(v.changeAlias)
	c.Path, c.RenamedTo, c.RenamedFrom = p, to, from
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
	// A side whose metadata could not be read is unknown, not changed:
	// Unreadable reports it.
	if (b.Unreadable() && b.Type == snapshot.Unknown) || (a.Unreadable() && a.Type == snapshot.Unknown) {
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
		// A file whose content could not be read on either side is
		// compared by size only; equal sizes say nothing either way, and
		// Unreadable reports the file.
		if b.Size != a.Size || (b.SHA256 != a.SHA256 && !b.Unreadable() && !a.Unreadable()) {
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
	if b.Xattr != "" && a.Xattr != "" && b.Xattr != a.Xattr {
		out = append(out, Xattr)
	}
	return out
}

// riskOf returns the risk an added or changed entry carries; r resolves
// symlinks in the after-snapshot (nil: no symlink check).
func riskOf(before, after *snapshot.Entry, r *resolver) Risk {
	switch after.Type {
	case snapshot.Symlink:
		if r != nil && (before == nil || before.Type != snapshot.Symlink || before.Target != after.Target) && r.escapes(after.Path, after.Target) {
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
	if after.Type == snapshot.File && capsGained(before, after) {
		return Capability
	}
	if automationChanged(before, after) {
		return Automation
	}
	return NoRisk
}

// automationChanged reports whether after is an automation file
// (IsAutomation) that is new, or whose content, mode, type or target
// changed: an edit of an existing workflow runs later too. A change of
// its time or owner alone is not one.
func automationChanged(before, after *snapshot.Entry) bool {
	if (after.Type != snapshot.File && after.Type != snapshot.Symlink) || !IsAutomation(after.Path) {
		return false
	}
	if before == nil {
		return true
	}
	return slices.ContainsFunc(compareEntries(before, after, false), func(a Aspect) bool {
		return a == Content || a == Mode || a == TypeA || a == Target
	})
}

// capsGained reports whether after holds a file capability (permitted,
// inheritable or the effective flag) that before did not. A before side
// whose attributes were not recorded counts as holding none.
func capsGained(before, after *snapshot.Entry) bool {
	if after.Caps() == "" {
		return false
	}
	var old string
	if before != nil {
		old = before.Caps()
	}
	if old == after.Caps() {
		return false
	}
	np, ni, ne, ok := parseCaps(after.Caps())
	if !ok {
		return true // unparseable: cannot show nothing was gained
	}
	op, oi, oe, ok := parseCaps(old)
	if !ok {
		return true
	}
	return np&^op != 0 || ni&^oi != 0 || (ne && !oe)
}

// parseCaps decodes a security.capability value (struct vfs_cap_data,
// revisions 1-3, little-endian), given in hex: the permitted and
// inheritable sets and the effective flag. "" is no capability.
func parseCaps(h string) (permitted, inheritable uint64, effective, ok bool) {
	if h == "" {
		return 0, 0, false, true
	}
	raw, err := hex.DecodeString(h)
	if err != nil || len(raw) < 12 {
		return 0, 0, false, false
	}
	le := func(b []byte) uint64 { return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 }
	magic := le(raw[0:4])
	effective = magic&1 != 0
	permitted, inheritable = le(raw[4:8]), le(raw[8:12])
	switch magic &^ 1 {
	case 0x01000000: // revision 1: one 32-bit set
	case 0x02000000, 0x03000000: // revisions 2 and 3: two
		if len(raw) < 20 {
			return 0, 0, false, false
		}
		permitted |= le(raw[12:16]) << 32
		inheritable |= le(raw[16:20]) << 32
	default:
		return 0, 0, false, false
	}
	return permitted, inheritable, effective, true
}

// maxLinks bounds the symlinks one resolution follows, as the kernel does
// (ELOOP after 40).
const maxLinks = 40

// resolver follows symlinks the way the kernel would, within a manifest.
type resolver struct {
	m    *snapshot.Manifest
	root string
}

// escapes reports whether a symlink at rel (relative to the workspace) with
// the given target leads outside the workspace when the kernel resolves it
// in the manifest's tree: every component that is a recorded symlink is
// followed (its target relative to its own directory, an absolute one
// inside the workspace taken from the root), ".." above the workspace
// leaves it. A component the manifest does not hold is taken as a plain
// directory (the script could create it later). A loop (more than 40 links)
// resolves to nothing and does not escape.
func (r *resolver) escapes(rel, target string) bool {
	if target == "" {
		return false
	}
	var cur []string // the resolved directory, components below the root
	if d := path.Dir(rel); d != "." {
		cur = strings.Split(d, "/")
	}
	return r.walk(cur, target, 0)
}

// walk resolves target from the directory cur.
func (r *resolver) walk(cur []string, target string, links int) bool {
	todo, inside := r.start(target)
	if !inside {
		return true
	}
	if isAbs(target) {
		cur = nil
	}
	cur = append([]string(nil), cur...)
	for k := 0; k < len(todo); k++ {
		c := todo[k]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return true
			}
			cur = cur[:len(cur)-1]
			continue
		}
		p := c
		if len(cur) > 0 {
			p = strings.Join(cur, "/") + "/" + c
		}
		e := r.m.Lookup(p)
		if e == nil || e.Type != snapshot.Symlink {
			cur = append(cur, c)
			continue
		}
		links++
		if links > maxLinks {
			return false
		}
		// Splice the link's target in front of what is left.
		t := e.Target
		rest := strings.Join(todo[k+1:], "/")
		if rest != "" {
			t = strings.TrimSuffix(t, "/") + "/" + rest
		}
		return r.walk(cur, t, links)
	}
	return false
}

// start splits target into components; for an absolute target, inside says
// whether it lies in the workspace, and the components are then relative
// to the root.
func (r *resolver) start(target string) (todo []string, inside bool) {
	if !isAbs(target) {
		return strings.Split(target, "/"), true
	}
	if r.root == "" {
		return nil, false
	}
	root := path.Clean(strings.ReplaceAll(r.root, `\`, "/"))
	t := path.Clean(strings.ReplaceAll(target, `\`, "/"))
	switch {
	case t == root:
		return []string{}, true
	case strings.HasPrefix(t, strings.TrimSuffix(root, "/")+"/"):
		return strings.Split(strings.TrimPrefix(t, strings.TrimSuffix(root, "/")+"/"), "/"), true
	}
	return nil, false
}

func isAbs(target string) bool {
	return path.IsAbs(target) || strings.HasPrefix(target, `\`) || (len(target) > 1 && target[1] == ':')
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
