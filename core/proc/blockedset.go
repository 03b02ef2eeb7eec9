package proc

import (
	"cmp"
	"hash/maphash"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/diffgate/diffgate/internal/fspath"
)

// maxBlockedPerKind bounds the distinct blocked actions a run lists of one
// kind; the rest are counted by kind (Result.BlockedDroppedKinds). One
// bound per kind, so that a flood of one kind (1,000 writes to decoys)
// never pushes out another (the read of a secret store, a connect).
const maxBlockedPerKind = 500

// blockedSet keeps the distinct blocked actions of a run, ranked: what
// matters most is kept and listed first, whatever came before it.
//
//   - Kinds rank: a read (of a secret store) first, then every kind that is
//     neither a change to a file nor a limit (a foreign system-call ABI, a
//     privileged call), then net, then the changes to files (write, create,
//     delete, rename, metadata), then the limits (fork, memory).
//   - Within a kind, a target that exists outranks one that does not, and
//     one in the user's home directory (~/.bashrc, ~/.ssh) outranks one
//     elsewhere: a script cannot make many of those to bury the real ones.
//   - A full kind takes a new action only in place of a lower-ranked one,
//     which is then counted as dropped; ties keep the first seen.
type blockedSet struct {
	home    string
	index   map[string]*blockedEntry
	byKind  map[string][]*blockedEntry
	dropped map[string]int
	// gone holds the actions dropped (hashes of kind and target), so that
	// a repeat is not counted again; bounded (maxGone), past which a
	// repeat may be counted twice.
	gone map[uint64]struct{}
	seed maphash.Seed
	seq  int
}

// maxGone bounds blockedSet.gone.
const maxGone = 1 << 17

type blockedEntry struct {
	b     Blocked
	score int
	seq   int
}

func newBlockedSet() *blockedSet {
	home, _ := os.UserHomeDir()
	if r, err := fspath.Resolve(home); err == nil {
		home = r
	}
	return &blockedSet{home: home, index: map[string]*blockedEntry{}, byKind: map[string][]*blockedEntry{}, dropped: map[string]int{},
		gone: map[uint64]struct{}{}, seed: maphash.MakeSeed()}
}

// drop counts the action of key as dropped, once.
func (s *blockedSet) drop(kind, key string) {
	h := maphash.String(s.seed, key)
	if _, ok := s.gone[h]; ok {
		return
	}
	if len(s.gone) < maxGone {
		s.gone[h] = struct{}{}
	}
	s.dropped[kind]++
}

// has reports whether the action of kind on target is in the list.
func (s *blockedSet) has(kind, target string) bool {
	_, ok := s.index[kind+"\x00"+target]
	return ok
}

// add records b (Count times when more than 1): a repeat adds to its count,
// a new one is kept, replaces a lower-ranked one of its kind or is counted
// as dropped. It reports whether b is new in the list.
func (s *blockedSet) add(b Blocked) bool {
	key := b.Kind + "\x00" + b.Target
	n := max(b.Count, 1)
	if e, ok := s.index[key]; ok {
		e.b.Count += n
		return false
	}
	e := &blockedEntry{b: b, score: s.score(b), seq: s.seq}
	e.b.Count = n
	s.seq++
	list := s.byKind[b.Kind]
	if len(list) >= maxBlockedPerKind {
		// The lowest-ranked, and of those the last seen, gives way.
		low := 0
		for i, x := range list {
			if x.score < list[low].score || x.score == list[low].score && x.seq > list[low].seq {
				low = i
			}
		}
		if list[low].score >= e.score {
			s.drop(b.Kind, key)
			return false
		}
		lowKey := list[low].b.Kind + "\x00" + list[low].b.Target
		delete(s.index, lowKey)
		s.drop(b.Kind, lowKey)
		list = slices.Delete(list, low, low+1)
	}
	s.byKind[b.Kind] = append(list, e)
	s.index[key] = e
	return true
}

// score ranks a target within its kind: an existing one (+2), one in the
// user's home directory (+1).
func (s *blockedSet) score(b Blocked) int {
	if !filepath.IsAbs(b.Target) {
		return 0
	}
	score := 0
	if _, err := os.Lstat(b.Target); err == nil {
		score += 2
	}
	if s.home != "" && s.home != "/" && fspath.Within(b.Target, s.home) {
		score++
	}
	return score
}

// kindRank orders the kinds in the list (higher first).
func kindRank(kind string) int {
	switch kind {
	case "read":
		return 5
	case "net":
		return 3
	case "write", "create", "delete", "rename", "metadata":
		return 2
	case "fork", "memory":
		return 1
	}
	return 4 // a foreign ABI, a privileged call, anything new
}

// list returns the kept actions, highest-ranked kind first, then by score,
// then in the order first seen; and how many were dropped, by kind.
func (s *blockedSet) list() ([]Blocked, map[string]int) {
	var all []*blockedEntry
	for _, l := range s.byKind {
		all = append(all, l...)
	}
	slices.SortFunc(all, func(a, b *blockedEntry) int {
		return cmp.Or(cmp.Compare(kindRank(b.b.Kind), kindRank(a.b.Kind)), cmp.Compare(b.score, a.score), cmp.Compare(a.seq, b.seq))
	})
	out := make([]Blocked, len(all))
	for i, e := range all {
		out[i] = e.b
	}
	var dropped map[string]int
	if len(s.dropped) > 0 {
		dropped = maps.Clone(s.dropped)
	}
	return out, dropped
}

// droppedTotal sums a by-kind count of dropped actions.
func droppedTotal(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
