package textdiff

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// Long lines. A minified file is one line of tens of KiB: a one-token edit
// of it shows nothing when the line is cut after its first MaxLine
// bytes (the two halves shown are the same). WindowLongLines shows such a
// line around its changes instead: "…", some context, the changed words,
// some context, "…", for each change, in the removed and the added line
// alike, so that every format (JSON, HTML, Markdown, the app) shows the
// edit and marks its words (Intraline).

// How many bytes of unchanged text a windowed line keeps before a change
// (few: the change must show in a narrow pane without scrolling) and after
// it; the cut is moved to a word's start (before) or end (after).
const (
	windowBefore  = 12
	windowAfter   = 64
	windowContext = windowBefore + windowAfter
)

// windowChange is the most of one changed span a windowed line keeps.
const windowChange = 1 << 10

// Ellipsis marks the text a windowed line leaves out.
const Ellipsis = "…"

// IsWindowNote reports whether l is the cut line that follows a windowed
// line (see WindowLongLines).
func IsWindowNote(l string) bool {
	return strings.HasPrefix(l, CutPrefix+" cut: the line above is shown around its changes")
}

// WindowLongLines returns the unified diff d with each removed line longer
// than MaxLine and the added line it pairs with (by similarity, as
// Intraline pairs them), or the reverse, shown around their changes (see
// WindowLine); each windowed line is followed by a cut line saying so
// ("… cut: the line above is shown around its changes (40960 bytes)"). A
// long line without a mate is left as it is (Cut cuts it). A diff
// without a long line is returned unchanged.
func WindowLongLines(d string) string {
	if !hasLongLine(d) {
		return d
	}
	nl := strings.HasSuffix(d, "\n")
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	windowed := map[int]string{}
	eachChangeRun(lines, func(del, add []int) {
		for _, p := range alignLongLines(lines, del, add) {
			a, b := p[0], p[1]
			if len(lines[a]) <= MaxLine+1 && len(lines[b]) <= MaxLine+1 {
				continue
			}
			wa, wb := WindowLine(lines[a][1:], lines[b][1:], MaxLine-1)
			windowed[a], windowed[b] = "-"+wa, "+"+wb
		}
	})
	if len(windowed) == 0 {
		return d
	}
	var b strings.Builder
	for i, l := range lines {
		if w, ok := windowed[i]; ok {
			b.WriteString(w)
			fmt.Fprintf(&b, "\n%s cut: the line above is shown around its changes (%d bytes)", CutPrefix, len(l)-1)
		} else {
			b.WriteString(l)
		}
		if i < len(lines)-1 || nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// hasLongLine reports whether a line of d is longer than MaxLine.
func hasLongLine(d string) bool {
	for len(d) > MaxLine {
		i := strings.IndexByte(d, '\n')
		if i < 0 {
			return true
		}
		if i > MaxLine {
			return true
		}
		d = d[i+1:]
	}
	return false
}

// alignLongLines pairs removed and added lines as alignLines does, but
// cheaply for long lines: a run of one removed and one added line (the
// usual minified edit) is a pair whatever their similarity, which is
// costly to weigh on long lines.
func alignLongLines(lines []string, del, add []int) [][2]int {
	if len(del) == 1 && len(add) == 1 {
		return [][2]int{{del[0], add[0]}}
	}
	return alignLines(lines, del, add)
}

// WindowLine returns old and new, two versions of a long line, each shown
// around its changes in at most about limit bytes: for each change (a run
// of words that differ, see Words), up to windowContext bytes of the
// unchanged text before it, the change (its first windowChange bytes), and
// up to windowContext bytes after it; Ellipsis stands for each stretch of
// unchanged text left out, and for the rest of the line once limit is spent.
// The unchanged text shown is the same in both, so the two windows line up
// and their changed words are the only difference.
func WindowLine(old, new string, limit int) (string, string) {
	ta, tb := tokens(old), tokens(new)
	oa, ob := offsets(ta), offsets(tb)
	var wa, wb strings.Builder
	over := false
	// common writes unchanged text s to both windows: all of it when it is
	// short, else its start (after a change) and its end (before one).
	common := func(s string, first, last bool) {
		keepHead, keepTail := windowAfter, windowBefore
		if first {
			keepHead = 0
		}
		if last {
			keepTail = 0
		}
		if len(s) <= keepHead+keepTail+24 { // too little to leave out
			wa.WriteString(s)
			wb.WriteString(s)
			return
		}
		h := s[:wordEnd(s, keepHead)]
		t := s[wordStart(s, len(s)-keepTail):]
		for _, w := range []*strings.Builder{&wa, &wb} {
			w.WriteString(h)
			w.WriteString(Ellipsis)
			w.WriteString(t)
		}
	}
	changed := func(w *strings.Builder, s string) {
		if len(s) > windowChange {
			s = s[:runeStart(s, windowChange)] + Ellipsis
		}
		w.WriteString(s)
	}
	pa := 0 // bytes of old (and of the common text) written so far
	diffs := lcs.DiffLines(ta, tb)
	for k, d := range diffs {
		// What this change may add: its context and its two sides.
		need := windowContext + 3*len(Ellipsis) + min(windowChange+len(Ellipsis), max(oa[d.End]-oa[d.Start], ob[d.ReplEnd]-ob[d.ReplStart]))
		if k > 0 && max(wa.Len(), wb.Len())+need > limit {
			over = true
			break
		}
		common(old[pa:oa[d.Start]], k == 0, false)
		changed(&wa, old[oa[d.Start]:oa[d.End]])
		changed(&wb, new[ob[d.ReplStart]:ob[d.ReplEnd]])
		pa = oa[d.End]
	}
	if over || len(diffs) == 0 { // the rest left out
		wa.WriteString(Ellipsis)
		wb.WriteString(Ellipsis)
	} else {
		common(old[pa:], false, true)
	}
	return wa.String(), wb.String()
}

// runeStart is i moved back to the start of the character it is in.
func runeStart(s string, i int) int {
	i = max(0, min(i, len(s)))
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// wordStart is i moved forward to the start of a word or of a character
// that is not part of one (a cut never splits a word), at most 16 bytes.
func wordStart(s string, i int) int {
	i = runeStart(s, i)
	for j := i; j < len(s) && j < i+16; {
		r, n := utf8.DecodeRuneInString(s[j:])
		if j > 0 {
			p, _ := utf8.DecodeLastRuneInString(s[:j])
			if !isWord(p) || !isWord(r) {
				return j
			}
		}
		j += n
	}
	return i
}

// wordEnd is i moved back to the end of a word or of a character that is
// not part of one, at most 16 bytes.
func wordEnd(s string, i int) int {
	i = runeStart(s, i)
	for j := i; j > 0 && j > i-16; {
		p, n := utf8.DecodeLastRuneInString(s[:j])
		if j >= len(s) {
			return j
		}
		r, _ := utf8.DecodeRuneInString(s[j:])
		if !isWord(p) || !isWord(r) {
			return j
		}
		j -= n
	}
	return i
}
