// Package watch records paths outside the workspace before and after a
// gated run, stat only and bounded, and compares the two records: a change
// there (a shell rc file appended to, an autostart entry or a cron job
// added) is a finding of its own, which no allowlist entry allows. It is
// what catches, with containment off or where Landlock is missing (macOS),
// the writes Landlock blocks on Linux, and it runs when contained too.
//
// Nothing is ever opened but directories (to list them): a file's content
// is never read. Each watched directory is walked to at most MaxEntries
// entries and MaxDepth levels; the report says when a bound cut a walk.
package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/fspath"
)

// Bounds of the walk of one watched directory.
const (
	// MaxEntries is the most entries recorded below one watched path.
	MaxEntries = 10_000
	// MaxDepth is the most directory levels listed below one watched path
	// (its own listing is level 1).
	MaxDepth = 8
)

// Path is one path to watch: absolute, whether it exists or not.
type Path struct {
	Path string
	// Default is set for a path of the default set.
	Default bool
	// Via names the symlink whose target this path is.
	Via string
	// For names the path that could not be stat'ed and whose directory
	// this is; the directory is stat'ed only, never listed.
	For string
}

// Options tune Take.
type Options struct {
	// Workspace (absolute, resolved) is left out with all it holds: the
	// diff covers it. A watched path inside it is reported as skipped.
	Workspace string
	// Skip lists more absolute directories left out with all they hold:
	// the gate's own (a staged run's stage, the private TMPDIR).
	Skip []string
	// MaxEntries and MaxDepth bound each walk; 0 means the package's.
	MaxEntries, MaxDepth int
}

// Set is the record of every watched path at one moment.
type Set struct {
	roots []*root
	opt   Options
}

// root is the record of one watched path.
type root struct {
	Path
	// skipped is the directory the path lies in and that is not watched
	// (the workspace or an Options.Skip directory; "": watched).
	skipped string
	// err is why the path itself could not be stat'ed ("" when it could,
	// or when it does not exist).
	err string
	// entries holds what was recorded, the path itself included (absent
	// when it does not exist), by absolute path.
	entries map[string]*snapshot.Entry
	// listed holds the directories listed completely: what they hold is
	// known, so a name absent from them is absent.
	listed map[string]bool
	// unlisted holds the directories that could not be listed, and why.
	unlisted map[string]string
	cut      string
}

// Take records paths (the watch's roots) as they are now. A path that is
// a symlink is recorded as such, and its target (resolved now) is watched
// too; a path that cannot be stat'ed is recorded with the reason, and its
// directory is watched (stat only) in its stead, so that an entry added to
// or removed from it still shows. Paths inside opt.Skip are skipped.
func Take(paths []Path, opt Options) *Set {
	s := &Set{opt: opt}
	seen := map[string]bool{}
	add := func(p Path) *root {
		if seen[p.Path] {
			return nil
		}
		seen[p.Path] = true
		r := &root{Path: p}
		s.roots = append(s.roots, r)
		if r.skipped = s.skipReason(p.Path); r.skipped == "" {
			s.walk(r)
		}
		return r
	}
	for _, p := range paths {
		r := add(p)
		if r == nil || r.skipped != "" {
			continue
		}
		if e := r.entries[r.Path.Path]; e != nil && e.Type == snapshot.Symlink {
			if target, err := filepath.EvalSymlinks(r.Path.Path); err == nil && target != r.Path.Path {
				add(Path{Path: target, Default: p.Default, Via: p.Path})
			}
		}
		if r.err != "" && p.For == "" {
			if dir := filepath.Dir(p.Path); dir != p.Path {
				if d := add(Path{Path: dir, Default: p.Default, For: p.Path}); d != nil && d.err != "" {
					// Not even its directory: nothing stands in for it.
					s.roots = s.roots[:len(s.roots)-1]
					delete(seen, dir)
				}
			}
		}
	}
	return s
}

// Again records the same roots as s, as they are now: the after side.
func (s *Set) Again() *Set {
	a := &Set{opt: s.opt}
	for _, r := range s.roots {
		n := &root{Path: r.Path, skipped: r.skipped}
		a.roots = append(a.roots, n)
		if n.skipped == "" {
			a.walk(n)
		}
	}
	return a
}

// Unstatable says why path cannot be stat'ed ("" when it can, or when it
// does not exist: a missing path is watched too).
func Unstatable(path string) string {
	if _, err := snapshot.Lstat(path); err != nil && !missing(err) {
		return describe(err)
	}
	return ""
}

func (s *Set) bounds() (entries, depth int) {
	entries, depth = s.opt.MaxEntries, s.opt.MaxDepth
	if entries <= 0 {
		entries = MaxEntries
	}
	if depth <= 0 {
		depth = MaxDepth
	}
	return entries, depth
}

