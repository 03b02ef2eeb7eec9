// Package stage keeps a script's changes out of the workspace until a
// reviewer applies them: the script runs against a staged view, the changes
// are read from the stage, and Apply writes the approved ones into the
// workspace (or Discard drops them all).
//
// # Mechanisms
//
// Overlay (Linux). The workspace is the lower layer of an overlayfs mounted
// at the workspace's own path, in a mount namespace private to the
// supervisor (core/proc, Spec.Overlay); the upper layer and overlayfs's work
// directory are in the stage directory. The script sees the same path and
// the same files, but every write lands in the upper layer: new and
// modified files (copied up whole: metacopy and redirect_dir stay off),
// removals as whiteouts (a 0/0 character device), a directory that replaced
// one of the lower layer as an opaque directory (xattr user.overlay.opaque
// or trusted.overlay.opaque = "y"). As root only a mount namespace is
// needed; a normal user gets a user namespace in which their own uid and
// gid are mapped to themselves (the script never runs as uid 0 and holds no
// capability after exec) and the overlay is mounted with "userxattr"
// (kernel 5.11 or later); root's overlay keeps trusted.overlay.*, so that a
// script can set user.overlay.* attributes as in a direct run (a normal
// user's cannot: overlayfs refuses them, see docs/containment.md, "What does not hold"). The mount is
// "volatile"
// (the upper filesystem is not synced when the mount goes: a crash can lose
// a stage, never apply a corrupt one, since Apply checks each file's hash).
//
// Reading the stage costs in proportion to what the script changed: the
// upper layer is listed, and only the touched paths (plus, for a removed or
// replaced directory, the lower tree below it) are recorded on either side
// (snapshot.Paths). Read returns them as two partial manifests that
// core/diff compares unchanged; Merge lays the after side over a full
// before-manifest when the caller has one (symlink escapes are then judged
// against the whole tree, not just the touched paths).
//
// What the overlay gives up: a write that reaches the workspace's files by
// another path (another mount or bind mount of the same directory, a hard
// link from outside the workspace) bypasses the upper layer and lands in
// the workspace itself, where the staged read does not look; closing that
// is containment's job (the mount namespace is where it will hide the other
// paths). Probe mounts its trial overlay over a scratch directory,
// ProbeFor over the workspace itself; after Probe alone, a workspace on a
// filesystem overlayfs cannot use as a lower layer fails the run's start
// with a "proc: overlay:" line.
//
// Copy (fallback, every platform). Where no overlay can be mounted (no user
// namespaces, Ubuntu's AppArmor restriction on them, containers, macOS,
// Windows), or the overlay would read differently from a direct run
// (OverlayUnfit), the workspace is copied into the stage, with reflinks
// (FICLONE) where the filesystem has them and byte copies otherwise, and the
// script runs in the copy: at the workspace's own path where a mount
// namespace can bind the copy there (ProbeBind, Linux), else at the copy's
// path. What it gives up: without the namespace the script sees another
// path (a venv made there names the stage in its shebangs; the report's
// stage says run_at); the copy
// costs time and space in proportion to the workspace (near nothing for
// reflinks, a full copy otherwise); and reading it is a full walk of the
// copy, not a read of what changed.
//
// Probe decides once per run which mechanism works on this machine: it never
// assumes, it tries (see Probe).
//
// # Apply
//
// Apply takes what it writes from the run's record only (FromRecord: the
// workspace, the stage's id and mechanism; the changes with their paths,
// types, modes, hashes and targets): nothing in the stage directory steers
// it, and the staged files are checked against the recorded hashes. It
// first checks that every path it will touch is still as the run's
// before-state recorded it (content, type, mode, owner, symlink target, or
// absence), that every parent is a directory, and that everything below a
// directory it removes is a change it applies; any difference is a
// conflict and nothing is applied. It then writes through a descriptor of
// the workspace (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS): removals
// deepest first, directories, then files, symlinks, FIFOs, sockets and
// devices, then further names of a file applied (hard links, when both
// names are applied), each made under an unnamed (O_TMPFILE) or random
// name and renamed into place, keeping mode, modification time, holes, a
// file's extended attributes (not the overlay's own: only the name space
// of the stage's maker is skipped), symlink targets and owners (a normal
// user's apply of an entry owned by another fails); a read-only folder is
// made writable for the operation and then restored. Every operation is
// idempotent: the caller records the apply as started (ApplyOptions.Start,
// before the first write), and an apply killed midway is completed with
// ApplyOptions.Resume, which accepts each path as before or as applied. No
// workspace file is ever half-written.
//
// Stages live in the user's cache directory (os.UserCacheDir()/diffgate/
// stages/ID), never in the workspace. Expire removes stages older than
// MaxAge.
package stage

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/oneline"
)

// Mechanism is how a run is staged.
type Mechanism string

