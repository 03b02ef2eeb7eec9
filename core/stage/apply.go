package stage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/oneline"
)

// Conflict is a path that is no longer as the run's before-state recorded.
type Conflict struct {
	Path   string
	Reason string
}

// ConflictError is returned by Apply when any path to apply changed in the
// workspace since the run's before-state: nothing was applied.
type ConflictError struct{ Conflicts []Conflict }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("stage: %d conflicting path(s), nothing applied", len(e.Conflicts))
}

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// All is every change of the run, as its record holds them (nil: the
	// changes given to Apply are all of them). A directory the chosen
	// changes need that the run made is applied with them; a removed
	// directory must not hold a change of the run that is not chosen.
	All []diff.Change
	// Resume completes an apply of the same changes that was started and
	// interrupted: a path may then also be as the run left it (already
	// applied).
	Resume bool
	// Start, when set, is called once every path was checked, before the
	// first write, with the paths that will be applied (the caller records
	// the apply as started); an error stops Apply with nothing written.
	Start func(paths []string) error
	// AfterOp, when set, is called after each operation with the number
	// done so far (tests use it to kill an apply midway).
	AfterOp func(done int)
}

// FromRecord returns the stage of a recorded run: its id, workspace and
// mechanism as the run's record (the history) holds them. Nothing is read
// from the stage directory but its owner (root or not: which name space
// holds the overlay's own attributes): a script that could write there (a
// --writable cache directory, or no containment) cannot steer where or
// what apply writes; the staged files' contents are checked against the
// recorded hashes.
func FromRecord(base, id, workspace string, mech Mechanism) (*Stage, error) {
	dir, err := stageDir(base, id)
	if err != nil {
		return nil, err
	}
	if mech != Overlay && mech != Copy {
		return nil, fmt.Errorf("stage: unknown mechanism %q", mech)
	}
	if !filepath.IsAbs(workspace) {
		return nil, fmt.Errorf("stage: workspace %q is not an absolute path", workspace)
	}
	// The overlay's own attributes are in the name space of the stage's
	// maker: user.overlay.* unless it was root (only root can make a
	// root-owned stage directory; a script cannot forge that).
	maker := ownerUID(dir)
	if maker < 0 {
		maker = os.Geteuid()
	}
	return &Stage{ID: id, Dir: dir, Workspace: filepath.Clean(workspace), Mechanism: mech, UserXattr: maker != 0}, nil
}

// validPath refuses a change path that could name anything but an entry
// below the workspace: empty, absolute, with an empty, "." or ".."
// component, or a NUL byte.
func validPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("stage: the run's record holds an invalid path %q", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("stage: the run's record holds an invalid path %q", p)
		}
	}
	return nil
}

// newDir says whether c makes a directory where the before-state had none.
func newDir(c *diff.Change) bool {
	return c.After != nil && c.After.Type == snapshot.Dir && (c.Before == nil || c.Before.Type != snapshot.Dir)
}

// goneDir says whether c removes or replaces a directory.
func goneDir(c *diff.Change) bool {
	return c.Before != nil && c.Before.Type == snapshot.Dir && (c.After == nil || c.After.Type != snapshot.Dir)
}

// Apply writes changes (a subset of the run's changes, opt.All) into the
// workspace and returns the applied paths. It first checks every path it
// will touch: each path against its before-state (Change.Before, nil
// meaning absent), every parent (a directory, not a symlink), and every
// entry below a directory it removes (each must be a change it applies);
// any difference returns a *ConflictError and nothing is written. Every
// write goes through a descriptor of the workspace directory, never
// following a symlink, each file to a new unnamed (or randomly named) file
// renamed into place, its content checked against the recorded hash. What
// is applied comes only from changes: the stage directory gives the staged
// files' bytes and extended attributes, nothing else. Operations are
// idempotent: an apply interrupted after opt.Start completes with
// opt.Resume.
func (s *Stage) Apply(ctx context.Context, changes []diff.Change, opt ApplyOptions) ([]string, error) {
	byPath, chosen, err := choose(changes, opt.All)
	if err != nil {
		return nil, err
	}
	list := sortedPaths(chosen)
	root, err := openWorkspace(s.Workspace)
	if err != nil {
		return nil, err
	}
	defer root.close()
	conflicts, err := s.check(ctx, root, list, chosen, byPath, opt.Resume)
	if err != nil {
		return nil, err
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Conflicts: conflicts}
	}
	ops, err := plan(list, chosen)
	if err != nil {
		return nil, err
	}
	src, err := openRoot(s.Root())
	if err != nil {
		return nil, fmt.Errorf("stage: the staged changes: %v", oneline.First(err.Error()))
	}
	defer src.close()
	// The staged files are as reviewed before anything is written.
	if err := s.verifyFiles(src, ops); err != nil {
		return nil, err
	}
	if opt.Start != nil {
		if err := opt.Start(list); err != nil {
			return nil, err
		}
	}
	if err := s.doAll(ctx, root, src, ops, opt.AfterOp); err != nil {
		return nil, err
	}
	return list, nil
}

