package textdiff

import (
	"context"
	"path"
	"sort"
	"strings"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

// Rename pairs a removed file with an added file of the same content, or of
// text at least MinRenameSimilarity percent alike: the reports and the
// review show the pair as a rename. Both stay changes of their own, and the
// allowlist judges each path.
type Rename struct {
	From, To string // the removed path and the added one
	// Similarity is how alike the contents are, in percent (100: the same).
	Similarity int
	// Diff is the text diff from From's content to To's ("" when the same).
	Diff string
}

// Bounds of rename detection.
const (
	// MinRenameSimilarity is the least similarity (percent) of a rename
	// with edits.
	MinRenameSimilarity = 90
	// maxRenameCompares bounds the pairs of contents compared per run;
	// maxRenameRecompares those compared again for a report without rename
	// fields (FindRenames, each time a report is shown or written).
	maxRenameCompares   = 2000
	maxRenameRecompares = 200
	// maxRenameText is the largest content compared for similarity.
	maxRenameText = MaxInput
)

// MarkRenames finds the renames among cs and records each on its two
// changes (RenamedTo, RenamedFrom, Similarity, RenameDiff). A removed and
// an added regular file with the same non-empty content (SHA-256 and size)
// are a rename; so are a removed and an added text file whose contents are
// at least MinRenameSimilarity percent alike (the share of their bytes in
// common lines), when content returns both (nil: only the same content
// counts). Candidates are paired best first, a same base name before
// another; at most maxRenameCompares pairs are compared.
func MarkRenames(cs []diff.Change, content func(c *diff.Change) ([]byte, bool)) {
	for _, rn := range findRenames(cs, content, maxRenameCompares) {
		from, to := indexOf(cs, rn.From, diff.Removed), indexOf(cs, rn.To, diff.Added)
		cs[from].RenamedTo, cs[from].Similarity = rn.To, rn.Similarity
		cs[to].RenamedFrom, cs[to].Similarity, cs[to].RenameDiff = rn.From, rn.Similarity, rn.Diff
	}
}

func indexOf(cs []diff.Change, p string, k diff.Kind) int {
	i := sort.Search(len(cs), func(i int) bool { return cs[i].Path >= p })
	for ; i < len(cs) && cs[i].Path == p; i++ {
		if cs[i].Kind == k {
			return i
		}
	}
	for i := range cs { // not sorted: look everywhere
		if cs[i].Path == p && cs[i].Kind == k {
			return i
		}
	}
	return -1
}

func isRenameFile(e *snapshot.Entry) bool {
	return e != nil && e.Type == snapshot.File && e.SHA256 != "" && e.Size > 0
}

// FindRenames returns the renames among cs found from the hashes and from
// the contents the changes' text diffs hold (contentFromDiff), for changes
// that record none (a report written by an older diffgate, or reopened
// from the history); at most maxRenameRecompares pairs are compared.
func FindRenames(cs []diff.Change) []Rename {
	return findRenames(cs, contentFromDiff, maxRenameRecompares)
}

// findRenames is MarkRenames without recording, comparing at most
// maxCompares pairs of contents.
func findRenames(cs []diff.Change, content func(c *diff.Change) ([]byte, bool), maxCompares int) []Rename {
	type key struct {
		sum  string
		size int64
	}
	var removed []int
	byContent := map[key][]int{}
	for i := range cs {
		if c := &cs[i]; c.Kind == diff.Removed && isRenameFile(c.Before) {
			removed = append(removed, i)
			k := key{c.Before.SHA256, c.Before.Size}
			byContent[k] = append(byContent[k], i)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	var out []Rename
	paired := map[int]bool{}
	var added []int
	for i := range cs {
		c := &cs[i]
		if c.Kind != diff.Added || !isRenameFile(c.After) {
			continue
		}
		from := byContent[key{c.After.SHA256, c.After.Size}]
		best := -1
		for k, j := range from { // the same base name first
			if best < 0 || path.Base(cs[j].Path) == path.Base(c.Path) && path.Base(cs[from[best]].Path) != path.Base(c.Path) {
				best = k
			}
		}
		if best < 0 {
			added = append(added, i)
			continue
		}
		j := from[best]
		out = append(out, Rename{From: cs[j].Path, To: c.Path, Similarity: 100})
		paired[j] = true
		byContent[key{c.After.SHA256, c.After.Size}] = append(from[:best:best], from[best+1:]...)
	}
	if content == nil || len(added) == 0 {
		return out
	}
	// Similar text: candidates whose sizes allow MinRenameSimilarity.
	type cand struct {
		from, to int
		sameBase bool
	}
	var cands []cand
	var left []int
	for _, j := range removed {
		if !paired[j] && cs[j].Before.Size <= maxRenameText {
			left = append(left, j)
		}
	}
	// Sizes that allow MinRenameSimilarity: the smaller at least 80% of
	// the larger.
	fits := func(j, i int) bool {
		a, b := cs[j].Before.Size, cs[i].After.Size
		return b <= maxRenameText && 100*min(a, b) >= (MinRenameSimilarity-10)*max(a, b)
	}
	byBase := map[string][]int{}
	for _, i := range added {
		byBase[path.Base(cs[i].Path)] = append(byBase[path.Base(cs[i].Path)], i)
	}
	// Each removed file's likeliest partners: the same base name first,
	// then (when the run is small enough to look at every pair) any other;
	// among them those sharing the most trailing path segments, then the
	// closest in size.
	perFile := max(1, min(renameCandidates, maxCompares/max(1, len(left))))
	every := len(left)*len(added) <= 50*maxCompares
	type ranked struct {
		cand
		tail int
		size int64
	}
	better := func(a, b ranked) bool {
		if a.sameBase != b.sameBase {
			return a.sameBase
		}
		if a.tail != b.tail {
			return a.tail > b.tail
		}
		return a.size < b.size
	}
	for _, j := range left {
		pool := byBase[path.Base(cs[j].Path)]
		if every {
			pool = added
		}
		var top []ranked // the best perFile so far, best first
		for _, i := range pool {
			if !fits(j, i) {
				continue
			}
			r := ranked{cand{j, i, path.Base(cs[j].Path) == path.Base(cs[i].Path)}, sharedTail(cs[j].Path, cs[i].Path), absDiff(cs[i].After.Size, cs[j].Before.Size)}
			k := len(top)
			for k > 0 && better(r, top[k-1]) {
				k--
			}
			if k < perFile {
				top = append(top[:k], append([]ranked{r}, top[k:]...)...)
				top = top[:min(len(top), perFile)]
			}
		}
		for _, r := range top {
			cands = append(cands, r.cand)
		}
		if len(cands) >= maxCompares {
			break
		}
	}
	type scored struct {
		cand
		sim int
	}
	var found []scored
	texts := map[int][]byte{}
	get := func(i int) []byte {
		if t, ok := texts[i]; ok {
			return t
		}
		t, ok := content(&cs[i])
		if !ok || !IsText(t) {
			t = nil
		}
		texts[i] = t
		return t
	}
	for _, c := range cands {
		old, cur := get(c.from), get(c.to)
		if old == nil || cur == nil {
			continue
		}
		if sim := textSimilarity(old, cur); sim >= MinRenameSimilarity {
			found = append(found, scored{cand: c, sim: sim})
		}
	}
	sort.SliceStable(found, func(x, y int) bool {
		if found[x].sim != found[y].sim {
			return found[x].sim > found[y].sim
		}
		return found[x].sameBase && !found[y].sameBase
	})
	taken := map[int]bool{}
	for _, f := range found {
		if taken[f.from] || taken[f.to] {
			continue
		}
		taken[f.from], taken[f.to] = true, true
		from, to := cs[f.from].Path, cs[f.to].Path
		d, _ := renameDiff(get(f.from), get(f.to), from, to)
		out = append(out, Rename{From: from, To: to, Similarity: f.sim, Diff: d})
	}
	sort.SliceStable(out, func(x, y int) bool { return out[x].To < out[y].To })
	return out
}

// renameCandidates is how many partners of one removed file are compared
// at most.
const renameCandidates = 4

// sharedTail counts the trailing path segments a and b have in common.
func sharedTail(a, b string) int {
	n := 0
	for a != "" && b != "" {
		i, k := strings.LastIndexByte(a, '/'), strings.LastIndexByte(b, '/')
		if a[i+1:] != b[k+1:] {
			break
		}
		n++
		if i < 0 || k < 0 {
			break
		}
		a, b = a[:i], b[:k]
	}
	return n
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// textSimilarity is the share (percent, rounded down) of the two texts'
// bytes that lie in lines they have in common.
func textSimilarity(a, b []byte) int {
	if len(a)+len(b) == 0 {
		return 100
	}
	edits, err := lineEdits(context.Background(), string(a), string(b))
	if err != nil {
		return 0
	}
	changed := 0
	for _, e := range edits {
		changed += (e.End - e.Start) + len(e.New)
	}
	return 100 * (len(a) + len(b) - changed) / (len(a) + len(b))
}

// renameDiff is the text diff from a file's old content to its renamed
// one, its headers naming both paths.
func renameDiff(old, cur []byte, from, to string) (string, bool) {
	u, err := unifiedDiff(context.Background(), "a/"+diffLabel(from), "b/"+diffLabel(to), string(old), string(cur))
	if err != nil {
		return "", false
	}
	return Cut(u.String(), MaxOutput), true
}

// contentFromDiff recovers an added or removed file's content from its text
// diff, when the diff holds it whole (one hunk of added or removed lines,
// nothing cut).
func contentFromDiff(c *diff.Change) ([]byte, bool) {
	d := c.TextDiff
	if d == "" || strings.Contains(d, "\n"+CutPrefix) {
		return nil, false
	}
	want := byte('+')
	if c.Kind == diff.Removed {
		want = '-'
	}
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	var b strings.Builder
	hunks := 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "@@"):
			hunks++
		case hunks == 0:
		case l == `\ No newline at end of file`:
			s := b.String()
			b.Reset()
			b.WriteString(strings.TrimSuffix(s, "\n"))
		case l != "" && l[0] == want:
			b.WriteString(l[1:])
			b.WriteByte('\n')
		default:
			return nil, false
		}
	}
	if hunks != 1 {
		return nil, false
	}
	return []byte(b.String()), true
}