// Mechanisms, as in the report's stage object.
const (
	Overlay Mechanism = "overlay"
	Copy    Mechanism = "copy"
)

// MaxAge is the age after which Expire removes a stage.
const MaxAge = 14 * 24 * time.Hour

// Stage is one staged run's directory.
type Stage struct {
	// ID names the stage (its directory's name).
	ID string `json:"id"`
	// Dir is the stage directory.
	Dir string `json:"-"`
	// Workspace is the absolute path of the staged workspace.
	Workspace string `json:"workspace"`
	// Mechanism is how the run is staged.
	Mechanism Mechanism `json:"mechanism"`
	// Created is when the stage was made.
	Created time.Time `json:"created"`
	// UserXattr says the overlay is mounted with userxattr: its own
	// attributes are user.overlay.* (a normal user's stage) rather than
	// trusted.overlay.* (root's).
	UserXattr bool `json:"userxattr,omitempty"`
	// AtWorkspace says a copy stage's script runs at the workspace's own
	// path, the copy bound over it in a mount namespace (see ProbeBind);
	// otherwise it runs at the copy's path.
	AtWorkspace bool `json:"at_workspace,omitempty"`
}

// OverlayXattrPrefix is the name space of the overlay's own attributes in
// the upper layer: "user.overlay." (userxattr) or "trusted.overlay.". The
// other one is the script's, an attribute like any other (as root a
// script can set user.overlay.* in the overlay as in a direct run).
func (s *Stage) OverlayXattrPrefix() string {
	if s.UserXattr {
		return "user.overlay."
	}
	return "trusted.overlay."
}

// ownXattr says whether name is one of the stage's own attributes, never
// applied: the overlay's (none for a copy stage, whose attributes are all
// the script's).
func (s *Stage) ownXattr(name string) bool {
	return s.Mechanism == Overlay && strings.HasPrefix(name, s.OverlayXattrPrefix())
}

// Upper is the overlay's upper layer (overlay stages).
func (s *Stage) Upper() string { return filepath.Join(s.Dir, "upper") }

// Work is overlayfs's work directory (overlay stages).
func (s *Stage) Work() string { return filepath.Join(s.Dir, "work") }

// Copy is the workspace copy the script runs in (copy stages).
func (s *Stage) Copy() string { return filepath.Join(s.Dir, "copy") }

// Root is the directory the script's changes are read from: the upper
// layer or the copy.
func (s *Stage) Root() string {
	if s.Mechanism == Copy {
		return s.Copy()
	}
	return s.Upper()
}

// RunDir is the directory the script runs in: the workspace itself (under
// the overlay, or with the copy bound over it) or the copy.
func (s *Stage) RunDir() string {
	if s.Mechanism == Copy && !s.AtWorkspace {
		return s.Copy()
	}
	return s.Workspace
}

const metaFile = "stage.json"

// BaseDir returns the directory holding every stage:
// os.UserCacheDir()/diffgate/stages.
func BaseDir() (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("stage: no cache directory: %v", err)
	}
	return filepath.Join(c, "diffgate", "stages"), nil
}

// New makes an empty stage for workspace below base (BaseDir() when ""):
// for an overlay its upper and work directories, for a copy the directory
// Populate fills.
func New(base, workspace string, mech Mechanism) (*Stage, error) {
	if mech != Overlay && mech != Copy {
		return nil, fmt.Errorf("stage: unknown mechanism %q", mech)
	}
	if base == "" {
		var err error
		if base, err = BaseDir(); err != nil {
			return nil, err
		}
	}
	ws, err := filepath.Abs(workspace)
	if err == nil {
		ws, err = filepath.EvalSymlinks(ws)
	}
	if err != nil {
		return nil, fmt.Errorf("stage: workspace: %v", oneline.First(err.Error()))
	}
	if fspath.Within(base, ws) {
		return nil, fmt.Errorf("stage: the stage directory %s lies inside the workspace %s", base, ws)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("stage: %v", oneline.First(err.Error()))
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	now := time.Now()
	s := &Stage{
		ID:        now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(rnd[:]),
		Workspace: ws, Mechanism: mech, Created: now,
		// Root mounts with trusted.overlay.*: user.overlay.* stays free for
		// the script, as in a direct run.
		UserXattr: os.Geteuid() != 0,
	}
	s.Dir = filepath.Join(base, s.ID)
	if err := os.Mkdir(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("stage: %v", oneline.First(err.Error()))
	}
	dirs := []string{s.Upper(), s.Work()}
	if mech == Copy {
		dirs = nil // Populate makes the copy
	}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(s.Dir)
			return nil, fmt.Errorf("stage: %v", oneline.First(err.Error()))
		}
	}
	if mech == Overlay {
		// The upper root is the overlay's root as the script sees it.
		if err := matchRoot(s.Upper(), ws); err != nil {
			os.RemoveAll(s.Dir)
			return nil, fmt.Errorf("stage: %v", oneline.First(err.Error()))
		}
	}
	b, _ := json.Marshal(s)
	if err := writeFileSync(filepath.Join(s.Dir, metaFile), b); err != nil {
		os.RemoveAll(s.Dir)
		return nil, err
	}
	return s, nil
}

