//go:build !js

package history

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/gcpause"
)

// The hash cache is one BLOB per workspace:
//
//	"DGHC" 0x04, uvarint length of the metadata, the metadata, then the
//	raw 32-byte SHA-256 of every usable regular file, in order.
//
// The metadata is root, has-created_at (0/1), created_at (varint ns),
// flags (uvarint; bit 0: listed), the entry count, the part table (see
// cachePart: a cache of many entries is written in parts that decode on
// cores of their own), then per entry (in the manifest's order, sorted by
// path): the prefix length shared with the previous path in its part, the
// rest of the path, its kind (one byte, see cacheKind), dev, ino
// (uvarint), size, mtime, ctime (varint ns), for a usable symlink its
// target, and for a usable entry its extended attributes
// (snapshot.Entry.Xattr, see enc.xattr). A manifest whose every directory
// lists all its names (snapshot.Manifest.Listed: a walk's) keeps every
// entry, so that the next before-snapshot can take an unchanged
// directory's names from the cache; any other keeps only regular files
// with a hash and no error, which is all a before-snapshot can reuse then. Nothing is compressed: hashes would
// not shrink, and inflating the metadata was half of loading the cache at
// the start of every run.
//
// Earlier versions wrote format 0x03 (0x04 without extended attributes),
// 0x02 (no flags, no kinds: regular files only) and 0x01 (0x02 with the
// metadata DEFLATE'd); all are still read. Their entries have no record
// of extended attributes, so a walk reuses no hash from them (a file's
// attributes are read with its content): the first run after an upgrade
// hashes the workspace again.
const (
	cacheMagic        = "DGHC\x04"
	cacheMagicKinds   = "DGHC\x03"
	cacheMagicFiles   = "DGHC\x02"
	cacheMagicDeflate = "DGHC\x01"
)

// cacheListed is the metadata's flag for a cache of a Listed manifest.
const cacheListed = 1

// maxCacheMeta bounds the decompressed size of a cache's metadata, and
// maxCachePath the length of one path (or path suffix) in it.
const (
	maxCacheMeta = 1 << 30
	maxCachePath = 1 << 24
)

// cacheTypes are the entry types by their kind in a cache (the kind's low
// bits); cacheUnusable marks an entry of which only the name may be used.
var cacheTypes = [...]snapshot.Type{snapshot.File, snapshot.Dir, snapshot.Symlink, snapshot.FIFO,
	snapshot.Socket, snapshot.Block, snapshot.Char, snapshot.Unknown}

const cacheUnusable = 0x80

// cacheKind returns how a cache of a manifest (listed: Manifest.Listed)
// keeps e: its type's index in cacheTypes, with cacheUnusable set when
// nothing recorded of it may be reused (an error, a file without a hash, a
// symlink without a target); keep is false when the cache leaves e out.
// Kind 0 is a usable regular file, the only kind a cache holds a hash of.
func cacheKind(e *snapshot.Entry, listed bool) (kind byte, keep bool) {
	if cacheable(e) {
		return 0, true
	}
	if !listed {
		return 0, false
	}
	k := slices.Index(cacheTypes[:], e.Type)
	if k < 0 {
		k = slices.Index(cacheTypes[:], snapshot.Unknown)
	}
	kind = byte(k)
	if e.Err != "" || e.Type == snapshot.File || (e.Type == snapshot.Symlink && e.Target == "") {
		kind |= cacheUnusable
	}
	return kind, true
}

// usableLink reports whether a cache entry of that kind holds a target.
func usableLink(kind byte) bool {
	return cacheTypes[kind&^cacheUnusable] == snapshot.Symlink && kind&cacheUnusable == 0
}

// listedCache says whether a cache of m keeps every entry (see cacheKind).
func listedCache(m *snapshot.Manifest) bool { return m.Listed && !m.Seed }

func encodeCache(m *snapshot.Manifest) ([]byte, int) { return writeCache(m, true) }

