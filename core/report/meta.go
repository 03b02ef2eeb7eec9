package report

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// The before/after metadata table of a change: one model for the HTML
// report and the app's detail pane, so that Mode, Size, Owner and Target
// read alike everywhere.

// MetaField is a row of the table: its label, the value an entry has for
// it ("" for none), and whether it reads best in a monospace font.
type MetaField struct {
	Label string
	Value func(e *snapshot.Entry) string
	Mono  bool
}

// MetaFields lists the table's rows in order; stat adds those of a
// stat-only record (times, inode, links: a change outside the workspace).
func MetaFields(stat bool) []MetaField {
	rows := []MetaField{
		{"Type", func(e *snapshot.Entry) string { return string(e.Type) }, false},
		{"Mode", func(e *snapshot.Entry) string {
			if e.Type == snapshot.Symlink || !e.ModeKnown() {
				return ""
			}
			return e.ModeString() + " " + Symbolic(e)
		}, true},
		{"Size", func(e *snapshot.Entry) string {
			if e.Type != snapshot.File {
				return ""
			}
			if e.Size < 1024 {
				return Size(e.Size)
			}
			return fmt.Sprintf("%s (%s bytes)", Size(e.Size), count.Digits(e.Size))
		}, false},
		{"Owner", fmtOwner, true},
		{"Target", func(e *snapshot.Entry) string {
			if e.Type != snapshot.Symlink {
				return ""
			}
			return quote.Path(e.Target)
		}, true},
		{"SHA-256", func(e *snapshot.Entry) string { return e.SHA256 }, true},
	}
	if stat {
		nanos := func(t int64) string {
			if t == 0 {
				return ""
			}
			return time.Unix(0, t).Local().Format("2006-01-02 15:04:05.000")
		}
		count := func(n uint64) string {
			if n == 0 {
				return ""
			}
			return strconv.FormatUint(n, 10)
		}
		rows = append(rows,
			MetaField{"Modified", func(e *snapshot.Entry) string { return nanos(e.MTime) }, false},
			MetaField{"Status changed", func(e *snapshot.Entry) string { return nanos(e.CTime) }, false},
			MetaField{"Inode", func(e *snapshot.Entry) string { return count(e.Ino) }, true},
			MetaField{"Links", func(e *snapshot.Entry) string { return count(uint64(e.Nlink)) }, true})
	}
	return append(rows, MetaField{"Error", func(e *snapshot.Entry) string { return quote.Clean(e.Err) }, false})
}

// MetaRow is a row of a change's table: the values before and after ("—"
// for a side without the entry or the value) and whether they differ
// (both entries there, the values not the same).
type MetaRow struct {
	Label, Before, After string
	Changed, Mono        bool
}

// MetaRows is the table of entries b and a (either may be nil): a row
// whose value neither side has is left out.
func MetaRows(b, a *snapshot.Entry, stat bool) []MetaRow {
	var rows []MetaRow
	for _, f := range MetaFields(stat) {
		var bv, av string
		if b != nil {
			bv = f.Value(b)
		}
		if a != nil {
			av = f.Value(a)
		}
		if bv == "" && av == "" {
			continue
		}
		rows = append(rows, MetaRow{Label: f.Label, Before: orDash(bv, bv), After: orDash(av, av),
			Changed: b != nil && a != nil && bv != av, Mono: f.Mono})
	}
	return rows
}

// MetaChanges is the rows of MetaRows(b, a, false) whose values differ,
// the SHA-256 left out when the size already says the content changed:
// what a one-line summary of a change's metadata names.
func MetaChanges(b, a *snapshot.Entry) []MetaRow {
	var out []MetaRow
	size := false
	for _, r := range MetaRows(b, a, false) {
		if !r.Changed || r.Label == "SHA-256" && size {
			continue
		}
		size = size || r.Label == "Size"
		out = append(out, r)
	}
	return out
}

// metaLine is MetaChanges in words, the content's rows (Size, SHA-256)
// left out: "Mode 0644 rw-r--r-- → 0755 rwxr-xr-x; Owner 0:0 → 1000:1000".
func metaLine(b, a *snapshot.Entry) string {
	var parts []string
	for _, r := range MetaChanges(b, a) {
		if r.Label != "Size" && r.Label != "SHA-256" {
			parts = append(parts, r.Label+" "+r.Before+" → "+r.After)
		}
	}
	return strings.Join(parts, "; ")
}

// Symbolic renders an entry's permission bits as ls does: "rwxr-xr-x",
// "rwsr-xr-x", "rwxrwxrwt".
func Symbolic(e *snapshot.Entry) string {
	m := fs.FileMode(e.Perm & 0o777)
	s := m.String()
	s = s[len(s)-9:] // fs.FileMode.String leads with the type letter
	set := func(s string, i int, c byte) string {
		if s[i] == '-' {
			c = c - 'a' + 'A'
		}
		return s[:i] + string(c) + s[i+1:]
	}
	if e.Perm&snapshot.ModeSetuid != 0 {
		s = set(s, 2, 's')
	}
	if e.Perm&snapshot.ModeSetgid != 0 {
		s = set(s, 5, 's')
	}
	if e.Perm&snapshot.ModeSticky != 0 {
		s = set(s, 8, 't')
	}
	return s
}
