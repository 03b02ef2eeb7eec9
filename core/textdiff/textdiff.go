// Package textdiff computes the text diffs diffgate shows: unified line
// diffs of two contents (Lines, Full), cut to a bound without hiding one
// side of a change (Cut), long (minified) lines shown around their changes
// (WindowLongLines), the words that differ within an edited line
// (Intraline, Words), and renames found among added and removed files by
// hash or text similarity (MarkRenames). It is pure and portable: no
// process, no cgo; the web build uses it.
package textdiff

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/diffgate/diffgate/internal/count"
)

// Limits of Lines.
const (
	// MaxInput is the largest side (in bytes) Lines will compare.
	MaxInput = 256 << 10
	// MaxOutput is about the largest diff Lines returns; a longer
	// one is cut (see Cut).
	MaxOutput = 64 << 10
)

// TruncatedMarker starts the last line of a diff cut by an older diffgate
// ("… truncated: N more diff lines"); CutPrefix covers it.
const TruncatedMarker = "… truncated"

// CutPrefix starts every line that marks a cut in a diff ("… cut: 3 more
// hunks not shown"). No line of a unified diff starts with it (they start
// with ' ', '+', '-', '@' or '\\'), so a reader can tell a cut from the
// diff's own lines: a cut line has no line numbers.
const CutPrefix = "…"

// MaxLine is the longest line a cut diff keeps whole; a longer one is
// cut at a character boundary and followed by a cut line.
const MaxLine = 4 << 10

// IsCutLine reports whether a line of a diff marks a cut (see CutPrefix).
func IsCutLine(l string) bool { return strings.HasPrefix(l, CutPrefix) }

// CutSkips returns how many lines of the old and new file a cut line stands
// for (so a reader can keep numbering the lines after it); 0, 0 for a cut
// that skips no numbered line (the rest of a long line, dropped hunks).
func CutSkips(l string) (old, new int) {
	var n int
	var what string
	if _, err := fmt.Sscanf(l, CutPrefix+" cut: %d more %s", &n, &what); err != nil {
		return 0, 0
	}
	switch what {
	case "removed":
		return n, 0
	case "added":
		return 0, n
	case "context":
		return n, n
	}
	return 0, 0
}

// IsText reports whether b looks like text Lines can show: valid UTF-8
// without NUL bytes.
func IsText(b []byte) bool {
	return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}

// Lines returns a unified diff ("--- a/name", "+++ b/name", hunks with 3
// lines of context) from before to after, for Change.TextDiff. ok is false
// when either side is not text (see IsText) or is larger than
// MaxInput; an added or removed file is passed as nil on the missing
// side. Identical sides give "", true. A diff longer than MaxOutput
// is cut, and a long changed line shown around its changes (see Cut).
func Lines(before, after []byte, name string) (string, bool) {
	if len(before) > MaxInput || len(after) > MaxInput || !IsText(before) || !IsText(after) {
		return "", false
	}
	label := diffLabel(name)
	u, err := unifiedDiff(context.Background(), "a/"+label, "b/"+label, string(before), string(after))
	if err != nil { // cannot happen: the edits are consistent and nothing cancels
		return "", false
	}
	return Cut(u.String(), MaxOutput), true
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

// Cut returns the unified diff d cut to about max bytes without ever
// hiding one side of a change. A changed line longer than MaxLine is
// shown around its changes, in its removed and its added version alike
// (WindowLongLines); any other line longer than that is cut. Whole
// hunks are kept while they fit; the first hunk that does not fit is shrunk
// into what is left (always for the first hunk): each run of context, removed and added lines keeps
// its first lines, so a change shows both what went and what came. Every cut
// is a line of its own starting with CutPrefix that says what it left out
// ("… cut: 12 more added lines", "… cut: 3 more hunks not shown (5120
// bytes)"). A d of at most max bytes without a long line is returned
// unchanged.
func Cut(d string, max int) string {
	d = WindowLongLines(d)
	if len(d) <= max {
		return d
	}
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	var head []string
	var hunks [][]string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "@@"):
			hunks = append(hunks, []string{l})
		case len(hunks) == 0:
			head = append(head, l)
		default:
			hunks[len(hunks)-1] = append(hunks[len(hunks)-1], l)
		}
	}
	var b strings.Builder
	for _, l := range head {
		writeDiffLine(&b, l)
	}
	kept := 0
	for _, h := range hunks {
		var hb strings.Builder
		for _, l := range h {
			writeDiffLine(&hb, l)
		}
		if b.Len()+hb.Len() <= max {
			b.WriteString(hb.String())
			kept++
			continue
		}
		if left := max - b.Len(); kept == 0 || left >= 2<<10 {
			b.WriteString(shrinkHunk(h, left))
			kept++
		}
		break
	}
	if rest := len(hunks) - kept; rest > 0 {
		n := 0
		for _, h := range hunks[kept:] {
			for _, l := range h {
				n += len(l) + 1
			}
		}
		fmt.Fprintf(&b, "%s cut: %d more %s not shown (%d bytes)\n", CutPrefix, rest, count.Word(rest, "hunk"), n)
	}
	return b.String()
}