// writeCache encodes m in the current format, or without extended
// attributes in format 0x03 (which only tests write).
func writeCache(m *snapshot.Manifest, xattrs bool) ([]byte, int) {
	listed := listedCache(m)
	n, files := 0, 0
	for i := range m.Entries {
		if k, keep := cacheKind(&m.Entries[i], listed); keep {
			n++
			if k == 0 {
				files++
			}
		}
	}
	meta := enc{b: make([]byte, 0, 64+len(m.Entries)*40)}
	meta.str(m.Root)
	meta.bool(!m.CreatedAt.IsZero())
	if !m.CreatedAt.IsZero() {
		meta.int(m.CreatedAt.UnixNano())
	}
	var flags uint64
	if listed {
		flags |= cacheListed
	}
	meta.uint(flags)
	meta.uint(uint64(n))
	sums := make([]byte, 32*files)
	// Format 0x04 is written in parts that decode on cores of their own:
	// each starts with a whole path and numbers extended attribute
	// records anew (see cachePart).
	nparts := 1
	if xattrs && n >= cachePartMin {
		nparts = cacheParts
	}
	body, parts := encodeEntries(m, listed, xattrs, n, nparts, sums)
	if xattrs {
		meta.uint(uint64(max(len(parts), 1)))
		for _, p := range parts[min(1, len(parts)):] {
			meta.uint(uint64(p.first))
			meta.uint(uint64(p.off))
			meta.uint(uint64(p.hash))
		}
	}
	meta.b = append(meta.b, body...)
	magic := cacheMagic
	if !xattrs {
		magic = cacheMagicKinds
	}
	out := enc{b: make([]byte, 0, len(magic)+10+len(meta.b)+len(sums))}
	out.b = append(out.b, magic...)
	out.raw(meta.b)
	out.b = append(out.b, sums...)
	return out.b, n
}

// encodeEntries encodes the n entries m's cache keeps, in nparts parts,
// writing the usable files' raw hashes into sums.
func encodeEntries(m *snapshot.Manifest, listed, xattrs bool, n, nparts int, sums []byte) ([]byte, []cachePart) {
	var parts []cachePart
	body := enc{b: make([]byte, 0, 64+len(m.Entries)*40)}
	prev, k, kept := "", 0, 0
	var seen map[string]uint64 // extended attribute records, numbered
	for i := range m.Entries {
		x := &m.Entries[i]
		kind, keep := cacheKind(x, listed)
		if !keep {
			continue
		}
		if kept == len(parts)*n/nparts {
			parts = append(parts, cachePart{first: kept, off: len(body.b), hash: k})
			prev, seen = "", map[string]uint64{}
		}
		kept++
		if kind == 0 {
			hex.Decode(sums[32*k:32*k+32], []byte(x.SHA256)) // cacheable checked the form
			k++
		}
		shared := 0
		for shared < len(prev) && shared < len(x.Path) && prev[shared] == x.Path[shared] {
			shared++
		}
		body.uint(uint64(shared))
		body.str(x.Path[shared:])
		body.b = append(body.b, kind)
		body.uint(x.Dev)
		body.uint(x.Ino)
		body.int(x.Size)
		body.int(x.MTime)
		body.int(x.CTime)
		if usableLink(kind) {
			body.str(x.Target)
		}
		if xattrs && kind&cacheUnusable == 0 {
			body.xattr(x.Xattr, seen)
		}
		prev = x.Path
	}
	return body.b, parts
}

func cacheable(e *snapshot.Entry) bool {
	return e.Type == snapshot.File && e.Err == "" && isHexSHA(e.SHA256)
}

