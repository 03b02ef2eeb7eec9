// Package snapshot records a manifest of a directory tree: every entry's type,
// permissions, owner, size, modification time and, for regular files, the
// SHA-256 of the content. Symlinks are never followed and nothing but regular
// files is ever opened.
package snapshot

import (
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Schema is the version tag of the manifest JSON written by Write.
const Schema = "diffgate.manifest/v1"

// Type is the kind of a filesystem entry.
type Type string

// Entry types.
const (
	File    Type = "file"
	Dir     Type = "dir"
	Symlink Type = "symlink"
	FIFO    Type = "fifo"
	Socket  Type = "socket"
	Block   Type = "blockdev"
	Char    Type = "chardev"
	Unknown Type = "unknown"
)

// Special permission bits, as in chmod(2).
const (
	ModeSetuid = 0o4000
	ModeSetgid = 0o2000
	ModeSticky = 0o1000
)

// Entry is one filesystem object of a manifest.
type Entry struct {
	// Path is relative to the root, '/'-separated, raw bytes (may be invalid UTF-8).
	Path string
	// Type is the entry's kind; a seed manifest only has files.
	Type Type
	// Perm holds the permission bits including setuid, setgid and sticky (07777).
	Perm uint32
	// Nlink is the link count of a regular file that has more than one
	// name (hard links); 0 for a file with one name, for any other type
	// and when unknown (seed manifests, manifests written before it was
	// recorded, Windows). Only a count above 1 tells anything: some other
	// name of the same inode exists, perhaps outside the tree.
	Nlink uint32
	// Size is the byte size for files, the target length for symlinks, 0 otherwise.
	Size int64
	// UID and GID are the numeric owner; -1 when unknown (seed manifests, Windows).
	UID, GID int64
	// MTime is the modification time in nanoseconds since the epoch.
	MTime int64
	// CTime is the status change time in nanoseconds since the epoch (0 if unknown).
	CTime int64
	// Dev and Ino identify the file on its filesystem (0 if unknown).
	Dev, Ino uint64
	// SHA256 is the hex digest of a regular file's content ("" if not hashed).
	SHA256 string
	// Target is a symlink's target, as read by readlink(2).
	Target string
	// Rdev is the device number of a device node.
	Rdev uint64
	// Err is a problem met while recording this entry (the walk went on):
	// what it names (a file's content, a directory's listing) is unknown.
	Err string
	// Xattr summarises the extended attributes (ACLs, capabilities, user
	// attributes): their names, comma-separated, then "#" and a digest of
	// names and values, then, when the file has capabilities, " caps=" and
	// the raw security.capability value in hex; XattrNone when there are
	// none; "" when they were not recorded (seed manifests, other
	// platforms, reused hashes whose prior did not record them).
	Xattr string
}

// Caps returns the raw security.capability attribute, hex ("" when none or
// not recorded).
func (e *Entry) Caps() string {
	if i := strings.Index(e.Xattr, capsTag); i >= 0 {
		return e.Xattr[i+len(capsTag):]
	}
	return ""
}

// capsTag introduces the capability value in Entry.Xattr.
const capsTag = " caps="

// XattrNone is Entry.Xattr for an entry recorded without extended attributes.
const XattrNone = "-"

// capabilityXattr is the extended attribute holding file capabilities.
const capabilityXattr = "security.capability"

// Unreadable reports whether the gate could not fully record e: its
// content (a file) or what lies below it (a directory) is unknown.
func (e *Entry) Unreadable() bool { return e.Err != "" }

// Hides reports whether what lies below e is unknown: a directory that could
// not be opened or listed, or an entry whose type is unknown.
func (e *Entry) Hides() bool { return e.Err != "" && e.Type != File && e.Type != Symlink }

// ModeString returns the permission bits as four octal digits, e.g. "0644".
func (e *Entry) ModeString() string { return fmt.Sprintf("%04o", e.Perm) }

// ModeKnown reports whether Perm was recorded: entries of seed manifests
// carry only path, size and hash.
func (e *Entry) ModeKnown() bool { return e.UID >= 0 || e.Perm != 0 }

// ParseMode parses an octal mode string as written by ModeString.
func ParseMode(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || v > 0o7777 {
		return 0, fmt.Errorf("invalid mode %q", s)
	}
	return uint32(v), nil
}

// Manifest is a snapshot of a tree, entries sorted by Path (byte order).
type Manifest struct {
	// Root is the absolute path of the tree that was walked ("" for seed manifests).
	Root string
	// CreatedAt is when the walk started.
	CreatedAt time.Time
	// Entries lists every entry below Root (Root itself excluded), sorted by Path.
	Entries []Entry
	// Self is the root's own entry (Path "."): type, mode, owner. nil for
	// seed manifests and manifests written before it was recorded.
	Self *Entry
	// mapped holds the files that were mapped shared and writable when the
	// walk ran (see sharedWritable): a later walk using this manifest as its
	// prior does not reuse their hashes either.
	mapped map[devIno]bool
	// Listed says every directory recorded without an error has all its
	// names among Entries: the manifest of a walk without Exclude. A walk
	// with it as Prior takes an unchanged directory's names from it rather
	// than listing the directory again (see Options.Prior).
	Listed bool
	// Seed is true for a manifest read from the seed's snapshot.py format:
	// only regular files, only path, size and SHA-256 are known.
	Seed bool
}

// Sort orders the entries by path. Entries already in order (a manifest
// read back, a walk's result) cost one pass.
func (m *Manifest) Sort() {
	if !m.sorted() {
		slices.SortFunc(m.Entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	}
}

// Lookup returns the entry for path, or nil. Entries must be sorted.
func (m *Manifest) Lookup(path string) *Entry {
	i := sort.Search(len(m.Entries), func(i int) bool { return m.Entries[i].Path >= path })
	if i < len(m.Entries) && m.Entries[i].Path == path {
		return &m.Entries[i]
	}
	return nil
}

// Errors returns the entries that carry a per-entry error, the root first.
func (m *Manifest) Errors() []Entry {
	var out []Entry
	if m.Self != nil && m.Self.Err != "" {
		out = append(out, *m.Self)
	}
	for _, e := range m.Entries {
		if e.Err != "" {
			out = append(out, e)
		}
	}
	return out
}

// typeOf maps a Go file mode to an entry type.
func typeOf(m fs.FileMode) Type {
	switch {
	case m.IsRegular():
		return File
	case m.IsDir():
		return Dir
	case m&fs.ModeSymlink != 0:
		return Symlink
	case m&fs.ModeNamedPipe != 0:
		return FIFO
	case m&fs.ModeSocket != 0:
		return Socket
	case m&fs.ModeCharDevice != 0:
		return Char
	case m&fs.ModeDevice != 0:
		return Block
	}
	return Unknown
}

// permOf extracts the chmod-style permission bits from a Go file mode.
func permOf(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= ModeSetuid
	}
	if m&fs.ModeSetgid != 0 {
		p |= ModeSetgid
	}
	if m&fs.ModeSticky != 0 {
		p |= ModeSticky
	}
	return p
}

// SplitPath splits a manifest path (relative, '/'-separated) into its
// folder ("" at the top) and its last segment.
func SplitPath(rel string) (dir, name string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}