// walk records r's path and, for a directory (unless it stands in for an
// unwatchable path), what it holds, within the bounds.
func (s *Set) walk(r *root) {
	r.entries, r.listed, r.unlisted = map[string]*snapshot.Entry{}, map[string]bool{}, map[string]string{}
	e, err := snapshot.Lstat(r.Path.Path)
	switch {
	case missing(err):
		return
	case err != nil:
		r.err = describe(err)
		return
	}
	r.entries[e.Path] = &e
	if e.Type != snapshot.Dir || r.For != "" {
		return
	}
	maxEntries, maxDepth := s.bounds()
	n := 0
	// list records dir's entries and what lies below them; it returns
	// false when the entry bound stopped the walk. A directory all of
	// whose names were recorded is listed: a name absent from it is
	// absent.
	var list func(dir string, depth int) bool
	list = func(dir string, depth int) bool {
		if depth >= maxDepth {
			r.cut = fmt.Sprintf("depth %d", maxDepth)
			return true
		}
		names, err := readNames(dir)
		if err != nil {
			r.unlisted[dir] = "cannot list directory: " + describe(err)
			return true
		}
		for _, name := range names {
			p := filepath.Join(dir, name)
			if s.skipReason(p) != "" {
				continue
			}
			if n >= maxEntries {
				r.cut = fmt.Sprintf("%d entries", maxEntries)
				return false
			}
			e, err := snapshot.Lstat(p)
			switch {
			case missing(err):
				continue // gone since the listing
			case err != nil:
				e = snapshot.Entry{Path: p, Type: snapshot.Unknown, UID: -1, GID: -1, Err: describe(err)}
			}
			n++
			r.entries[p] = &e
			if e.Type == snapshot.Dir && !list(p, depth+1) {
				return false
			}
		}
		r.listed[dir] = true
		return true
	}
	list(r.Path.Path, 0)
}

// skipReason says why p is not watched: the directory it lies in, the
// workspace or one of the gate's own ("" when it is watched).
func (s *Set) skipReason(p string) string {
	if s.opt.Workspace != "" && fspath.Within(p, s.opt.Workspace) {
		return s.opt.Workspace
	}
	for _, d := range s.opt.Skip {
		if d != "" && fspath.Within(p, d) {
			return d
		}
	}
	return ""
}

// readNames lists a directory's names, sorted.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