// decodeCache decodes a hash cache blob (see cacheMagic) into a manifest of
// its entries.
func decodeCache(b []byte) (*snapshot.Manifest, error) {
	if len(b) < len(cacheMagic) {
		return nil, errors.New("unknown hash cache format")
	}
	deflated, kinds, xattrs := false, false, false
	switch string(b[:len(cacheMagic)]) {
	case cacheMagic:
		kinds, xattrs = true, true
	case cacheMagicKinds:
		kinds = true
	case cacheMagicFiles:
	case cacheMagicDeflate:
		deflated = true
	default:
		return nil, errors.New("unknown hash cache format")
	}
	outer := dec{b: b[len(cacheMagic):]}
	z := outer.bytes()
	if outer.err != nil {
		return nil, errCorruptBlob
	}
	sums := outer.b
	if len(sums)%32 != 0 {
		return nil, errCorruptBlob
	}
	meta := z
	if deflated {
		// Read once: the next run writes the current format.
		fr := flate.NewReader(bytes.NewReader(z))
		defer fr.Close()
		var err error
		if meta, err = io.ReadAll(io.LimitReader(fr, maxCacheMeta+1)); err != nil || len(meta) > maxCacheMeta {
			return nil, cacheErr(err)
		}
	}
	c := &cacheReader{b: meta, kinds: kinds, withXattrs: xattrs}
	m := c.header()
	n := c.uvar()
	// Every entry takes at least 8 bytes of metadata (a kind and 7
	// varints); a file-only cache has one hash per entry.
	if c.err != nil || (kinds && n > uint64(len(meta))/8) || (!kinds && n != uint64(len(sums)/32)) {
		return nil, cacheErr(c.err)
	}
	parts := []cachePart{{}}
	if xattrs {
		parts = c.parts(n, len(sums)/32)
	}
	if c.err != nil {
		return nil, cacheErr(c.err)
	}
	m.Entries = make([]snapshot.Entry, n)
	if err := decodeParts(m.Entries, c.b, sums, parts, kinds, xattrs); err != nil {
		return nil, cacheErr(err)
	}
	return m, nil
}

