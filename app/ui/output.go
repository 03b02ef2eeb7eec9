package ui

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/internal/quote"
)

// MaxOutputLines bounds the live output pane; older lines are dropped.
const MaxOutputLines = 5000

// maxLineRunes cuts very long lines (a minified file cat'ed to stdout).
const maxLineRunes = 2000

// outLine is one line of script output.
type outLine struct {
	stderr bool
	text   string
}

// outputBuffer collects output chunks from the gate's goroutines and splits
// them into lines; the UI drains it on its own schedule. It keeps at most
// MaxOutputLines pending lines, so a chatty script cannot grow it.
type outputBuffer struct {
	mu      sync.Mutex
	partial [3]strings.Builder // by pipeline.Stream
	lines   []outLine
	dropped int
}

func (b *outputBuffer) write(s pipeline.Stream, p []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	idx := int(s) % len(b.partial)
	part := &b.partial[idx]
	for len(p) > 0 {
		i := indexByte(p, '\n')
		if i < 0 {
			if part.Len() < 4*maxLineRunes {
				part.Write(p)
			}
			return
		}
		if part.Len() < 4*maxLineRunes {
			part.Write(p[:i])
		}
		b.push(outLine{stderr: s == pipeline.Stderr, text: part.String()})
		part.Reset()
		p = p[i+1:]
	}
}

func indexByte(p []byte, c byte) int {
	for i, x := range p {
		if x == c {
			return i
		}
	}
	return -1
}

func (b *outputBuffer) push(l outLine) {
	b.lines = append(b.lines, l)
	if over := len(b.lines) - MaxOutputLines; over > MaxOutputLines/4 {
		b.dropped += over
		b.lines = append(b.lines[:0], b.lines[over:]...)
	}
}

// drain returns the complete lines so far (and, when final, the partial
// last lines) and how many lines were dropped to stay bounded.
func (b *outputBuffer) drain(final bool) ([]outLine, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if final {
		for i := range b.partial {
			if b.partial[i].Len() > 0 {
				b.push(outLine{stderr: pipeline.Stream(i) == pipeline.Stderr, text: b.partial[i].String()})
				b.partial[i].Reset()
			}
		}
	}
	lines, dropped := b.lines, b.dropped
	b.lines, b.dropped = nil, 0
	return lines, dropped
}

// Tags of output lines in the view.
const (
	tagStdout = iota
	tagStderr
	tagNote
)

// outputPane is the live, bounded, auto-scrolling output of the script:
// stdout in the normal color, stderr in the warning color. It reuses the
// review's virtualized line view, so thousands of lines stay cheap.
type outputPane struct {
	view *review.DiffView
}

func newOutputPane() *outputPane {
	v := review.NewDiffView()
	v.NoGutter = true
	v.ColorFor = func(l review.DiffLine) (fyne.ThemeColorName, fyne.ThemeColorName) {
		switch l.Tag {
		case tagStderr:
			return theme.ColorNameWarning, ""
		case tagNote:
			return style.Muted, ""
		}
		return theme.ColorNameForeground, ""
	}
	return &outputPane{view: v}
}

func (o *outputPane) clear() { o.view.SetLines(nil) }

// lineCount is the number of lines shown.
func (o *outputPane) lineCount() int { return len(o.view.Lines()) }

// text is the pane's text.
func (o *outputPane) text() string { return o.view.Text() }

// append adds lines, drops the oldest beyond MaxOutputLines and follows
// the end.
func (o *outputPane) append(lines []outLine, dropped int) {
	if len(lines) == 0 && dropped == 0 {
		return
	}
	out := make([]review.DiffLine, 0, len(lines)+1)
	if dropped > 0 {
		out = append(out, review.DiffLine{Tag: tagNote, Text: "… " + strconv.Itoa(dropped) + " lines skipped …"})
	}
	for _, l := range lines {
		tag := tagStdout
		if l.stderr {
			tag = tagStderr
		}
		out = append(out, review.DiffLine{Tag: tag, Text: cleanLine(l.text)})
	}
	o.view.Append(out, MaxOutputLines)
}

// cleanLine makes a line of untrusted output displayable on one row: escape
// sequences dropped, tabs expanded, control characters replaced, length cut.
func cleanLine(s string) string {
	s = strings.TrimSuffix(s, "\r")
	var b strings.Builder
	cols := 0
	for i := 0; i < len(s) && cols < maxLineRunes; {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0x1b { // drop terminal escape sequences (colors, cursor moves)
			i = quote.SkipEscape(s, i)
			continue
		}
		if r < 0x20 && r != '\t' || r == 0x7f {
			r = '\uFFFD'
		}
		if r == '\t' {
			pad := 4 - cols%4
			b.WriteString(strings.Repeat(" ", pad))
			cols += pad
		} else {
			b.WriteRune(r)
			cols++
		}
		i += n
	}
	return b.String()
}