// choose indexes all (nil: changes are all of them) by path, each path
// valid, and returns the chosen changes (each one of all) with the
// directories the run made that a chosen path lies in.
func choose(changes, all []diff.Change) (byPath, chosen map[string]*diff.Change, err error) {
	if all == nil {
		all = changes
	}
	byPath = make(map[string]*diff.Change, len(all))
	for i := range all {
		c := &all[i]
		if c.Path != diff.RootPath {
			if err := validPath(c.Path); err != nil {
				return nil, nil, err
			}
		}
		byPath[c.Path] = c
	}
	chosen = make(map[string]*diff.Change, len(changes))
	for i := range changes {
		c := &changes[i]
		if byPath[c.Path] == nil {
			return nil, nil, fmt.Errorf("stage: %q is not a change of the run", c.Path)
		}
		chosen[c.Path] = byPath[c.Path]
	}
	addNewParents(chosen, byPath)
	return byPath, chosen, nil
}

// addNewParents adds to chosen the directories the run made that a chosen
// path lies in.
func addNewParents(chosen, byPath map[string]*diff.Change) {
	for p := range keys(chosen) {
		for d := p; ; {
			d, _ = snapshot.SplitPath(d)
			if d == "" {
				break
			}
			if c := byPath[d]; c != nil && newDir(c) {
				chosen[d] = c
			}
		}
	}
}

// sortedPaths returns chosen's paths, sorted.
func sortedPaths(chosen map[string]*diff.Change) []string {
	list := make([]string, 0, len(chosen))
	for p := range chosen {
		list = append(list, p)
	}
	slices.Sort(list)
	return list
}

// openWorkspace opens the workspace to apply into; one that is gone or no
// longer a directory is a *ConflictError.
func openWorkspace(ws string) (*wsRoot, error) {
	root, err := openRoot(ws)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &ConflictError{Conflicts: []Conflict{{diff.RootPath, "the workspace was removed since the run"}}}
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) {
			return nil, &ConflictError{Conflicts: []Conflict{{diff.RootPath, "the workspace is no longer a directory (a symlink?)"}}}
		}
		return nil, fmt.Errorf("stage: workspace: %v", oneline.First(err.Error()))
	}
	return root, nil
}

// verifyFiles checks every staged file ops write against its review.
func (s *Stage) verifyFiles(src *wsRoot, ops []op) error {
	for i := range ops {
		if o := &ops[i]; o.Kind == "file" {
			if err := s.verify(src, o); err != nil {
				return fmt.Errorf("stage: %s: %v; nothing applied", o.Path, err)
			}
		}
	}
	return nil
}

// doAll carries out ops in order, stopping at a cancelled ctx; afterOp,
// when set, is called after each with the number done so far.
func (s *Stage) doAll(ctx context.Context, root, src *wsRoot, ops []op, afterOp func(int)) error {
	for i := range ops {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stage: apply interrupted (run it again to complete it): %v", err)
		}
		if err := s.do(root, src, &ops[i]); err != nil {
			return fmt.Errorf("stage: apply %s %s: %v (run it again to complete it)", ops[i].Kind, ops[i].Path, oneline.First(err.Error()))
		}
		if afterOp != nil {
			afterOp(i + 1)
		}
	}
	return nil
}

