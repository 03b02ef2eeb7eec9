package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/diffgate/diffgate/internal/oneline"
)

// PathsOptions tune Paths.
type PathsOptions struct {
	// Deep lists paths (among those given) below which everything is
	// recorded too, as Take would: a removed or replaced directory.
	Deep []string
	// NoXattr skips extended attributes.
	NoXattr bool
	// SkipOverlayXattrs leaves overlayfs's own attributes (trusted.overlay.*,
	// user.overlay.*) out of Entry.Xattr: an overlay's upper layer carries
	// them on every copied-up entry, the merged view never shows them.
	SkipOverlayXattrs bool
	// OverlayXattrPrefix, when set, narrows SkipOverlayXattrs to the names
	// starting with it: the name space the overlay was mounted with
	// ("trusted.overlay." as root, "user.overlay." with userxattr); the
	// other one holds the script's own attributes.
	OverlayXattrPrefix string
}

// Paths records exactly the given entries below root (relative,
// '/'-separated paths), each as Take would record it, and for the paths in
// opt.Deep everything below them as well. A path that does not exist is left
// out. Every parent is opened relative to its own parent with O_NOFOLLOW, so
// a symlink among the parents is never followed: the path is then recorded
// as missing. The cost is proportional to the number of paths, not to the
// size of the tree: this is how a staged run records only what it touched.
// The manifest's Self is root's own entry.
func Paths(ctx context.Context, root string, rels []string, opt PathsOptions) (*Manifest, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrRoot, root, oneline.Reason(err))
	}
	self := &Entry{Path: ".", UID: -1, GID: -1}
	start := time.Now()
	d, err := openRoot(abs, self)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrRoot, root, oneline.Reason(err))
	}
	defer d.close()
	sc := newScratch()
	sc.xattr = xattrSupported && !opt.NoXattr
	sc.noOverlay = opt.SkipOverlayXattrs
	sc.overlayPrefix = opt.OverlayXattrPrefix
	if sc.xattr {
		d.xattrs(self, sc)
	}
	deep := make(map[string]bool, len(opt.Deep))
	for _, p := range opt.Deep {
		deep[p] = true
	}
	m := &Manifest{Root: abs, CreatedAt: start, Self: self}
	seen := make(map[string]bool, len(rels))
	for _, rel := range rels {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if rel == "" || rel == "." || seen[rel] {
			continue
		}
		seen[rel] = true
		e, ok := recordPath(d, rel, sc)
		if !ok {
			continue
		}
		m.Entries = append(m.Entries, e)
		if deep[rel] && e.Type == Dir && e.Err == "" {
			sub, err := Take(ctx, abs+"/"+rel, Options{KeepRoot: true, NoXattr: opt.NoXattr, Workers: 1})
			if err != nil {
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					return nil, err
				}
				m.Entries[len(m.Entries)-1].Err = "cannot list directory: " + oneline.Reason(err)
				continue
			}
			for _, s := range sub.Entries {
				if seen[rel+"/"+s.Path] {
					continue
				}
				s.Path = rel + "/" + s.Path
				seen[s.Path] = true
				m.Entries = append(m.Entries, s)
			}
		}
	}
	m.Sort()
	return m, nil
}

// recordPath records the entry rel below the open root d; ok is false when
// it does not exist (or a parent is not a directory).
func recordPath(root dirHandle, rel string, sc *scratch) (Entry, bool) {
	dir, base := SplitPath(rel)
	name := toZname(base)
	d := root
	if dir != "" {
		for _, part := range strings.Split(dir, "/") {
			sub, err := d.openSub(toZname(part))
			if d != root {
				d.close()
			}
			if err != nil {
				return Entry{}, false
			}
			d = sub
		}
		defer d.close()
	}
	e := Entry{Path: rel, UID: -1, GID: -1}
	if err := d.lstat(name, &e); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Entry{}, false
		}
		e.Type, e.Err = Unknown, describe(err)
		return e, true
	}
	switch e.Type {
	case File:
		if _, err := d.hashFile(name, &e, sc, -1, 0, nil); err != nil {
			if errors.Is(err, errNotRegular) {
				e.Err = "changed during the walk"
			} else {
				e.Err = "cannot read: " + describe(err)
			}
		}
	case Symlink:
		if tgt, err := d.readlink(name); err != nil {
			e.Err = describe(err)
		} else {
			e.Target = tgt
		}
	case Dir:
		sub, err := d.openSub(name)
		if err != nil {
			e.Err = "cannot open directory: " + describe(err)
			break
		}
		if sc.xattr {
			sub.xattrs(&e, sc)
		}
		sub.close()
	}
	return e, true
}

// IsOverlayXattr reports whether name is one of overlayfs's own extended
// attributes (trusted.overlay.* as root, user.overlay.* with userxattr).
func IsOverlayXattr(name string) bool {
	return strings.HasPrefix(name, "trusted.overlay.") || strings.HasPrefix(name, "user.overlay.")
}
