package stage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/oneline"
)

// Delta is what a staged run changed, as two manifests core/diff compares.
type Delta struct {
	// Before holds the workspace's entries for the touched paths (Partial),
	// or is nil for a copy stage (the run's before-snapshot is the before
	// side).
	Before *snapshot.Manifest
	// After holds the stage's entries for the touched paths (Partial), or
	// the whole copy. Its Root is the workspace's path, as the entries will
	// be once applied.
	After *snapshot.Manifest
	// Partial says Before and After hold only the touched paths.
	Partial bool
	// Removed lists the paths the overlay's whiteouts remove, and Opaque
	// the upper entries that hide a lower directory whole (everything
	// below it is gone): opaque directories, and each file or symlink that
	// replaced a lower directory (it leaves no whiteout for what was below).
	Removed, Opaque []string
}

// Upper is what the upper layer of an overlay holds.
type Upper struct {
	// Paths lists every entry of the upper layer that is not a whiteout,
	// parents before children.
	Paths []string
	// Removed lists the whiteouts' paths; Opaque the opaque directories.
	Removed, Opaque []string
	// NonDirs lists the entries that are not directories: each hides
	// whatever the lower layer holds at its path, a whole directory
	// included, with no whiteout for what lies below it.
	NonDirs []string
}

// ScanUpper lists the upper layer at dir: its entries, its whiteouts (a
// character device 0/0) and its opaque directories (overlayfs's attributes
// named with xattrPrefix, Stage.OverlayXattrPrefix). It fails on an entry
// overlayfs would read in a way the stage does not model (a redirected or
// metacopy entry: the stage mounts with both off, so one means the upper
// layer was not made by this package).
func ScanUpper(dir, xattrPrefix string) (*Upper, error) {
	u := &Upper{}
	var scan func(rel string) error
	scan = func(rel string) error {
		abs := dir
		if rel != "" {
			abs = filepath.Join(dir, filepath.FromSlash(rel))
		}
		ents, err := os.ReadDir(abs)
		if err != nil {
			if rel != "" && errors.Is(err, fs.ErrPermission) {
				// A directory the script locked: recorded with the error
				// (snapshot.Paths), unknown below, as a walk would have it.
				return nil
			}
			return fmt.Errorf("stage: read upper layer: %v", oneline.First(err.Error()))
		}
		for _, e := range ents {
			p := e.Name()
			if rel != "" {
				p = rel + "/" + p
			}
			full := filepath.Join(abs, e.Name())
			kind, err := classify(full, e.Type(), xattrPrefix)
			if err != nil {
				return fmt.Errorf("stage: upper layer %s: %v", p, oneline.First(err.Error()))
			}
			switch kind {
			case whiteout:
				u.Removed = append(u.Removed, p)
				continue
			case opaqueDir:
				u.Opaque = append(u.Opaque, p)
			default:
				if !e.IsDir() {
					u.NonDirs = append(u.NonDirs, p)
				}
			}
			u.Paths = append(u.Paths, p)
			if e.IsDir() {
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
	return u, nil
}

type upperKind int

const (
	plain upperKind = iota
	whiteout
	opaqueDir
)

// Read returns what the staged run changed. For an overlay stage it costs
// in proportion to the upper layer: the upper layer is listed, its entries
// recorded, and their counterparts in the workspace (the untouched lower
// layer) recorded too, with everything below a removed or replaced
// directory. For a copy stage the whole copy is walked.
func (s *Stage) Read(ctx context.Context) (*Delta, error) {
	if s.Mechanism == Copy {
		after, err := snapshot.Take(ctx, s.Copy(), snapshot.Options{KeepRoot: true})
		if err != nil {
			return nil, fmt.Errorf("stage: read copy: %v", oneline.First(err.Error()))
		}
		after.Root = s.Workspace
		return &Delta{After: after}, nil
	}
	u, err := ScanUpper(s.Upper(), s.OverlayXattrPrefix())
	if err != nil {
		return nil, err
	}
	after, err := snapshot.Paths(ctx, s.Upper(), u.Paths, snapshot.PathsOptions{SkipOverlayXattrs: true, OverlayXattrPrefix: s.OverlayXattrPrefix()})
	if err != nil {
		return nil, fmt.Errorf("stage: read upper layer: %v", oneline.First(err.Error()))
	}
	touched := append(slices.Clone(u.Paths), u.Removed...)
	deep := slices.Concat(u.Removed, u.Opaque, u.NonDirs)
	before, err := snapshot.Paths(ctx, s.Workspace, touched, snapshot.PathsOptions{Deep: deep})
	if err != nil {
		return nil, fmt.Errorf("stage: read workspace: %v", oneline.First(err.Error()))
	}
	// A file or symlink over a lower directory: everything below it is
	// gone, as below an opaque directory.
	opaque := u.Opaque
	if len(u.NonDirs) > 0 {
		nonDir := make(map[string]bool, len(u.NonDirs))
		for _, p := range u.NonDirs {
			nonDir[p] = true
		}
		opaque = slices.Clone(u.Opaque)
		for i := range before.Entries {
			if e := &before.Entries[i]; e.Type == snapshot.Dir && nonDir[e.Path] {
				opaque = append(opaque, e.Path)
			}
		}
	}
	// The root's own entry: the upper layer's root is the overlay's root
	// (New gave it the workspace root's mode and owner), so a chmod or
	// chown of the root shows there; the rest is the workspace's.
	if after.Self != nil && before.Self != nil {
		root := *before.Self
		root.Perm, root.UID, root.GID = after.Self.Perm, after.Self.UID, after.Self.GID
		after.Self = &root
	}
	after.Root = s.Workspace
	return &Delta{Before: before, After: after, Partial: true, Removed: u.Removed, Opaque: opaque}, nil
}

// Merge returns the full after-manifest: before (a whole-workspace
// manifest, sorted) with d's changes laid over it. Nothing is read from
// disk. For a copy stage it returns d.After.
func Merge(before *snapshot.Manifest, d *Delta) *snapshot.Manifest {
	if !d.Partial {
		return d.After
	}
	cut := make(map[string]bool, len(d.Removed)+len(d.Opaque))
	for _, r := range d.Removed {
		cut[r] = true
	}
	for _, r := range d.Opaque {
		cut[r+"/"] = true // only what lies below
	}
	gone := func(p string) bool {
		if cut[p] {
			return true
		}
		for i := len(p) - 1; i > 0; i-- {
			if p[i] == '/' && (cut[p[:i]] || cut[p[:i+1]]) {
				return true
			}
		}
		return false
	}
	out := &snapshot.Manifest{Root: d.After.Root, CreatedAt: d.After.CreatedAt, Self: d.After.Self}
	out.Entries = make([]snapshot.Entry, 0, len(before.Entries)+len(d.After.Entries))
	a := d.After.Entries
	j := 0
	for i := range before.Entries {
		b := &before.Entries[i]
		for j < len(a) && a[j].Path < b.Path {
			out.Entries = append(out.Entries, a[j])
			j++
		}
		if j < len(a) && a[j].Path == b.Path {
			out.Entries = append(out.Entries, a[j])
			j++
			continue
		}
		if (len(d.Removed) > 0 || len(d.Opaque) > 0) && gone(b.Path) {
			continue
		}
		out.Entries = append(out.Entries, *b)
	}
	out.Entries = append(out.Entries, a[j:]...)
	return out
}
