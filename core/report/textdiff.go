package report

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/diffgate/diffgate/core/diff"
)

// Limits of TextDiff.
const (
	// MaxTextDiffInput is the largest side (in bytes) TextDiff will compare.
	MaxTextDiffInput = 256 << 10
	// MaxTextDiffOutput is the largest diff TextDiff returns; a longer one is
	// cut at a line boundary and ends with a TruncatedMarker line.
	MaxTextDiffOutput = 64 << 10
)

// TruncatedMarker starts the last line of a diff TextDiff had to cut.
const TruncatedMarker = "… truncated"

// IsText reports whether b looks like text TextDiff can show: valid UTF-8
// without NUL bytes.
func IsText(b []byte) bool {
	return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}

// TextDiff returns a unified diff ("--- a/name", "+++ b/name", hunks with 3
// lines of context) from before to after, for Change.TextDiff. ok is false
// when either side is not text (see IsText) or is larger than
// MaxTextDiffInput; an added or removed file is passed as nil on the missing
// side. Identical sides give "", true. A diff longer than MaxTextDiffOutput
// is cut at a line boundary and ends with a line starting with
// TruncatedMarker.
func TextDiff(before, after []byte, name string) (string, bool) {
	if len(before) > MaxTextDiffInput || len(after) > MaxTextDiffInput || !IsText(before) || !IsText(after) {
		return "", false
	}
	label := diffLabel(name)
	d := udiff.Unified("a/"+label, "b/"+label, string(before), string(after))
	return truncateDiff(d, MaxTextDiffOutput), true
}

// diffLabel makes a path safe for a diff header line: a name with a newline,
// a tab or invalid UTF-8 is quoted (Go %q), as git does.
func diffLabel(name string) string {
	if strings.ContainsAny(name, "\n\r\t") || !utf8.ValidString(name) {
		q := fmt.Sprintf("%q", name)
		return q[1 : len(q)-1]
	}
	return name
}

// truncateDiff cuts d to at most max bytes (plus the marker line), at a line
// boundary when there is one, never inside a UTF-8 sequence.
func truncateDiff(d string, max int) string {
	if len(d) <= max {
		return d
	}
	cut := strings.LastIndexByte(d[:max], '\n') + 1
	if cut == 0 { // one enormous first line
		cut = max
		for cut > 0 && !utf8.RuneStart(d[cut]) {
			cut--
		}
	}
	kept := d[:cut]
	if !strings.HasSuffix(kept, "\n") {
		kept += "\n"
	}
	omitted := strings.Count(d[cut:], "\n")
	if !strings.HasSuffix(d, "\n") {
		omitted++
	}
	return kept + fmt.Sprintf("%s: %d more diff lines (%d bytes) not shown\n", TruncatedMarker, omitted, len(d)-cut)
}

// DiffNoteText explains a change's diff_note (diff.Note*) in a few words,
// e.g. "no text diff: binary content"; "" for no note.
func DiffNoteText(note string) string {
	switch note {
	case "":
		return ""
	case diff.NoteBinary:
		return "no text diff: binary content"
	case diff.NoteTooLarge:
		return fmt.Sprintf("no text diff: over the %d KiB limit", MaxTextDiffInput>>10)
	case diff.NoteNotKept:
		return "no text diff: the before-content was not kept"
	case diff.NoteBudget:
		return "no text diff: the budget for kept contents was spent"
	}
	return "no text diff: " + note
}