// HeadLines keeps a diff's file headers, its first hunk header and the n
// lines after it, then one cut line for the rest ("… cut: 50 more added
// lines" for an added file's content): the start of a file, for reports.
func HeadLines(d string, n int) string {
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	h := 0
	for h < len(lines) && !strings.HasPrefix(lines[h], "@@") {
		h++
	}
	keep := h + 1 + n
	if keep >= len(lines) {
		return d
	}
	rest := lines[keep:]
	added := true
	for _, l := range rest {
		if !strings.HasPrefix(l, "+") {
			added = false
			break
		}
	}
	what := "more " + count.Word(len(rest), "line") + " not shown"
	if added {
		what = "more added " + count.Word(len(rest), "line")
	}
	return strings.Join(lines[:keep], "\n") + fmt.Sprintf("\n%s cut: %d %s\n", CutPrefix, len(rest), what)
}

// Counts counts a diff's added and removed lines, those a cut stands
// for included; partial is set when a cut left whole hunks out (the counts
// are then those of the hunks shown).
func Counts(d string) (added, removed int, partial bool) {
	inHunk := false
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			inHunk = true
		case IsCutLine(l):
			o, n := CutSkips(l)
			if strings.Contains(l, " hunk") || strings.HasPrefix(l, TruncatedMarker) {
				partial = true
			}
			if !strings.Contains(l, "context") {
				removed += o
				added += n
			}
		case !inHunk:
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed, partial
}

// writeDiffLine writes one diff line and its newline, a line longer than
// MaxLine cut at a character boundary and followed by a cut line.
func writeDiffLine(b *strings.Builder, l string) {
	if len(l) <= MaxLine {
		b.WriteString(l)
		b.WriteByte('\n')
		return
	}
	cut := MaxLine
	for cut > 0 && !utf8.RuneStart(l[cut]) {
		cut--
	}
	b.WriteString(l[:cut])
	fmt.Fprintf(b, "\n%s cut: the line above goes on for %d more bytes\n", CutPrefix, len(l)-cut)
}

// diffRun is a run of hunk lines of one kind (' ', '-', '+' or '\\').
type diffRun struct {
	kind  byte
	lines []string
}

func (r diffRun) word() string {
	switch r.kind {
	case '-':
		return "removed"
	case '+':
		return "added"
	}
	return "context"
}

// shrinkHunk renders hunk h (its @@ line first) in about budget bytes: each
// run keeps its first k lines, k as large as fits; when even one line a run
// is too much, it stops before a run that does not finish a change (never
// between the removed lines and the added lines that replace them).
func shrinkHunk(h []string, budget int) string {
	var runs []diffRun
	for _, l := range h[1:] {
		k := byte(' ')
		if l != "" && (l[0] == '-' || l[0] == '+' || l[0] == '\\') {
			k = l[0]
		}
		if n := len(runs); n > 0 && runs[n-1].kind == k {
			runs[n-1].lines = append(runs[n-1].lines, l)
		} else {
			runs = append(runs, diffRun{kind: k, lines: []string{l}})
		}
	}
	render := func(k int, stop bool) string {
		var b strings.Builder
		writeDiffLine(&b, h[0])
		for i, r := range runs {
			if stop && i > 0 && b.Len() > budget && r.kind != '\\' && !(r.kind == '+' && runs[i-1].kind == '-') {
				left := 0
				for _, r := range runs[i:] {
					left += len(r.lines)
				}
				fmt.Fprintf(&b, "%s cut: %d more %s of this hunk not shown\n", CutPrefix, left, count.Word(left, "line"))
				break
			}
			for _, l := range r.lines[:min(k, len(r.lines))] {
				writeDiffLine(&b, l)
			}
			if n := len(r.lines) - k; n > 0 {
				fmt.Fprintf(&b, "%s cut: %d more %s %s\n", CutPrefix, n, r.word(), count.Word(n, "line"))
			}
		}
		return b.String()
	}
	k := 0
	for _, r := range runs {
		k = max(k, len(r.lines))
	}
	for ; k > 1; k /= 2 {
		if s := render(k, false); len(s) <= budget {
			return s
		}
	}
	return render(1, true)
}
