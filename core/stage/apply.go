package stage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
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

// ErrApplied is returned by Apply for a stage that was applied already.
var ErrApplied = errors.New("stage: already applied")

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// AfterOp, when set, is called after each operation of the journal with
	// the number done so far (tests use it to kill an apply midway).
	AfterOp func(done int)
	// Partial records that changes are a chosen subset of the run's
	// changes (only the allowed ones, or the reviewer's choice).
	Partial bool
}

// Applied is the record of a completed apply.
type Applied struct {
	Paths []string  `json:"paths"`
	At    time.Time `json:"at"`
	// Partial is set when only a chosen subset was applied.
	Partial bool `json:"partial,omitempty"`
}

// State is a stage's state, as in the report's stage object.
type State string

// States of a stage that still exists (a discarded or expired stage is
// gone; the history remembers that).
const (
	StatePending          State = "pending"
	StateApplying         State = "applying" // interrupted: run Apply again (the report says pending)
	StateApplied          State = "applied"
	StatePartiallyApplied State = "partially-applied"
)

// State says whether the stage waits for a decision, was applied (wholly
// or in part), or holds an interrupted apply.
func (s *Stage) State() State {
	if a := s.AppliedRecord(); a != nil {
		if a.Partial {
			return StatePartiallyApplied
		}
		return StateApplied
	}
	if s.Pending() {
		return StateApplying
	}
	return StatePending
}

const (
	journalFile = "apply.journal"
	appliedFile = "applied.json"
)