// missing reports whether err says the path does not exist (also when a
// directory on its way is not a directory).
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// describe is a stat or listing error in a few words, without the path.
func describe(err error) string {
	if errors.Is(err, fs.ErrPermission) {
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// Summary says what a watch watched: each root, the entries recorded
// before the run, and what could not be watched on either side.
type Summary struct {
	Roots []Root
	// Entries counts the entries recorded before, in all roots.
	Entries int
	// Unwatchable lists what could not be stat'ed (or listed) before and
	// after alike, sorted by path.
	Unwatchable []Unwatchable
}

// Root is one watched path as it was watched.
type Root struct {
	Path
	// Entries counts what was recorded at and below it before (0: it does
	// not exist).
	Entries int
	// Cut names the bound that cut a walk ("10000 entries", "depth 8").
	Cut string
	// SkippedIn is the directory the path lies in and that is not watched:
	// Options.Workspace (the diff covers it) or an Options.Skip directory
	// ("" when it was watched).
	SkippedIn string
}

// Unwatchable is a path that could not be watched, and why.
type Unwatchable struct{ Path, Reason string }

// Aspect is one way in which a watched path changed, from stat alone.
type Aspect string

// The aspects of a change.
const (
	AspectType   Aspect = "type"
	AspectMode   Aspect = "mode"
	AspectOwner  Aspect = "owner"
	AspectTarget Aspect = "target"
	AspectSize   Aspect = "size"
	AspectMTime  Aspect = "mtime"
	AspectCTime  Aspect = "ctime"
	AspectInode  Aspect = "inode"
	AspectLinks  Aspect = "links"
	AspectDevice Aspect = "device"
	// AspectStat: the path could be stat'ed on one side only (the entry of
	// the other side carries the error).
	AspectStat Aspect = "stat"
)

// Aspects lists every aspect.
var Aspects = []Aspect{AspectType, AspectMode, AspectOwner, AspectTarget, AspectSize, AspectMTime, AspectCTime,
	AspectInode, AspectLinks, AspectDevice, AspectStat}

// Change is a change found in a watched path: added, removed or changed
// (with its aspects).
type Change struct {
	Path          string
	Kind          diff.Kind
	Aspects       []Aspect
	Before, After *snapshot.Entry
}

// Compare lists the changes from before to after (after from
// before.Again()), sorted by root and path, and says what was watched: the
// roots, the entries recorded before, the walks a bound cut, and what could
// not be watched on either side.
func Compare(before, after *Set) (Summary, []Change) {
	w := Summary{Roots: []Root{}}
	var out []Change
	unwatchable := map[string]string{}
	for i, b := range before.roots {
		a := after.roots[i]
		wr := Root{Path: b.Path, Entries: len(b.entries), SkippedIn: b.skipped, Cut: b.cut}
		if wr.Cut == "" {
			wr.Cut = a.cut
		}
		w.Roots = append(w.Roots, wr)
		w.Entries += len(b.entries)
		if b.skipped != "" {
			continue
		}
		switch {
		case b.err != "" && a.err != "":
			unwatchable[b.Path.Path] = b.err
			continue
		case b.err != "" || a.err != "":
			o := Change{Path: b.Path.Path, Kind: diff.Changed, Aspects: []Aspect{AspectStat},
				Before: b.entries[b.Path.Path], After: a.entries[a.Path.Path]}
			if o.Before == nil {
				o.Before = unknownEntry(b)
			}
			if o.After == nil {
				o.After = unknownEntry(a)
			}
			out = append(out, o)
			continue
		}
		for _, m := range []map[string]string{b.unlisted, a.unlisted} {
			for p, why := range m {
				unwatchable[p] = why
			}
		}
		out = append(out, compareRoot(b, a, unwatchable)...)
	}
	for p, why := range unwatchable {
		w.Unwatchable = append(w.Unwatchable, Unwatchable{Path: p, Reason: why})
	}
	slices.SortFunc(w.Unwatchable, func(x, y Unwatchable) int { return strings.Compare(x.Path, y.Path) })
	return w, out
}

// unknownEntry stands for a root that could not be stat'ed (nil when it
// does not exist).
func unknownEntry(r *root) *snapshot.Entry {
	if r.err == "" {
		return nil
	}
	return &snapshot.Entry{Path: r.Path.Path, Type: snapshot.Unknown, UID: -1, GID: -1, Err: r.err}
}

// compareRoot compares one root's two records.
func compareRoot(b, a *root, unwatchable map[string]string) []Change {
	paths := make([]string, 0, len(b.entries)+len(a.entries))
	for p := range b.entries {
		paths = append(paths, p)
	}
	for p := range a.entries {
		if b.entries[p] == nil {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var out []Change
	for _, p := range paths {
		eb, ea := b.entries[p], a.entries[p]
		switch {
		case eb != nil && ea != nil:
			if eb.Err != "" || ea.Err != "" {
				if eb.Err != "" && ea.Err != "" {
					unwatchable[p] = eb.Err
					continue
				}
				out = append(out, Change{Path: p, Kind: diff.Changed, Aspects: []Aspect{AspectStat}, Before: eb, After: ea})
				continue
			}
			if as := aspects(eb, ea, b.listed[p] && a.listed[p]); len(as) > 0 {
				out = append(out, Change{Path: p, Kind: diff.Changed, Aspects: as, Before: eb, After: ea})
			}
		case eb != nil && a.knows(p):
			out = append(out, Change{Path: p, Kind: diff.Removed, Aspects: []Aspect{}, Before: eb})
		case ea != nil && b.knows(p):
			out = append(out, Change{Path: p, Kind: diff.Added, Aspects: []Aspect{}, After: ea})
		}
	}
	return out
}

// knows reports whether the record can tell that p is absent: p is the
// root, or its directory was listed completely, or its directory is known
// to be absent.
func (r *root) knows(p string) bool {
	for p != r.Path.Path {
		dir := filepath.Dir(p)
		if dir == p {
			return false
		}
		if r.listed[dir] {
			return true
		}
		if r.entries[dir] != nil {
			return false // there, but not listed completely
		}
		p = dir
	}
	return true
}

// aspects lists what differs between two stats of one path. A directory
// listed completely on both sides is not changed by its times or size
// alone: what was added to it or removed from it is listed on its own.
func aspects(b, a *snapshot.Entry, listed bool) []Aspect {
	var out []Aspect
	add := func(cond bool, what Aspect) {
		if cond {
			out = append(out, what)
		}
	}
	dirListed := listed && b.Type == snapshot.Dir && a.Type == snapshot.Dir
	add(b.Type != a.Type, AspectType)
	add(b.Perm != a.Perm && a.Type != snapshot.Symlink, AspectMode)
	add(b.UID >= 0 && a.UID >= 0 && (b.UID != a.UID || b.GID != a.GID), AspectOwner)
	add(b.Target != a.Target, AspectTarget)
	add(b.Size != a.Size && !dirListed, AspectSize)
	add(b.MTime != a.MTime && !dirListed, AspectMTime)
	add(b.CTime != a.CTime && !dirListed, AspectCTime)
	add(b.Ino != 0 && a.Ino != 0 && (b.Ino != a.Ino || b.Dev != a.Dev), AspectInode)
	add(b.Nlink != a.Nlink, AspectLinks)
	add(b.Rdev != a.Rdev, AspectDevice)
	return out
}
