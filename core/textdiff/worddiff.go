package textdiff

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// Word-level highlights: within each change of a unified diff (a run of
// removed lines and the added lines that follow it), removed and added
// lines are paired by similarity, and the words of a pair that differ are
// marked. Whitespace that changed, trailing whitespace and carriage
// returns of changed lines are made visible (see Piece), so a trailing
// space or CRLF -> LF change never shows as two identical lines.

// Span is a byte range [Start, End) of a line's text.
type Span struct{ Start, End int }

// maxPairing bounds the removed × added lines of one change that are
// aligned by similarity; a larger change pairs its lines in order.
const maxPairing = 2500

// minSimilar is the similarity (0..1, see similarity) from which a removed
// and an added line count as one line edited; less, and they are two
// different lines with nothing worth marking.
const minSimilar = 0.4

// Intraline pairs the removed and added lines of each change among lines
// (the lines of a unified diff, markers included, as strings.Split gives
// them) and marks the words that differ. pair[i] is the index of the line
// paired with line i, -1 for none; marks[i] holds the changed byte ranges of
// line i's text without its marker (l[1:]), nil when nothing is marked. A
// change is the removed and added lines between two lines of context (cut
// and note lines inside it are skipped).
func Intraline(lines []string) (marks [][]Span, pair []int) {
	marks = make([][]Span, len(lines))
	pair = make([]int, len(lines))
	for i := range pair {
		pair[i] = -1
	}
	eachChangeRun(lines, func(del, add []int) {
		for _, p := range alignLines(lines, del, add) {
			d, a := p[0], p[1]
			pair[d], pair[a] = a, d
			marks[d], marks[a] = Words(lines[d][1:], lines[a][1:])
		}
	})
	return marks, pair
}

