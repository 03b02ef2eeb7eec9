package snapshot

import "unsafe"

// zname is an entry's name (relative to its directory) whose bytes are
// followed in memory by a NUL: a system call can take it as it is, where a
// Go string is first copied into a new NUL-terminated buffer (one
// allocation per call, per entry of a walk). Listings make them with
// pathBlock; other callers with toZname. A struct, not a string type, so
// that no string (a constant least of all) becomes one unnoticed.
type zname struct{ s string }

// toZname copies name into a zname.
func toZname(name string) zname {
	s := name + "\x00"
	return zname{s[:len(name)]}
}

// String returns the name.
func (n zname) String() string { return n.s }

// ptr returns the address of the name's first byte, the NUL-terminated
// string system calls take. A name is never empty.
func (n zname) ptr() *byte { return unsafe.StringData(n.s) }

// pathBlock holds a directory's paths, prefix+name each followed by a NUL,
// back to back: one allocation per listing instead of one per entry. The
// block is never written again once a path is cut from it, so the paths are
// plain immutable strings (kept alive by any of them).
type pathBlock []byte

// newPathBlock returns an empty block with room for every name of the
// listing in sc below prefix.
func newPathBlock(sc *scratch, prefix string) pathBlock {
	n := 0
	for _, de := range sc.ents {
		n += len(prefix) + int(de.n) + 1
	}
	return make(pathBlock, 0, n)
}

// add appends prefix+name and a NUL, and returns the path and its name.
func (b *pathBlock) add(prefix string, name []byte) (rel string, z zname) {
	start := len(*b)
	*b = append(*b, prefix...)
	*b = append(*b, name...)
	*b = append(*b, 0)
	rel = unsafe.String(&(*b)[start], len(*b)-start-1)
	return rel, zname{rel[len(prefix):]}
}
