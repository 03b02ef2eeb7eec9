package report

import (
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

// Rename pairs a removed file with an added file of the same content: the
// reports show the pair as a rename. Both stay changes of their own, and the
// allowlist judges each path.
type Rename struct {
	From, To string // the removed path and the added one
}

// Renames finds the renames among the changes: a removed regular file and
// an added one with the same non-empty content (SHA-256 and size), paired
// in path order when several share a content.
func (r *Report) Renames() []Rename {
	type key struct {
		sum  string
		size int64
	}
	isFile := func(e *snapshot.Entry) bool {
		return e != nil && e.Type == snapshot.File && e.SHA256 != "" && e.Size > 0
	}
	removed := map[key][]string{}
	for i := range r.Changes {
		c := &r.Changes[i]
		if c.Kind == diff.Removed && isFile(c.Before) {
			k := key{c.Before.SHA256, c.Before.Size}
			removed[k] = append(removed[k], c.Path)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	var out []Rename
	for i := range r.Changes {
		c := &r.Changes[i]
		if c.Kind != diff.Added || !isFile(c.After) {
			continue
		}
		k := key{c.After.SHA256, c.After.Size}
		if from := removed[k]; len(from) > 0 {
			out = append(out, Rename{From: from[0], To: c.Path})
			removed[k] = from[1:]
		}
	}
	return out
}

// renameNotes maps each path of a rename to its detail: "renamed to NEW"
// for the removed one, "renamed from OLD" for the added one.
func (r *Report) renameNotes() map[string]string {
	rs := r.Renames()
	if len(rs) == 0 {
		return nil
	}
	m := make(map[string]string, 2*len(rs))
	for _, rn := range rs {
		m[rn.From] = "renamed to " + displayPath(rn.To)
		m[rn.To] = "renamed from " + displayPath(rn.From)
	}
	return m
}

// detailWith is changeDetail led by the change's rename note, if any.
func detailWith(c *diff.Change, notes map[string]string) string {
	d := changeDetail(c)
	if n, ok := notes[c.Path]; ok {
		if d == "" {
			return n
		}
		return n + ", " + d
	}
	return d
}