// eachChangeRun calls fn with each run of removed (del) and added (add)
// lines of a unified diff's hunks (indices into lines; cut marks and "\ No
// newline" lines inside a run belong to it).
func eachChangeRun(lines []string, fn func(del, add []int)) {
	inHunk := false
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.HasPrefix(l, "@@") {
			inHunk = true
		}
		if !inHunk || !isChangeLine(l) {
			i++
			continue
		}
		var del, add []int
		j := i
	scan:
		for ; j < len(lines); j++ {
			switch m := lines[j]; {
			case strings.HasPrefix(m, "-"):
				del = append(del, j)
			case strings.HasPrefix(m, "+"):
				add = append(add, j)
			case IsCutLine(m) || strings.HasPrefix(m, `\`):
			default:
				break scan
			}
		}
		fn(del, add)
		i = j
	}
}

func isChangeLine(l string) bool {
	return strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")
}

// alignLines pairs removed lines del with added lines add (indices into
// lines), in order, so that the pairs' similarity is greatest; pairs less
// similar than minSimilar are left out.
func alignLines(lines []string, del, add []int) [][2]int {
	n, m := len(del), len(add)
	if n == 0 || m == 0 {
		return nil
	}
	text := func(i int) string { return lines[i][1:] }
	if n*m > maxPairing {
		var out [][2]int
		for k := 0; k < min(n, m); k++ {
			if similarity(text(del[k]), text(add[k])) >= minSimilar {
				out = append(out, [2]int{del[k], add[k]})
			}
		}
		return out
	}
	sim := make([]float64, n*m)
	for a := 0; a < n; a++ {
		for b := 0; b < m; b++ {
			sim[a*m+b] = similarity(text(del[a]), text(add[b]))
		}
	}
	// best[a][b]: the best total of del[a:] with add[b:].
	best := make([]float64, (n+1)*(m+1))
	at := func(a, b int) *float64 { return &best[a*(m+1)+b] }
	for a := n - 1; a >= 0; a-- {
		for b := m - 1; b >= 0; b-- {
			v := max(*at(a+1, b), *at(a, b+1))
			if s := sim[a*m+b]; s >= minSimilar {
				v = max(v, s+*at(a+1, b+1))
			}
			*at(a, b) = v
		}
	}
	var out [][2]int
	for a, b := 0, 0; a < n && b < m; {
		switch s := sim[a*m+b]; {
		case s >= minSimilar && *at(a, b) == s+*at(a+1, b+1):
			out = append(out, [2]int{del[a], add[b]})
			a, b = a+1, b+1
		case *at(a, b) == *at(a+1, b):
			a++
		default:
			b++
		}
	}
	return out
}

// similarity is how alike two lines are, from 0 to 1: the share of their
// bytes in common tokens (a multiset Dice coefficient), ignoring
// surrounding whitespace, so that a line edited in one word scores high and
// two unrelated lines low.
func similarity(a, b string) float64 {
	ta, tb := strings.TrimSpace(a), strings.TrimSpace(b)
	if ta == tb {
		return 1
	}
	if ta == "" || tb == "" {
		return 0
	}
	count := map[string]int{}
	for _, t := range tokens(ta) {
		count[t]++
	}
	common := 0
	for _, t := range tokens(tb) {
		if count[t] > 0 {
			count[t]--
			common += len(t)
		}
	}
	return 2 * float64(common) / float64(len(ta)+len(tb))
}

// tokens splits s into words (letters, digits, '_'), runs of whitespace,
// and single other characters.
func tokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		j := i + n
		switch {
		case isWord(r):
			for j < len(s) {
				r, n := utf8.DecodeRuneInString(s[j:])
				if !isWord(r) {
					break
				}
				j += n
			}
		case r == ' ' || r == '\t':
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// offsets returns where each of ts starts in their concatenation, and
// (last) its length.
func offsets(ts []string) []int {
	o := make([]int, len(ts)+1)
	for i, t := range ts {
		o[i+1] = o[i] + len(t)
	}
	return o
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// Words returns the byte ranges of old and new that differ, word by word
// (see tokens); ranges separated only by a little punctuation or a space
// (at most maxGap bytes, no letter or digit) are merged, so that a change
// reads as one ("https://api.example.com" -> "http://10.0.0.5:8080").
func Words(old, new string) (oldSpans, newSpans []Span) {
	if old == new {
		return nil, nil
	}
	ta, tb := tokens(old), tokens(new)
	oa, ob := offsets(ta), offsets(tb)
	for _, d := range lcs.DiffLines(ta, tb) {
		if d.End > d.Start {
			oldSpans = addSpan(oldSpans, Span{oa[d.Start], oa[d.End]}, old)
		}
		if d.ReplEnd > d.ReplStart {
			newSpans = addSpan(newSpans, Span{ob[d.ReplStart], ob[d.ReplEnd]}, new)
		}
	}
	return oldSpans, newSpans
}

// maxGap is the longest common text between two changed ranges that
// Words merges over.
const maxGap = 3

// addSpan appends s, merged into the last span when only a short gap
// without letters or digits lies between them.
func addSpan(spans []Span, s Span, text string) []Span {
	if n := len(spans); n > 0 {
		last := &spans[n-1]
		if gap := text[last.End:s.Start]; len(gap) <= maxGap && strings.IndexFunc(gap, isWord) < 0 {
			last.End = s.End
			return spans
		}
	}
	return append(spans, s)
}

// Piece is a part of a diff line's text as a viewer draws it: the text as
// it is, whether it lies in a word-level change, and whether it is
// whitespace to make visible (draw Visible(Text) instead, in a muted
// colour: the line would otherwise hide the change).
type Piece struct {
	Text    string
	Changed bool
	Space   bool
}

// Pieces splits text, the content of a changed line (its marker removed),
// into pieces: spans are its word-level changes (Intraline); a change of
// whitespace only (indentation, spacing), the line's trailing whitespace
// and its carriage returns are Space pieces. A line without spans and
// without trailing whitespace is one piece.
func Pieces(text string, spans []Span) []Piece {
	trail := len(strings.TrimRight(text, " \t\r"))
	var out []Piece
	add := func(s string, changed, space bool) {
		if s == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Changed == changed && out[n-1].Space == space {
			out[n-1].Text += s
			return
		}
		out = append(out, Piece{Text: s, Changed: changed, Space: space})
	}
	// Each byte is in a change or not, and is visible whitespace or not;
	// emit runs of equal kind.
	k := 0 // next span
	for i := 0; i < len(text); {
		for k < len(spans) && spans[k].End <= i {
			k++
		}
		changed := k < len(spans) && spans[k].Start <= i
		end := len(text)
		if changed {
			end = spans[k].End
		} else if k < len(spans) {
			end = spans[k].Start
		}
		// Whitespace is shown where it is the change: a span of whitespace
		// only, or the line's end.
		show := changed && strings.Trim(text[i:end], " \t\r") == ""
		for i < end {
			c := text[i]
			space := (show || i >= trail) && (c == ' ' || c == '\t') || c == '\r'
			j := i + 1
			for j < end {
				cj := text[j]
				sj := (show || j >= trail) && (cj == ' ' || cj == '\t') || cj == '\r'
				if sj != space {
					break
				}
				j++
			}
			add(text[i:j], changed, space)
			i = j
		}
	}
	return out
}

// ShowTrailingSpace makes the trailing whitespace and the carriage returns
// of a unified diff's changed lines visible (VisibleSpace), for a plain-text
// rendering (Markdown) where a trailing space or a CRLF -> LF change would
// otherwise show as two identical lines.
func ShowTrailingSpace(d string) string {
	if !strings.ContainsAny(d, " \t\r") {
		return d
	}
	lines := strings.Split(d, "\n")
	inHunk := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "@@"):
			inHunk = true
		case inHunk && isChangeLine(l):
			body := strings.ReplaceAll(l[1:], "\r", "\x00") // a CR anywhere, shown below
			keep := len(strings.TrimRight(body, " \t\x00"))
			body = body[:keep] + VisibleSpace(strings.ReplaceAll(body[keep:], "\x00", "\r"))
			lines[i] = l[:1] + strings.ReplaceAll(body, "\x00", `\r`)
		}
	}
	return strings.Join(lines, "\n")
}

// TrailingSpaceChanged reports whether a changed line of diff d ends in
// whitespace or holds a carriage return.
func TrailingSpaceChanged(d string) bool {
	inHunk := false
	for l := range strings.SplitSeq(d, "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			inHunk = true
		case inHunk && isChangeLine(l) && (strings.ContainsRune(l, '\r') || strings.TrimRight(l, " \t") != l):
			return true
		}
	}
	return false
}

// VisibleSpace shows whitespace: a space as "·", a tab as "→", a carriage
// return as `\r` (no common font has the control picture ␍); any other
// character stays as it is.
func VisibleSpace(s string) string {
	return strings.NewReplacer(" ", "·", "\t", "→", "\r", `\r`).Replace(s)
}