// keys returns a copy of m's keys as a set, to range over while m grows.
func keys(m map[string]*diff.Change) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// check compares every path Apply will touch with its before-state (or,
// resuming, its after-state), reading the workspace for exactly those
// paths, their parents and the trees below removed directories.
func (s *Stage) check(ctx context.Context, root *wsRoot, list []string, chosen, byPath map[string]*diff.Change, resume bool) ([]Conflict, error) {
	out, read, deep := toRead(root, list, chosen)
	now, err := snapshot.Paths(ctx, s.Workspace, read, snapshot.PathsOptions{Deep: deep})
	if err != nil {
		return nil, fmt.Errorf("stage: read workspace: %v", oneline.First(err.Error()))
	}
	now.Root = s.Workspace
	before := differ(s.Workspace, read, chosen, now, func(c *diff.Change) *snapshot.Entry { return c.Before })
	var after map[string]diff.Kind
	if resume {
		after = differ(s.Workspace, read, chosen, now, func(c *diff.Change) *snapshot.Entry { return c.After })
	}
	nowDirs := dirsOf(now)
	for _, p := range read {
		k, ok := before[p]
		if !ok {
			continue
		}
		_, differsAfter := after[p]
		if reason := staleReason(chosen[p], k, resume, !differsAfter, nowDirs[p]); reason != "" {
			out = append(out, Conflict{p, reason})
		}
	}
	if rootModeChanged(chosen[diff.RootPath], now.Self, resume) {
		out = append(out, Conflict{diff.RootPath, "its mode changed since the run"})
	}
	// Below a removed directory, everything goes: each entry must be a
	// change being applied.
	for _, e := range now.Entries {
		if chosen[e.Path] == nil {
			out = append(out, Conflict{e.Path, belowRemovedReason(byPath[e.Path] != nil)})
		}
	}
	slices.SortFunc(out, func(a, b Conflict) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// toRead returns the paths of list to read from the workspace (deep: the
// directories the apply removes, to read with the tree below them) and the
// conflicts found without reading them: a parent that is no longer a
// directory, a before-state that is unknown.
func toRead(root *wsRoot, list []string, chosen map[string]*diff.Change) (out []Conflict, read, deep []string) {
	for _, p := range list {
		c := chosen[p]
		if p == diff.RootPath {
			continue // its mode is set (checked below), nothing is written through it
		}
		if err := parentsOK(root, p, chosen); err != nil {
			out = append(out, Conflict{p, err.Error()})
			continue
		}
		if c.Before != nil && c.Before.Unreadable() {
			out = append(out, Conflict{p, "its before-state is unknown: " + c.Before.Err})
			continue
		}
		read = append(read, p)
		if goneDir(c) {
			deep = append(deep, p)
		}
	}
	return out, read, deep
}

// differ compares the read paths' recorded entries (side of each chosen
// change) with now, the workspace as it is, and returns each path that
// differs with how.
func differ(ws string, read []string, chosen map[string]*diff.Change, now *snapshot.Manifest, side func(*diff.Change) *snapshot.Entry) map[string]diff.Kind {
	want := &snapshot.Manifest{Root: ws}
	for _, p := range read {
		if e := side(chosen[p]); e != nil {
			want.Entries = append(want.Entries, *e)
		}
	}
	want.Sort()
	got := &snapshot.Manifest{Root: ws}
	for _, e := range now.Entries {
		if chosen[e.Path] != nil {
			got.Entries = append(got.Entries, e)
		}
	}
	out := map[string]diff.Kind{}
	for _, d := range diff.Compare(want, got, diff.Options{Root: ws}) {
		out[d.Path] = d.Kind
	}
	return out
}

// dirsOf returns the paths of m's directories.
func dirsOf(m *snapshot.Manifest) map[string]bool {
	out := map[string]bool{}
	for _, e := range m.Entries {
		if e.Type == snapshot.Dir {
			out[e.Path] = true
		}
	}
	return out
}

// staleReason says why c's path, which differs from its before-state by k,
// is a conflict, or "" when it is not one: resuming, a path that is as the
// run left it (asAfter) was applied already, one removed but not made
// again yet or a directory made (nowDir) but its mode not set yet are
// partway.
func staleReason(c *diff.Change, k diff.Kind, resume, asAfter, nowDir bool) string {
	if resume && asAfter {
		return "" // applied already
	}
	if resume && k == diff.Removed && c.After != nil && c.After.Type != c.Before.Type {
		return "" // removed, not made again yet
	}
	if resume && c.After != nil && c.After.Type == snapshot.Dir && nowDir {
		return "" // made, its mode not set yet
	}
	switch k {
	case diff.Added:
		return "created since the run"
	case diff.Removed:
		return "removed since the run"
	}
	return "changed since the run"
}

// rootModeChanged says whether the workspace root's mode (self, as it is
// now) is no longer c's before-state (resuming: nor its after-state).
func rootModeChanged(c *diff.Change, self *snapshot.Entry, resume bool) bool {
	if c == nil || c.Before == nil || self == nil {
		return false
	}
	perm := self.Perm
	return perm != c.Before.Perm && (!resume || c.After == nil || perm != c.After.Perm)
}

// belowRemovedReason says why an entry below a directory the apply
// removes, not itself applied, is a conflict: ofRun, it is a change of the
// run that was not chosen; else it was created since the run.
func belowRemovedReason(ofRun bool) string {
	if ofRun {
		return "in a folder the run removed, but its own removal is not among the changes applied"
	}
	return "created since the run, in a folder the run removed"
}

// parentsOK checks the directories on the way to p: each must be a
// directory in the workspace (not a symlink, not removed), down to one the
// apply makes itself or removes (checked as a path of its own, with the
// tree below it).
func parentsOK(root *wsRoot, p string, chosen map[string]*diff.Change) error {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		if c := chosen[d]; c != nil && (newDir(c) || goneDir(c) || c.Before == nil) {
			// Checked as a path of its own (resuming: as before or as
			// after), and the tree below it with it.
			return nil
		}
		isDir, err := root.isDir(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%s was removed since the run", d)
		case err != nil || !isDir:
			return fmt.Errorf("%s is not a directory in the workspace (a symlink?)", d)
		}
	}
	return nil
}

// op is one operation of an apply.
type op struct {
	Kind   string // remove, mkdir, file, symlink, node, link, chmod
	Path   string
	Perm   uint32
	MTime  int64
	SHA256 string
	// Target is a symlink's target, or for a link the path (in the
	// workspace) of the file it is another name of.
	Target string
	// Node is the type of a node (FIFO, socket, device), Rdev a device's
	// number.
	Node snapshot.Type
	Rdev uint64
	// Owner is the entry's uid and gid, set when not the applier's own
	// (as root: a normal user's chown of it fails, an error).
	Owner *[2]int64
	after *snapshot.Entry // a file's recorded after-state
}

// owner returns a's owner when it is not the applier's, nil otherwise (or
// when unknown).
func owner(a *snapshot.Entry) *[2]int64 {
	if a.UID < 0 || a.GID < 0 || (a.UID == int64(os.Geteuid()) && a.GID == int64(os.Getegid())) {
		return nil
	}
	return &[2]int64{a.UID, a.GID}
}

// plan turns the chosen changes into operations: removals deepest first,
// new directories parents first, files, symlinks and nodes, further names
// of a file applied (hard links), then directory modes deepest first (a
// directory made read-only last).
func plan(list []string, chosen map[string]*diff.Change) ([]op, error) {
	var rm, mk, files, links, modes []op
	// The first applied name of each staged inode with several names: the
	// others become links to it, as in the stage.
	firstName := map[[2]uint64]string{}
	for _, p := range list {
		c := chosen[p]
		a, b := c.After, c.Before
		if c.Path == diff.RootPath {
			if a != nil && b != nil && a.Type == snapshot.Dir && b.Type == snapshot.Dir && a.Perm != b.Perm {
				modes = append(modes, op{Kind: "chmod", Path: c.Path, Perm: a.Perm})
			}
			continue
		}
		if a == nil {
			rm = append(rm, op{Kind: "remove", Path: c.Path})
			continue
		}
		if b != nil && b.Type != a.Type {
			rm = append(rm, op{Kind: "remove", Path: c.Path})
		}
		switch a.Type {
		case snapshot.Dir:
			if b == nil || b.Type != snapshot.Dir {
				mk = append(mk, op{Kind: "mkdir", Path: c.Path})
			}
			modes = append(modes, op{Kind: "chmod", Path: c.Path, Perm: a.Perm, Owner: owner(a)})
		case snapshot.File:
			if a.SHA256 == "" || a.Err != "" {
				return nil, fmt.Errorf("stage: %s: the staged file's content is unknown, it cannot be applied", c.Path)
			}
			if a.Nlink > 1 && a.Ino != 0 {
				key := [2]uint64{a.Dev, a.Ino}
				if first, ok := firstName[key]; ok && chosen[first].After.SHA256 == a.SHA256 {
					links = append(links, op{Kind: "link", Path: c.Path, Target: first})
					continue
				}
				firstName[key] = c.Path
			}
			files = append(files, op{Kind: "file", Path: c.Path, Perm: a.Perm, MTime: a.MTime, SHA256: a.SHA256, Owner: owner(a), after: a})
		case snapshot.Symlink:
			files = append(files, op{Kind: "symlink", Path: c.Path, Target: a.Target, Owner: owner(a)})
		case snapshot.FIFO, snapshot.Socket, snapshot.Char, snapshot.Block:
			files = append(files, op{Kind: "node", Path: c.Path, Node: a.Type, Perm: a.Perm, Rdev: a.Rdev, MTime: a.MTime, Owner: owner(a)})
		default:
			return nil, fmt.Errorf("stage: %s: a %s cannot be applied", c.Path, a.Type)
		}
	}
	desc := func(a, b op) int { return strings.Compare(b.Path, a.Path) }
	asc := func(a, b op) int { return strings.Compare(a.Path, b.Path) }
	slices.SortFunc(rm, desc)
	slices.SortFunc(mk, asc)
	slices.SortFunc(files, asc)
	slices.SortFunc(links, asc)
	slices.SortFunc(modes, desc)
	return slices.Concat(rm, mk, files, links, modes), nil
}

// verify checks that the staged file of o is a regular file with the
// reviewed content. One whose size, modification and change times and
// inode are those the run recorded is taken as unchanged (no write can
// leave its change time as it was): its content is hashed as it is copied
// anyway. Any other is hashed now.
func (s *Stage) verify(src *wsRoot, o *op) error {
	f, err := src.openFile(o.Path)
	if err != nil {
		return fmt.Errorf("the staged file: %v", oneline.First(err.Error()))
	}
	defer f.Close()
	if a := o.after; a != nil && a.CTime != 0 && a.Ino != 0 && sameFile(f, a) {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	h := sha256.New()
	if err := hashData(f, fi.Size(), h); err != nil {
		return err
	}
	if hex.EncodeToString(h.Sum(nil)) != o.SHA256 {
		return errors.New("the staged file changed since it was reviewed")
	}
	// Touched since the record: its attributes (which apply copies) must be
	// the reviewed ones too.
	if a := o.after; a != nil && a.Xattr != "" {
		if x := snapshot.FileXattr(f, true); x != "" && x != a.Xattr && snapshot.FileXattr(f, false) != a.Xattr {
			return errors.New("the staged file's extended attributes changed since it was reviewed")
		}
	}
	return nil
}

// do carries out one operation; each is idempotent. An operation refused
// in a read-only folder of the workspace (the staged script made it
// writable, wrote in it, and made it read-only again) is done with the
// folder writable for it, then its mode restored.
func (s *Stage) do(root, src *wsRoot, o *op) error {
	err := s.do1(root, src, o)
	if (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EPERM)) && o.Kind != "chmod" && o.Path != diff.RootPath {
		err = root.writableParent(o.Path, func() error { return s.do1(root, src, o) })
	}
	return err
}

func (s *Stage) do1(root, src *wsRoot, o *op) error {
	switch o.Kind {
	case "remove":
		return root.remove(o.Path)
	case "mkdir":
		return root.mkdir(o.Path)
	case "chmod":
		return root.chmodDir(o.Path, o.Perm&0o7777, o.Owner)
	case "symlink":
		return root.symlink(o.Path, o.Target, o.Owner)
	case "node":
		return root.node(o.Path, o.Node, o.Perm, o.Rdev, o.MTime, o.Owner)
	case "link":
		return root.link(o.Path, o.Target)
	case "file":
		in, err := src.openFile(o.Path)
		if err != nil {
			return err
		}
		defer in.Close()
		return root.writeFile(o.Path, o.MTime, func(f *os.File) error {
			h := sha256.New()
			if _, err := copyData(f, in, h); err != nil {
				return err
			}
			if hex.EncodeToString(h.Sum(nil)) != o.SHA256 {
				return errors.New("the staged file changed since it was reviewed")
			}
			// The owner before the mode: a chown clears setuid and setgid.
			if o.Owner != nil {
				if err := f.Chown(int(o.Owner[0]), int(o.Owner[1])); err != nil {
					return err
				}
			}
			if err := f.Chmod(fs.FileMode(o.Perm&0o777) | modeBits(o.Perm)); err != nil {
				return err
			}
			// After the mode: an ACL sets the group bits the mode shows.
			// The overlay's own attributes are never applied.
			return copyXattrs(filepath.Join(s.Root(), filepath.FromSlash(o.Path)), f, s.ownXattr)
		})
	}
	return fmt.Errorf("unknown operation %q", o.Kind)
}

// modeBits maps setuid, setgid and sticky to Go's mode bits.
func modeBits(p uint32) fs.FileMode {
	var m fs.FileMode
	if p&snapshot.ModeSetuid != 0 {
		m |= fs.ModeSetuid
	}
	if p&snapshot.ModeSetgid != 0 {
		m |= fs.ModeSetgid
	}
	if p&snapshot.ModeSticky != 0 {
		m |= fs.ModeSticky
	}
	return m
}