// op is one journal operation.
type op struct {
	Kind   string `json:"op"` // remove, mkdir, file, symlink, chmod, node, link
	Path   string `json:"path"`
	Perm   uint32 `json:"perm,omitempty"`
	MTime  int64  `json:"mtime,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Target is a symlink's target, or for a link the path (in the
	// workspace) of the file it is another name of.
	Target string `json:"target,omitempty"`
	// Node is the type of a node (FIFO, socket, device), Rdev a device's
	// number.
	Node snapshot.Type `json:"node,omitempty"`
	Rdev uint64        `json:"rdev,omitempty"`
	// Owner is the entry's uid and gid, set (as root) when not the
	// applier's own.
	Owner *[2]int64 `json:"owner,omitempty"`
}

type journal struct {
	Ops     []op     `json:"ops"`
	Paths   []string `json:"paths"`
	Partial bool     `json:"partial,omitempty"`
}

// AppliedRecord returns the record of the stage's apply, or nil if it was
// not applied (completely).
func (s *Stage) AppliedRecord() *Applied {
	b, err := os.ReadFile(filepath.Join(s.Dir, appliedFile))
	if err != nil {
		return nil
	}
	var a Applied
	if json.Unmarshal(b, &a) != nil {
		return nil
	}
	return &a
}

// Pending reports whether an apply was started and did not complete.
func (s *Stage) Pending() bool {
	_, err := os.Lstat(filepath.Join(s.Dir, journalFile))
	return err == nil
}

// Apply writes changes (computed from this stage's Delta, all or a chosen
// subset) into the workspace. It first checks every path against its
// before-state (Change.Before, nil meaning absent): any difference returns
// a *ConflictError and nothing is applied. An apply that was interrupted is
// completed from its journal (changes is then ignored: the journal holds
// what was checked and decided).
func (s *Stage) Apply(ctx context.Context, changes []diff.Change, opt ApplyOptions) (*Applied, error) {
	if s.AppliedRecord() != nil {
		return nil, ErrApplied
	}
	jpath := filepath.Join(s.Dir, journalFile)
	var j journal
	if b, err := os.ReadFile(jpath); err == nil {
		if err := json.Unmarshal(b, &j); err != nil {
			return nil, fmt.Errorf("stage: unreadable apply journal %s: %v", jpath, oneLine(err))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("stage: %v", oneLine(err))
	} else {
		conflicts, err := s.check(ctx, changes)
		if err != nil {
			return nil, err
		}
		if len(conflicts) > 0 {
			return nil, &ConflictError{Conflicts: conflicts}
		}
		if j, err = plan(changes); err != nil {
			return nil, err
		}
		j.Partial = opt.Partial
		b, _ := json.Marshal(&j)
		if err := writeFileSync(jpath, b); err != nil {
			return nil, err
		}
	}
	for i := range j.Ops {
		if err := s.noLinkedParent(j.Ops[i].Path, nil); err != nil {
			if j.Ops[i].Kind == "remove" {
				continue // nothing of the workspace is below a non-directory
			}
			return nil, fmt.Errorf("stage: apply %s: %v; nothing more applied", j.Ops[i].Path, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("stage: apply interrupted (run it again to complete it): %v", err)
		}
		if err := s.do(&j.Ops[i]); err != nil {
			return nil, fmt.Errorf("stage: apply %s %s: %v (run it again to complete it)", j.Ops[i].Kind, j.Ops[i].Path, oneLine(err))
		}
		if opt.AfterOp != nil {
			opt.AfterOp(i + 1)
		}
	}
	rec := &Applied{Paths: j.Paths, At: time.Now().UTC(), Partial: j.Partial}
	b, _ := json.Marshal(rec)
	if err := writeFileSync(filepath.Join(s.Dir, appliedFile), b); err != nil {
		return nil, err
	}
	_ = os.Remove(jpath)
	return rec, nil
}

// check compares each path to apply with its before-state, reading the
// workspace for exactly those paths.
func (s *Stage) check(ctx context.Context, changes []diff.Change) ([]Conflict, error) {
	paths := make([]string, 0, len(changes))
	want := &snapshot.Manifest{Root: s.Workspace}
	var out []Conflict
	for i := range changes {
		c := &changes[i]
		if c.Path == diff.RootPath {
			continue // its mode is set, nothing is written through it
		}
		paths = append(paths, c.Path)
		if c.Before != nil {
			if c.Before.Unreadable() {
				out = append(out, Conflict{c.Path, "its before-state is unknown: " + c.Before.Err})
				continue
			}
			want.Entries = append(want.Entries, *c.Before)
		}
	}
	want.Sort()
	now, err := snapshot.Paths(ctx, s.Workspace, paths, snapshot.PathsOptions{})
	if err != nil {
		return nil, fmt.Errorf("stage: read workspace: %v", oneLine(err))
	}
	now.Root = s.Workspace
	apply := make(map[string]bool, len(paths))
	for _, p := range paths {
		apply[p] = true
	}
	for _, p := range paths {
		if err := s.noLinkedParent(p, apply); err != nil {
			out = append(out, Conflict{p, oneLine(err)})
			delete(apply, p) // one line per path
		}
	}
	for _, c := range diff.Compare(want, now, diff.Options{Root: s.Workspace}) {
		if !apply[c.Path] {
			continue
		}
		reason := "changed since the run"
		switch c.Kind {
		case diff.Added:
			reason = "created since the run"
		case diff.Removed:
			reason = "removed since the run"
		}
		out = append(out, Conflict{c.Path, reason})
	}
	slices.SortFunc(out, func(a, b Conflict) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// noLinkedParent fails when a directory on the way to rel inside the
// workspace is a symlink (or not a directory): a write through it would
// land outside the path that was reviewed, maybe outside the workspace.
// Directories that do not exist yet are made by the apply, which is fine,
// and so is a parent the apply itself replaces (one of replaced).
func (s *Stage) noLinkedParent(rel string, replaced map[string]bool) error {
	parts := strings.Split(rel, "/")
	p := s.Workspace
	for i, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		if replaced[strings.Join(parts[:i+1], "/")] {
			return nil
		}
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory in the workspace (a symlink?)", filepath.ToSlash(mustRel(s.Workspace, p)))
		}
	}
	return nil
}

func mustRel(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return r
}

// plan turns changes into journal operations: removals deepest first, new
// directories parents first, files and symlinks, then directory modes
// deepest first (a directory made read-only last).
func plan(changes []diff.Change) (journal, error) {
	var rm, mk, files, links, modes []op
	var j journal
	// The first applied name of each staged inode with several names:
	// the others become links to it, as in the stage.
	firstName := map[[2]uint64]string{}
	owner := func(a *snapshot.Entry) *[2]int64 {
		if a.UID < 0 || a.GID < 0 || (a.UID == int64(os.Geteuid()) && a.GID == int64(os.Getegid())) {
			return nil
		}
		return &[2]int64{a.UID, a.GID}
	}
	for i := range changes {
		c := &changes[i]
		j.Paths = append(j.Paths, c.Path)
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
				return j, fmt.Errorf("stage: %s: the staged file's content is unknown, it cannot be applied", c.Path)
			}
			if a.Nlink > 1 && a.Ino != 0 {
				key := [2]uint64{a.Dev, a.Ino}
				if first, ok := firstName[key]; ok {
					links = append(links, op{Kind: "link", Path: c.Path, Target: first})
					continue
				}
				firstName[key] = c.Path
			}
			files = append(files, op{Kind: "file", Path: c.Path, Perm: a.Perm, MTime: a.MTime, SHA256: a.SHA256, Owner: owner(a)})
		case snapshot.Symlink:
			files = append(files, op{Kind: "symlink", Path: c.Path, Target: a.Target, Owner: owner(a)})
		case snapshot.FIFO, snapshot.Socket, snapshot.Char, snapshot.Block:
			files = append(files, op{Kind: "node", Path: c.Path, Node: a.Type, Perm: a.Perm, Rdev: a.Rdev, MTime: a.MTime, Owner: owner(a)})
		default:
			return j, fmt.Errorf("stage: %s: a %s cannot be applied", c.Path, a.Type)
		}
	}
	desc := func(a, b op) int { return strings.Compare(b.Path, a.Path) }
	asc := func(a, b op) int { return strings.Compare(a.Path, b.Path) }
	slices.SortFunc(rm, desc)
	slices.SortFunc(mk, asc)
	slices.SortFunc(files, asc)
	slices.SortFunc(links, asc)
	slices.SortFunc(modes, desc)
	j.Ops = slices.Concat(rm, mk, files, links, modes)
	return j, nil
}

// do carries out one operation; each is idempotent. An entry of another
// owner (applied as root) gets its owner last, then its mode again (a
// chown clears setuid and setgid).
func (s *Stage) do(o *op) error {
	dst := filepath.Join(s.Workspace, filepath.FromSlash(o.Path))
	err := s.do1(o)
	if errors.Is(err, fs.ErrPermission) && o.Kind != "chmod" {
		// A read-only folder of the workspace (the staged script made it
		// writable, wrote, and made it read-only again): writable for the
		// operation, then as it was.
		parent := filepath.Dir(dst)
		if fi, lerr := os.Lstat(parent); lerr == nil && fi.IsDir() && fi.Mode().Perm()&0o200 == 0 {
			if os.Chmod(parent, fi.Mode().Perm()|0o700) == nil {
				err = s.do1(o)
				if cerr := os.Chmod(parent, fi.Mode()&(fs.ModePerm|fs.ModeSetgid|fs.ModeSticky)); err == nil {
					err = cerr
				}
			}
		}
	}
	if err != nil || o.Owner == nil {
		return err
	}
	if err := os.Lchown(dst, int(o.Owner[0]), int(o.Owner[1])); err != nil {
		return err
	}
	if o.Kind == "file" || o.Kind == "node" || o.Kind == "chmod" {
		return os.Chmod(dst, fs.FileMode(o.Perm&0o777)|modeBits(o.Perm))
	}
	return nil
}

func (s *Stage) do1(o *op) error {
	dst := filepath.Join(s.Workspace, filepath.FromSlash(o.Path))
	switch o.Kind {
	case "remove":
		return removeAll(dst)
	case "mkdir":
		fi, err := os.Lstat(dst)
		if err == nil && fi.IsDir() {
			return nil
		}
		if err == nil {
			if err := os.Remove(dst); err != nil {
				return err
			}
		}
		return os.MkdirAll(dst, 0o700)
	case "chmod":
		return os.Chmod(dst, fs.FileMode(o.Perm&0o777)|modeBits(o.Perm))
	case "symlink":
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		tmp := tempName(dst)
		_ = os.Remove(tmp)
		if err := os.Symlink(o.Target, tmp); err != nil {
			return err
		}
		return replace(tmp, dst)
	case "file":
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return s.copyIn(o, dst)
	case "node", "link":
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		tmp := tempName(dst)
		_ = os.Remove(tmp)
		var err error
		if o.Kind == "link" {
			err = os.Link(filepath.Join(s.Workspace, filepath.FromSlash(o.Target)), tmp)
		} else if err = mknodAt(tmp, o.Node, o.Perm, o.Rdev); err == nil {
			if err = os.Chmod(tmp, fs.FileMode(o.Perm&0o777)|modeBits(o.Perm)); err == nil && o.MTime != 0 {
				t := time.Unix(0, o.MTime)
				err = os.Chtimes(tmp, t, t)
			}
		}
		if err != nil {
			os.Remove(tmp)
			return err
		}
		return replace(tmp, dst)
	}
	return fmt.Errorf("unknown operation %q", o.Kind)
}

// copyIn copies the staged file to a temporary name beside dst, checks its
// hash against what the review saw, and renames it into place.
func (s *Stage) copyIn(o *op, dst string) error {
	src, err := os.Open(filepath.Join(s.Root(), filepath.FromSlash(o.Path)))
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := tempName(dst)
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), src)
	if err == nil && hex.EncodeToString(h.Sum(nil)) != o.SHA256 {
		err = errors.New("the staged file changed since it was reviewed")
	}
	if err == nil {
		err = f.Chmod(fs.FileMode(o.Perm&0o777) | modeBits(o.Perm))
	}
	if err == nil {
		// After the mode: an ACL sets the group bits the mode shows.
		err = copyXattrs(src.Name(), f, s.ownXattr)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && o.MTime != 0 {
		t := time.Unix(0, o.MTime)
		err = os.Chtimes(tmp, t, t)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return replace(tmp, dst)
}

// replace renames tmp over dst; a directory in the way (left by a removal
// not yet done, cannot happen in journal order) is an error.
func replace(tmp, dst string) error {
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// tempName is the temporary name beside dst an operation writes to: fixed,
// so a rerun of the journal replaces what a killed run left.
func tempName(dst string) string {
	sum := sha256.Sum256([]byte(filepath.Base(dst)))
	return filepath.Join(filepath.Dir(dst), ".diffgate-apply-"+hex.EncodeToString(sum[:8]))
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
