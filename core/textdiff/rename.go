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
	removed, byContent := removedFiles(cs)
	if len(removed) == 0 {
		return nil
	}
	out, added, paired := sameContent(cs, byContent)
	if content == nil || len(added) == 0 {
		return out
	}
	var left []int
	for _, j := range removed {
		if !paired[j] && cs[j].Before.Size <= maxRenameText {
			left = append(left, j)
		}
	}
	texts := &renameTexts{cs: cs, content: content, got: map[int][]byte{}}
	found := similar(similarCandidates(cs, left, added, maxCompares), texts)
	out = append(out, pickRenames(cs, found, texts)...)
	sort.SliceStable(out, func(x, y int) bool { return out[x].To < out[y].To })
	return out
}

// contentKey identifies a file's content: its SHA-256 and size.
type contentKey struct {
	sum  string
	size int64
}

// removedFiles returns the removed regular files of cs that may be half of
// a rename (indices into cs), and the same indexed by content.
func removedFiles(cs []diff.Change) (removed []int, byContent map[contentKey][]int) {
	byContent = map[contentKey][]int{}
	for i := range cs {
		if c := &cs[i]; c.Kind == diff.Removed && isRenameFile(c.Before) {
			removed = append(removed, i)
			k := contentKey{c.Before.SHA256, c.Before.Size}
			byContent[k] = append(byContent[k], i)
		}
	}
	return removed, byContent
}

// sameContent pairs each added regular file with a removed one of the same
// content (byContent, taken from as it pairs), the one with its base name
// first. It returns the renames, the added files left without a partner
// and the removed files paired.
func sameContent(cs []diff.Change, byContent map[contentKey][]int) (out []Rename, added []int, paired map[int]bool) {
	paired = map[int]bool{}
	for i := range cs {
		c := &cs[i]
		if c.Kind != diff.Added || !isRenameFile(c.After) {
			continue
		}
		from := byContent[contentKey{c.After.SHA256, c.After.Size}]
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
		byContent[contentKey{c.After.SHA256, c.After.Size}] = append(from[:best:best], from[best+1:]...)
	}
	return out, added, paired
}

// renameCand is a removed file (from) and an added one (to) that may be a
// rename with edits (indices into the changes).
type renameCand struct {
	from, to int
	sameBase bool
}

// rankedCand is a candidate with what ranks it: the trailing path segments
// its paths share and the difference of their sizes.
type rankedCand struct {
	renameCand
	tail int
	size int64
}

// better ranks a before b: the same base name first, then the most
// trailing path segments in common, then the closest in size.
func (a rankedCand) better(b rankedCand) bool {
	if a.sameBase != b.sameBase {
		return a.sameBase
	}
	if a.tail != b.tail {
		return a.tail > b.tail
	}
	return a.size < b.size
}

// similarCandidates returns the pairs worth comparing for a rename with
// edits: each removed file of left with its likeliest partners among
// added, the same base name first, then (when the run is small enough to
// look at every pair) any other; about maxCompares pairs at most.
func similarCandidates(cs []diff.Change, left, added []int, maxCompares int) []renameCand {
	byBase := map[string][]int{}
	for _, i := range added {
		byBase[path.Base(cs[i].Path)] = append(byBase[path.Base(cs[i].Path)], i)
	}
	perFile := max(1, min(renameCandidates, maxCompares/max(1, len(left))))
	every := len(left)*len(added) <= 50*maxCompares
	var cands []renameCand
	for _, j := range left {
		pool := byBase[path.Base(cs[j].Path)]
		if every {
			pool = added
		}
		for _, r := range topPartners(cs, j, pool, perFile) {
			cands = append(cands, r.renameCand)
		}
		if len(cands) >= maxCompares {
			break
		}
	}
	return cands
}

// topPartners returns the best n partners (best first) of removed file j
// among pool whose sizes allow MinRenameSimilarity: the smaller at least
// 80% of the larger.
func topPartners(cs []diff.Change, j int, pool []int, n int) []rankedCand {
	var top []rankedCand
	for _, i := range pool {
		a, b := cs[j].Before.Size, cs[i].After.Size
		if b > maxRenameText || 100*min(a, b) < (MinRenameSimilarity-10)*max(a, b) {
			continue
		}
		r := rankedCand{renameCand{j, i, path.Base(cs[j].Path) == path.Base(cs[i].Path)}, sharedTail(cs[j].Path, cs[i].Path), absDiff(b, a)}
		k := len(top)
		for k > 0 && r.better(top[k-1]) {
			k--
		}
		if k < n {
			top = append(top[:k], append([]rankedCand{r}, top[k:]...)...)
			top = top[:min(len(top), n)]
		}
	}
	return top
}

// renameTexts reads the contents compared for renames, each once; a
// content that cannot be read or is not text is nil.
type renameTexts struct {
	cs      []diff.Change
	content func(c *diff.Change) ([]byte, bool)
	got     map[int][]byte
}

func (t *renameTexts) get(i int) []byte {
	if b, ok := t.got[i]; ok {
		return b
	}
	b, ok := t.content(&t.cs[i])
	if !ok || !IsText(b) {
		b = nil
	}
	t.got[i] = b
	return b
}

// scoredCand is a candidate with its similarity (percent).
type scoredCand struct {
	renameCand
	sim int
}

// similar returns the candidates at least MinRenameSimilarity alike, the
// most alike first (the same base name first among equals).
func similar(cands []renameCand, texts *renameTexts) []scoredCand {
	var found []scoredCand
	for _, c := range cands {
		old, cur := texts.get(c.from), texts.get(c.to)
		if old == nil || cur == nil {
			continue
		}
		if sim := textSimilarity(old, cur); sim >= MinRenameSimilarity {
			found = append(found, scoredCand{renameCand: c, sim: sim})
		}
	}
	sort.SliceStable(found, func(x, y int) bool {
		if found[x].sim != found[y].sim {
			return found[x].sim > found[y].sim
		}
		return found[x].sameBase && !found[y].sameBase
	})
	return found
}

// pickRenames takes the renames from found, best first, each file in one
// rename at most, with the diff from the old content.
func pickRenames(cs []diff.Change, found []scoredCand, texts *renameTexts) []Rename {
	var out []Rename
	taken := map[int]bool{}
	for _, f := range found {
		if taken[f.from] || taken[f.to] {
			continue
		}
		taken[f.from], taken[f.to] = true, true
		from, to := cs[f.from].Path, cs[f.to].Path
		d, _ := renameDiff(texts.get(f.from), texts.get(f.to), from, to)
		out = append(out, Rename{From: from, To: to, Similarity: f.sim, Diff: d})
	}
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
