package policy

import (
	"slices"
	"strings"
)

// indexMin is the rule count from which Decide uses the index: below it,
// trying every rule is as fast.
const indexMin = 16

// ruleIndex finds the rules that can match a path without trying them all.
// A literal entry can only match its own path, an ancestor of it (as a
// directory entry) or, for a directory change, itself: it is found by looking
// up the path and each ancestor. A glob can only match a path that starts
// with the glob's literal prefix (the text before its first metacharacter,
// less a trailing "/", since "a/**" also matches "a"): it is found by
// looking up the path's prefixes of each length some glob's literal prefix
// has.
//
// A glob with no literal prefix ("**/*.o", "*/cache") is indexed by its
// literal tail instead, the text after its last metacharacter: whatever it
// matches ends with that tail, within one segment, and what it matches is
// the path or an ancestor, so the tail ends one of the path's segments.
type ruleIndex struct {
	n        int                // len(Rules) when built
	literal  map[string][]int32 // a literal rule's base -> rule numbers
	prefix   map[string][]int32 // a glob's literal prefix -> rule numbers
	lens     []int              // the distinct lengths of prefix's keys, ascending
	tail     map[string][]int32 // the literal tail of a glob without prefix -> rule numbers
	tailLens []int              // the distinct lengths of tail's keys, ascending
}

// index returns the policy's index, building it on first use (or again when
// Rules was changed in length since).
func (p *Policy) index() *ruleIndex {
	if idx := p.idx.Load(); idx != nil && idx.n == len(p.Rules) {
		return idx
	}
	idx := &ruleIndex{n: len(p.Rules), literal: map[string][]int32{}, prefix: map[string][]int32{}, tail: map[string][]int32{}}
	for i := range p.Rules {
		r := &p.Rules[i]
		if !r.glob {
			idx.literal[r.base] = append(idx.literal[r.base], int32(i))
			continue
		}
		if lit := literalPrefix(r.Pattern); lit != "" {
			idx.prefix[lit] = append(idx.prefix[lit], int32(i))
			idx.lens = append(idx.lens, len(lit))
			continue
		}
		t := literalTail(r.Pattern)
		idx.tail[t] = append(idx.tail[t], int32(i))
		idx.tailLens = append(idx.tailLens, len(t))
	}
	slices.Sort(idx.lens)
	idx.lens = slices.Compact(idx.lens)
	slices.Sort(idx.tailLens)
	idx.tailLens = slices.Compact(idx.tailLens)
	p.idx.Store(idx)
	return idx
}

// literalPrefix is the text of a glob before its first metacharacter, less a
// trailing "/".
func literalPrefix(pattern string) string {
	lit := pattern
	if i := strings.IndexAny(pattern, "*?[{\\"); i >= 0 {
		lit = pattern[:i]
	}
	return strings.TrimSuffix(lit, "/")
}

// literalTail is the text of a glob after its last metacharacter and its
// last "/", less a trailing "/": the end of the last segment of whatever it
// matches.
func literalTail(pattern string) string {
	t := strings.TrimSuffix(pattern, "/")
	t = t[strings.LastIndexAny(t, "*?[]{}\\")+1:]
	return t[strings.LastIndexByte(t, '/')+1:]
}

// candidates appends to buf, in ascending order without repeats, the numbers
// of the rules that can match path p.
func (idx *ruleIndex) candidates(p string, buf []int32) []int32 {
	buf = append(buf, idx.literal[p]...)
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			buf = append(buf, idx.literal[p[:i]]...)
		}
	}
	for _, n := range idx.lens {
		if n > len(p) {
			break
		}
		buf = append(buf, idx.prefix[p[:n]]...)
	}
	if len(idx.tail) > 0 {
		for rest := p; ; {
			seg, more, ok := strings.Cut(rest, "/")
			for _, n := range idx.tailLens {
				if n > len(seg) {
					break
				}
				buf = append(buf, idx.tail[seg[len(seg)-n:]]...)
			}
			if !ok {
				break
			}
			rest = more
		}
	}
	slices.Sort(buf)
	return slices.Compact(buf)
}