// decodeParts decodes the entries' bytes (body) and their hashes into es,
// each part on a goroutine of its own: its entries, then its hashes
// written out in hex.
func decodeParts(es []snapshot.Entry, body, sums []byte, parts []cachePart, kinds, xattrs bool) error {
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		end := cachePart{first: len(es), off: len(body), hash: len(sums) / 32}
		if i+1 < len(parts) {
			end = parts[i+1]
		}
		wg.Go(func() {
			part := es[p.first:end.first]
			r := &cacheReader{b: body[p.off:end.off], kinds: kinds, withXattrs: xattrs}
			r.entries(part)
			if r.err == nil && len(r.b) > 0 {
				r.fail(errCorruptBlob)
			}
			if r.err == nil && !setHashes(part, hexSums(sums[32*p.hash:32*end.hash])) {
				r.fail(errCorruptBlob)
			}
			errs[i] = r.err
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// cacheReader reads the metadata of a hash cache: varints and
// length-prefixed strings, parsed in place. The first error is kept; later
// reads return zero values.
type cacheReader struct {
	b []byte // what is left to read
	// kinds: the metadata has flags and each entry a kind (format 0x03);
	// xattrs: each usable entry its extended attributes too (0x04).
	kinds, withXattrs bool
	err               error
	// xattrs are the extended attribute records read so far, by number.
	xattrs []string
}

func (c *cacheReader) fail(e error) {
	if c.err == nil {
		c.err = e
	}
}

// uvar reads an unsigned varint.
func (c *cacheReader) uvar() uint64 {
	if c.err != nil {
		return 0
	}
	v, n := binary.Uvarint(c.b)
	if n <= 0 {
		if n == 0 {
			c.fail(io.ErrUnexpectedEOF)
		} else {
			c.fail(errCorruptBlob)
		}
		return 0
	}
	c.b = c.b[n:]
	return v
}

// svar reads a signed (zig-zag) varint.
func (c *cacheReader) svar() int64 {
	u := c.uvar()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// appendBytes reads a length-prefixed string (at most maxCachePath bytes)
// and appends it to dst.
func (c *cacheReader) appendBytes(dst []byte) []byte {
	return c.appendLen(dst, c.uvar())
}

// appendLen reads a string of n bytes (at most maxCachePath) and appends
// it to dst.
func (c *cacheReader) appendLen(dst []byte, n uint64) []byte {
	if c.err != nil || n > maxCachePath {
		c.fail(errCorruptBlob)
		return dst
	}
	if n > uint64(len(c.b)) {
		c.fail(io.ErrUnexpectedEOF)
		return dst
	}
	dst = append(dst, c.b[:n]...)
	c.b = c.b[n:]
	return dst
}

// header reads the root and the creation time.
func (c *cacheReader) header() *snapshot.Manifest {
	m := &snapshot.Manifest{Root: string(c.appendBytes(nil))}
	if c.uvar() != 0 {
		m.CreatedAt = time.Unix(0, c.svar())
	}
	if c.kinds {
		m.Listed = c.uvar()&cacheListed != 0
	}
	return m
}

// pathChunk is the size of the blocks decoded paths share: one allocation
// per block rather than one per path.
const pathChunk = 64 << 10

// entries reads the file entries into es: each path as the length of the
// prefix it shares with the previous one and the rest, then dev, ino, size,
// mtime, ctime.
func (c *cacheReader) entries(es []snapshot.Entry) {
	var path []byte // the previous path, then the current one
	var block strings.Builder
	first := 0 // es[first:i] have their paths in block, not yet assigned
	var ends []int
	flush := func(upto int) {
		s, start := block.String(), 0
		for k, end := range ends {
			es[first+k].Path = s[start:end]
			start = end
		}
		block, ends, first = strings.Builder{}, ends[:0], upto
	}
	for i := range es {
		shared := c.uvar()
		if c.err != nil || shared > uint64(len(path)) {
			c.fail(errCorruptBlob)
			return
		}
		path = c.appendBytes(path[:shared])
		if block.Len()+len(path) > block.Cap() {
			flush(i)
			block.Grow(max(pathChunk, len(path)))
		}
		block.Write(path)
		ends = append(ends, block.Len())
		e := &es[i]
		e.Type, e.UID, e.GID = snapshot.File, -1, -1
		var kind byte
		if c.kinds {
			kind = c.kind(e)
		}
		e.Dev, e.Ino = c.uvar(), c.uvar()
		e.Size, e.MTime, e.CTime = c.svar(), c.svar(), c.svar()
		if c.err == nil && usableLink(kind) {
			e.Target = string(c.appendBytes(nil))
		}
		if c.withXattrs && e.Err == "" {
			e.Xattr = c.xattr()
		}
	}
	flush(len(es))
}

// kind reads an entry's kind (see cacheKind) and sets its type; an entry
// of which nothing may be reused gets an error, which no reuse accepts.
func (c *cacheReader) kind(e *snapshot.Entry) byte {
	if c.err != nil {
		return 0
	}
	if len(c.b) == 0 || int(c.b[0]&^cacheUnusable) >= len(cacheTypes) {
		c.fail(errCorruptBlob)
		return 0
	}
	k := c.b[0]
	c.b = c.b[1:]
	e.Type = cacheTypes[k&^cacheUnusable]
	if k&cacheUnusable != 0 {
		e.Err = "not kept by the hash cache"
	}
	return k
}

// cachePart is where a part of a format 0x04 cache starts: its first
// entry's number, its offset in the entries' bytes, and the number of the
// first hash it holds. The metadata has the number of parts after the entry
// count, then first, off and hash of every part but the first (which
// starts at zero).
type cachePart struct{ first, off, hash int }

// cacheParts is how many parts a cache of at least cachePartMin entries is
// written in: enough for the cores of most machines that run it; one part
// on a core of its own takes about 15 ms on 125,000 entries.
const (
	cacheParts   = 4
	cachePartMin = 8192
)

// parts reads the part table of a cache of n entries and nsums hashes:
// every part starts after the one before and within the bounds.
func (c *cacheReader) parts(n uint64, nsums int) []cachePart {
	np := c.uvar()
	if c.err != nil || np == 0 || np > 1024 || np > n+1 {
		c.fail(errCorruptBlob)
		return nil
	}
	parts := []cachePart{{}}
	for range np - 1 {
		first, off, hash := c.uvar(), c.uvar(), c.uvar()
		last := parts[len(parts)-1]
		if c.err != nil || first <= uint64(last.first) || first > n || off <= uint64(last.off) ||
			hash < uint64(last.hash) || hash > uint64(nsums) {
			c.fail(errCorruptBlob)
			return nil
		}
		parts = append(parts, cachePart{first: int(first), off: int(off), hash: int(hash)})
	}
	if last := parts[len(parts)-1]; last.off > len(c.b) {
		c.fail(errCorruptBlob)
		return nil
	}
	return parts
}

// xattr reads what enc.xattr wrote.
func (c *cacheReader) xattr() string {
	switch n := c.uvar(); {
	case n == 0 || c.err != nil:
		return ""
	case n == 1:
		return snapshot.XattrNone
	case n == 3:
		x := string(c.appendBytes(nil))
		c.xattrs = append(c.xattrs, x)
		return x
	case n%2 == 0 && (n-2)/2 < uint64(len(c.xattrs)):
		return c.xattrs[(n-2)/2]
	default:
		c.fail(errCorruptBlob)
		return ""
	}
}

// hexSums writes raw 32-byte sums out in hex, back to back: every hash in
// one string, written once (hex.EncodeToString would build it twice).
func hexSums(sums []byte) string {
	n := len(sums) / 32
	var all strings.Builder
	all.Grow(64 * n)
	var h [64]byte
	for i := range n {
		hex.Encode(h[:], sums[32*i:32*i+32])
		all.Write(h[:])
	}
	return all.String()
}

// setHashes gives each usable regular file its hash from hs (hexSums: one
// for each, in order); false if their numbers differ.
func setHashes(es []snapshot.Entry, hs string) bool {
	n, k := len(hs)/64, 0
	for i := range es {
		if e := &es[i]; e.Type == snapshot.File && e.Err == "" {
			if k == n {
				return false
			}
			e.SHA256 = hs[64*k : 64*k+64]
			k++
		}
	}
	return k == n
}

// cacheErr is the error for undecodable cache metadata: corrupt, or
// larger than maxCacheMeta.
func cacheErr(err error) error {
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, errCorruptBlob) {
		return fmt.Errorf("decompress: %w", err)
	}
	return errCorruptBlob
}

// HashCache returns the file entries (path, dev, ino, size, mtime, ctime,
// SHA-256) of the workspace's latest recorded after-manifest, with its Root
// and CreatedAt, for snapshot.Options.Prior; nil, nil when there is none.
func (db *DB) HashCache(ctx context.Context, workspace string) (*snapshot.Manifest, error) {
	if db.pg {
		if c := db.caches(); c != nil {
			return c.HashCache(ctx, workspace)
		}
		return nil, nil
	}
	// Decoded from the driver's bytes (sql.RawBytes), not from a copy: the
	// blob of a large tree is tens of MiB.
	rows, err := db.sql.QueryContext(ctx, "SELECT data FROM hash_cache WHERE workspace = ?", blob(workspace))
	if err != nil {
		return nil, fmt.Errorf("hash cache: %w", dbError(err))
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("hash cache: %w", dbError(err))
		}
		return nil, nil
	}
	var data sql.RawBytes
	if err := rows.Scan(&data); err != nil {
		return nil, fmt.Errorf("hash cache: %w", dbError(err))
	}
	release := gcpause.Hold() // the entries are all kept
	m, err := decodeCache(data)
	release()
	if err != nil {
		return nil, fmt.Errorf("hash cache of %s: %w", workspace, err)
	}
	db.memo.set(workspace, m)
	return m, nil
}

// cacheMemo is what a DB remembers of the hash cache it last loaded: the
// workspace, a fingerprint of the entries and the creation time. A run
// whose after-manifest has exactly those entries (a no-op run, the common
// case) then neither encodes nor writes the same cache again: about a tenth
// of a repeated no-op run on 50,000 files.
//
// Keeping the stored cache instead of the new one is always sound: its
// entries are the same, only its creation time is older, and an older
// creation time makes the reuse rule stricter (a ctime must be older than
// CreatedAt minus the granularity), never looser. It would cost speed only
// if it kept a file "racy" (changed just before the cache was taken) for
// good: so the cache is written again when any entry's ctime is within
// racyMargin of the stored creation time. A fingerprint collision, or
// another process's cache written in between, likewise only keeps a cache
// that is valid on its own.
type cacheMemo struct {
	mu sync.Mutex
	ws string
	// sum is the fingerprint, computed in the background while the run
	// walks (done closes when it is there).
	sum  uint64
	done chan struct{}
	at   int64 // the loaded cache's CreatedAt, in ns
}

// racyMargin is larger than any timestamp granularity a walk assumes (2 s
// unless a test sets it).
const racyMargin = int64(10 * time.Second)

// cacheSeed seeds the fingerprints of one process.
var cacheSeed = maphash.MakeSeed()

// cacheFingerprint hashes what the cache keeps of m (its cacheable entries'
// path, dev, ino, size, mtime, ctime and hash, and the root) and returns the
// newest ctime among those entries.
func cacheFingerprint(m *snapshot.Manifest) (sum uint64, newest int64) {
	var h maphash.Hash
	h.SetSeed(cacheSeed)
	h.WriteString(m.Root)
	listed := listedCache(m)
	if listed {
		h.WriteByte(0)
	}
	// Written in blocks: the hash of the whole stream is the same, and one
	// call per block rather than five per entry is a third of the time.
	b := make([]byte, 0, 64<<10)
	for i := range m.Entries {
		x := &m.Entries[i]
		kind, keep := cacheKind(x, listed)
		if !keep {
			continue
		}
		b = append(b, x.Path...)
		b = append(b, 0, kind) // paths hold no NUL: it ends one
		b = binary.LittleEndian.AppendUint64(b, x.Dev)
		b = binary.LittleEndian.AppendUint64(b, x.Ino)
		b = binary.LittleEndian.AppendUint64(b, uint64(x.Size))
		b = binary.LittleEndian.AppendUint64(b, uint64(x.MTime))
		b = binary.LittleEndian.AppendUint64(b, uint64(x.CTime))
		switch {
		case kind == 0:
			b = append(b, x.SHA256...)
		case usableLink(kind):
			b = append(b, x.Target...)
			b = append(b, 0)
		}
		if kind&cacheUnusable == 0 {
			b = append(b, x.Xattr...)
			b = append(b, 0)
		}
		newest = max(newest, x.CTime)
		if len(b) >= 60<<10 {
			h.Write(b)
			b = b[:0]
		}
	}
	h.Write(b)
	return h.Sum64(), newest
}

// set remembers the cache just loaded for ws.
func (c *cacheMemo) set(ws string, m *snapshot.Manifest) {
	done := make(chan struct{})
	c.mu.Lock()
	c.ws, c.done, c.at = ws, done, m.CreatedAt.UnixNano()
	c.mu.Unlock()
	go func() {
		sum, _ := cacheFingerprint(m)
		c.mu.Lock()
		if c.done == done {
			c.sum = sum
		}
		c.mu.Unlock()
		close(done)
	}()
}

// cacheUnchanged reports whether m, about to be recorded as ws's hash
// cache, holds exactly the entries of the cache loaded for ws, none of them
// racy then: the stored one can stay (see cacheMemo). Otherwise the caller
// writes m, and the memo is forgotten: it no longer describes what is
// stored. A nil db (a team store without a local cache) has nothing loaded.
func (db *DB) cacheUnchanged(ws string, m *snapshot.Manifest) bool {
	if db == nil {
		return false
	}
	c := &db.memo
	c.mu.Lock()
	done, loaded := c.done, c.ws != "" && c.ws == ws
	c.mu.Unlock()
	if !loaded {
		return false
	}
	<-done
	sum, newest := cacheFingerprint(m)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ws == "" || c.ws != ws || c.at == 0 || c.done != done {
		return false
	}
	if sum == c.sum && newest < c.at-racyMargin {
		return true
	}
	c.ws = ""
	return false
}
