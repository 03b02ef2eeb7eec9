package stage

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/snapshot"
)

// Unfaithful is a path where an overlay-staged run that took no
// before-snapshot (Shape.Delta) may have differed from a direct run, and
// why: the gate reports it as unreadable, which fails the run.
type Unfaithful struct {
	Path, Reason string
}

// CheckDelta checks d, what an overlay-staged run without a before-snapshot
// read (Read), against what a direct run would have seen; shape is the
// workspace's shape the run trusted. It returns
//   - walk: the upper layer holds a symlink: an untouched symlink elsewhere
//     may now resolve through it and lead outside (core/diff judges that
//     against the whole tree), so the caller walks the workspace and lays
//     d over it (Merge);
//   - unfaithful: the touched lower entries the overlay cannot stage as a
//     direct run would (OverlayUnfit: a hard-linked file written through
//     one name, an overlayfs attribute dropped on copy-up, a 0/0 device),
//     which the shape did not know of (the workspace changed since its
//     walk), and writes to a git directory's hooks or config that the
//     shape did not list (a direct run's script could not have made them);
//     and touched entries whose workspace counterpart changed after since
//     (the run's start): their before side is not what the script saw,
//     and apply's conflict check would take it for the before-state.
func CheckDelta(ws string, d *Delta, shape *Shape, since time.Time) (walk bool, unfaithful []Unfaithful) {
	if !d.Partial {
		return false, nil
	}
	for i := range d.After.Entries {
		if d.After.Entries[i].Type == snapshot.Symlink {
			walk = true
			break
		}
	}
	for i := range d.Before.Entries {
		e := &d.Before.Entries[i]
		if e.CTime >= since.UnixNano() {
			unfaithful = append(unfaithful, Unfaithful{Path: e.Path,
				Reason: "changed in the workspace during the run, so its before-state is not the one the script saw: run it again"})
			continue
		}
		if why := OverlayUnfit(&snapshot.Manifest{Entries: []snapshot.Entry{*e}}); why != "" {
			unfaithful = append(unfaithful, Unfaithful{Path: e.Path,
				Reason: "the overlay could not stage this as a direct run would: " + why + "; the workspace changed since its last full walk: run it again"})
		}
	}
	known := map[string]bool{}
	if shape != nil {
		for _, g := range shape.GitDirs {
			known[g] = true
		}
	}
	touched := slices.Concat(d.Removed, pathsOf(d.After))
	for _, p := range touched {
		g, ok := gitProtected(p)
		if !ok || known[g] {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(ws, filepath.FromSlash(g))); err != nil || !fi.IsDir() {
			continue // a git directory the script made: a direct run's could write it too
		}
		unfaithful = append(unfaithful, Unfaithful{Path: p,
			Reason: "a write to a git directory's hooks or config, which a direct run keeps read-only; the workspace changed since its last full walk: run it again"})
	}
	return walk, unfaithful
}

func pathsOf(m *snapshot.Manifest) []string {
	out := make([]string, len(m.Entries))
	for i := range m.Entries {
		out[i] = m.Entries[i].Path
	}
	return out
}

// gitProtected returns the .git directory p lies in when p is (or lies
// below) one of its contain.GitProtected names.
func gitProtected(p string) (string, bool) {
	parts := strings.Split(p, "/")
	for k := 0; k+1 < len(parts); k++ {
		if parts[k] != ".git" {
			continue
		}
		for _, g := range contain.GitProtected {
			if parts[k+1] == g.Name && (g.Dir || k+2 == len(parts)) {
				return strings.Join(parts[:k+1], "/"), true
			}
		}
	}
	return "", false
}

// WithLowerSymlinks returns d's before side with every symlink of the
// workspace added (those it lacks), each recorded by path, type and
// target: enough for core/diff to judge whether an untouched symlink now
// leads outside through what the script changed. Merge then gives the
// after side. It lists every directory of the workspace (no stat but for
// the symlinks' targets): only a run whose upper layer holds a symlink
// needs it (CheckDelta).
func WithLowerSymlinks(ctx context.Context, ws string, d *Delta) (*snapshot.Manifest, error) {
	var links []snapshot.Entry
	var scan func(rel string) error
	scan = func(rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := os.ReadDir(filepath.Join(ws, filepath.FromSlash(rel)))
		if err != nil {
			return nil // unreadable: the walk that made the shape found none, and a direct run would not follow links through it
		}
		for _, e := range ents {
			p := e.Name()
			if rel != "" {
				p = rel + "/" + p
			}
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				t, err := os.Readlink(filepath.Join(ws, filepath.FromSlash(p)))
				if err == nil {
					links = append(links, snapshot.Entry{Path: p, Type: snapshot.Symlink, Target: t, UID: -1, GID: -1})
				}
			case e.IsDir():
				if err := scan(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := scan(""); err != nil {
		return nil, err
	}
	out := *d.Before
	out.Entries = make([]snapshot.Entry, 0, len(d.Before.Entries)+len(links))
	out.Entries = append(out.Entries, d.Before.Entries...)
	for _, l := range links {
		if d.Before.Lookup(l.Path) == nil {
			out.Entries = append(out.Entries, l)
		}
	}
	slices.SortFunc(out.Entries, func(a, b snapshot.Entry) int { return strings.Compare(a.Path, b.Path) })
	return &out, nil
}