// stageDir is the directory of stage id below base (BaseDir() when ""):
// an id naming anything but one entry of base is an error.
func stageDir(base, id string) (string, error) {
	if base == "" {
		var err error
		if base, err = BaseDir(); err != nil {
			return "", err
		}
	}
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", fmt.Errorf("stage: invalid stage id %q", id)
	}
	return filepath.Join(base, id), nil
}

// Open opens the stage id below base (BaseDir() when "").
func Open(base, id string) (*Stage, error) {
	dir, err := stageDir(base, id)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("stage: no stage %s (discarded or expired)", id)
		}
		return nil, fmt.Errorf("stage: %v", oneline.First(err.Error()))
	}
	var s Stage
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("stage: %s: %v", id, oneline.First(err.Error()))
	}
	s.Dir = dir
	return &s, nil
}

// Remove removes stage id below base (BaseDir() when ""), reading nothing
// in it; a stage that is gone already is fine.
func Remove(base, id string) error {
	s, err := FromRecord(base, id, "/", Overlay)
	if err != nil {
		return err
	}
	return s.Discard()
}

// Discard removes the stage. Removing a stage that is already gone is not
// an error.
func (s *Stage) Discard() error {
	if err := removeAll(s.Dir); err != nil {
		return fmt.Errorf("stage: discard %s: %v", s.ID, oneline.First(err.Error()))
	}
	return nil
}

// Expire removes the stages below base (BaseDir() when "") made more than
// maxAge before now and returns their ids. A stage whose metadata cannot be
// read is judged by its directory's modification time.
func Expire(base string, maxAge time.Duration, now time.Time) ([]string, error) {
	if base == "" {
		var err error
		if base, err = BaseDir(); err != nil {
			return nil, err
		}
	}
	ents, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stage: %v", oneline.First(err.Error()))
	}
	var gone []string
	var errs []error
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		created := time.Time{}
		if s, err := Open(base, e.Name()); err == nil {
			created = s.Created
		} else if fi, err := e.Info(); err == nil {
			created = fi.ModTime()
		}
		if created.IsZero() || now.Sub(created) <= maxAge {
			continue
		}
		if err := removeAll(filepath.Join(base, e.Name())); err != nil {
			errs = append(errs, fmt.Errorf("stage: expire %s: %v", e.Name(), oneline.First(err.Error())))
			continue
		}
		gone = append(gone, e.Name())
	}
	return gone, errors.Join(errs...)
}

// removeAll removes dir, first making every directory below it writable (a
// script may have left read-only directories in the upper layer or copy).
func removeAll(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// writeFileSync writes path atomically (a temporary file, fsync, rename).
func writeFileSync(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("stage: %v", oneline.First(err.Error()))
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("stage: %v", oneline.First(err.Error()))
	}
	return nil
}

// OverlayUnfit says why an overlay cannot stage the workspace m records
// so that the staged run reads as a direct one ("" when it can), and the
// copy must be used instead:
//   - a file with hard links: a write copies up one name only, where a
//     direct write changes every name;
//   - an overlayfs attribute (user.overlay.*, trusted.overlay.*): overlayfs
//     hides it from the script, drops it on copy-up and may act on it;
//   - a character device 0/0: overlayfs reads it as a whiteout.
func OverlayUnfit(m *snapshot.Manifest) string {
	if m == nil {
		return ""
	}
	for i := range m.Entries {
		e := &m.Entries[i]
		switch {
		case e.Type == snapshot.File && e.Nlink > 1:
			return "the workspace holds hard links (" + e.Path + ")"
		case e.Type == snapshot.Char && e.Rdev == 0:
			return "the workspace holds a 0/0 character device, which overlayfs reads as a whiteout (" + e.Path + ")"
		case e.Xattr != "" && e.Xattr != snapshot.XattrNone:
			names, _, _ := strings.Cut(e.Xattr, "#")
			for _, n := range strings.Split(names, ",") {
				if snapshot.IsOverlayXattr(n) {
					return "the workspace holds an overlayfs attribute (" + n + " on " + e.Path + ")"
				}
			}
		}
	}
	return ""
}

// ToCopy turns a fresh overlay stage into a copy stage (before Populate).
func (s *Stage) ToCopy() error {
	if s.Mechanism == Copy {
		return nil
	}
	for _, d := range []string{s.Upper(), s.Work()} {
		if err := removeAll(d); err != nil {
			return fmt.Errorf("stage: %v", oneline.First(err.Error()))
		}
	}
	s.Mechanism = Copy
	b, _ := json.Marshal(s)
	return writeFileSync(filepath.Join(s.Dir, metaFile), b)
}
