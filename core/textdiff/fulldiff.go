package textdiff

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/diffgate/diffgate/internal/count"
)

// Limits of Full: the text diff of a file too large for Lines, as
// the gate puts it in a report (when it has both contents) and as the
// review's Load full diff computes it.
const (
	// MaxFullInput is the largest side Full compares.
	MaxFullInput = 64 << 20
	// ReportHunks is how many hunks of such a diff a report carries (and
	// at most MaxOutput bytes of them, see Cut).
	ReportHunks = 20
)

// ErrNotText is returned by Full when a side is not text (IsText).
var ErrNotText = errors.New("not text (binary content)")

// Full returns the unified diff from before to after, as Lines does
// but for sides of up to MaxFullInput bytes, with its first maxHunks
// hunks (all for maxHunks <= 0) and at most maxBytes bytes of them (Cut;
// no bound for maxBytes <= 0); when hunks are left out, a cut line says how
// many ("… cut: 12 more hunks not shown (5120 bytes)"). A diff for a report
// (maxBytes up to MaxOutput) shows a long changed line around its
// changes (WindowLongLines); a larger bound keeps lines whole. hunks is the
// diff's number of hunks. A missing side is nil. It stops with ctx's error
// when ctx is done.
//
// Full reads before and after in place: the caller must not change
// them while it runs.
func Full(ctx context.Context, before, after []byte, name string, maxHunks, maxBytes int) (d string, hunks int, err error) {
	if len(before) > MaxFullInput || len(after) > MaxFullInput {
		return "", 0, fmt.Errorf("over the %d MiB limit of a full diff", MaxFullInput>>20)
	}
	if !IsText(before) || !IsText(after) {
		return "", 0, ErrNotText
	}
	if err := ctx.Err(); err != nil {
		return "", 0, err
	}
	// No copies of up to 2 x 64 MiB: the strings share the slices' bytes.
	old, cur := unsafe.String(unsafe.SliceData(before), len(before)), unsafe.String(unsafe.SliceData(after), len(after))
	label := diffLabel(name)
	u, err := unifiedDiff(ctx, "a/"+label, "b/"+label, old, cur)
	if err != nil {
		return "", 0, err
	}
	hunks = len(u.Hunks)
	if hunks == 0 {
		return "", 0, nil
	}
	keep := hunks
	if maxHunks > 0 {
		keep = min(keep, maxHunks)
	}
	rest := 0
	for _, h := range u.Hunks[keep:] {
		for _, l := range h.Lines {
			rest += len(l.Content) + 1
		}
	}
	u.Hunks = u.Hunks[:keep]
	d = u.String() // a copy: the result may outlive the inputs
	if err := ctx.Err(); err != nil {
		return "", 0, err
	}
	if n := hunks - keep; n > 0 {
		d += fmt.Sprintf("%s cut: %d more %s not shown (%d bytes)\n", CutPrefix, n, count.Word(n, "hunk"), rest)
	}
	if maxBytes > 0 && maxBytes <= MaxOutput {
		d = WindowLongLines(d) // for a report: a long line around its changes
	}
	if maxBytes > 0 {
		d = cutKeepingTail(d, maxBytes)
	}
	return d, hunks, nil
}

// cutKeepingTail is Cut for a diff that may end in a cut line of its
// own (hunks Full left out): the line is kept after the cut, its count
// added to Cut's, so that one line says how many hunks are missing.
func cutKeepingTail(d string, max int) string {
	if len(d) <= max {
		return d
	}
	body, tail := d, ""
	if i := strings.LastIndex(strings.TrimSuffix(d, "\n"), "\n"); i >= 0 && IsCutLine(d[i+1:]) {
		body, tail = d[:i+1], d[i+1:]
	}
	cut := Cut(body, max)
	if tail == "" {
		return cut
	}
	var more, moreBytes int
	if _, err := fmt.Sscanf(tail, CutPrefix+" cut: %d more", &more); err != nil {
		return cut + tail
	}
	fmt.Sscanf(tail[strings.Index(tail, "(")+1:], "%d bytes", &moreBytes)
	// Merge a "more hunks" line Cut wrote into the tail's.
	lines := strings.Split(strings.TrimSuffix(cut, "\n"), "\n")
	if last := lines[len(lines)-1]; IsCutLine(last) && strings.Contains(last, " hunk") {
		var n, b int
		if _, err := fmt.Sscanf(last, CutPrefix+" cut: %d more", &n); err == nil {
			fmt.Sscanf(last[strings.Index(last, "(")+1:], "%d bytes", &b)
			more, moreBytes = more+n, moreBytes+b
			cut = strings.Join(lines[:len(lines)-1], "\n") + "\n"
		}
	}
	return cut + fmt.Sprintf("%s cut: %d more %s not shown (%d bytes)\n", CutPrefix, more, count.Word(more, "hunk"), moreBytes)
}
