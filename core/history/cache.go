//go:build !js

package history

import (
	"bufio"
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
	"strings"
	"sync"
	"time"

	"github.com/diffgate/diffgate/core/snapshot"
)

// The hash cache is one BLOB per workspace:
//
//	"DGHC" 0x02, uvarint length of the metadata, the metadata, then the
//	raw 32-byte SHA-256 of every entry, in order.
//
// The metadata is root, has-created_at (0/1), created_at (varint ns), the
// entry count, then per regular file (in the manifest's order, sorted by
// path): the prefix length shared with the previous path, the rest of the
// path, dev, ino (uvarint), size, mtime, ctime (varint ns). Only regular
// files with a hash and no error are kept: they are all a before-snapshot
// can reuse. Nothing is compressed: hashes would not shrink, and inflating
// the metadata was half of loading the cache at the start of every run
// (the blob is about 70 bytes an entry instead of 55). Format 0x01, written
// by earlier versions, is the same with the metadata DEFLATE'd; it is still
// read.
const (
	cacheMagic        = "DGHC\x02"
	cacheMagicDeflate = "DGHC\x01"
)

// maxCacheMeta bounds the decompressed size of a cache's metadata, and
// maxCachePath the length of one path (or path suffix) in it.
const (
	maxCacheMeta = 1 << 30
	maxCachePath = 1 << 24
)

func encodeCache(m *snapshot.Manifest) ([]byte, int) {
	n := 0
	for i := range m.Entries {
		if cacheable(&m.Entries[i]) {
			n++
		}
	}
	meta := enc{b: make([]byte, 0, 64+len(m.Entries)*40)}
	meta.str(m.Root)
	meta.bool(!m.CreatedAt.IsZero())
	if !m.CreatedAt.IsZero() {
		meta.int(m.CreatedAt.UnixNano())
	}
	meta.uint(uint64(n))
	sums := make([]byte, 32*n)
	prev, k := "", 0
	for i := range m.Entries {
		x := &m.Entries[i]
		if !cacheable(x) {
			continue
		}
		hex.Decode(sums[32*k:32*k+32], []byte(x.SHA256)) // cacheable checked the form
		k++
		shared := 0
		for shared < len(prev) && shared < len(x.Path) && prev[shared] == x.Path[shared] {
			shared++
		}
		meta.uint(uint64(shared))
		meta.str(x.Path[shared:])
		meta.uint(x.Dev)
		meta.uint(x.Ino)
		meta.int(x.Size)
		meta.int(x.MTime)
		meta.int(x.CTime)
		prev = x.Path
	}
	out := enc{b: make([]byte, 0, len(cacheMagic)+10+len(meta.b)+len(sums))}
	out.b = append(out.b, cacheMagic...)
	out.raw(meta.b)
	out.b = append(out.b, sums...)
	return out.b, n
}

func cacheable(e *snapshot.Entry) bool {
	return e.Type == snapshot.File && e.Err == "" && isHexSHA(e.SHA256)
}

// decodeCache decodes a hash cache blob (see cacheMagic) into a manifest of
// its file entries.
func decodeCache(b []byte) (*snapshot.Manifest, error) {
	if len(b) < len(cacheMagic) {
		return nil, errors.New("unknown hash cache format")
	}
	deflated := false
	switch string(b[:len(cacheMagic)]) {
	case cacheMagic:
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
	var meta io.Reader = bytes.NewReader(z)
	if deflated {
		// Decoded as it is inflated: on a tree of a million files it is
		// tens of MiB that need not be held at once.
		fr := flate.NewReader(meta)
		defer fr.Close()
		meta = &io.LimitedReader{R: fr, N: maxCacheMeta}
	}
	c := &cacheReader{r: bufio.NewReaderSize(meta, 64<<10)}
	m := c.header()
	if n := c.uvar(); c.err != nil || n != uint64(len(sums)/32) {
		return nil, cacheErr(c.err)
	}
	m.Entries = make([]snapshot.Entry, len(sums)/32)
	c.entries(m.Entries)
	if c.err == nil {
		if _, e := c.r.ReadByte(); e != io.EOF {
			c.fail(cmpOr(e, errCorruptBlob))
		}
	}
	if c.err != nil {
		return nil, cacheErr(c.err)
	}
	setHashes(m.Entries, sums)
	return m, nil
}

// cmpOr is err, or def when err is nil.
func cmpOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// cacheReader reads the inflated metadata of a hash cache: varints and
// length-prefixed strings, parsed in place from the reader's buffer. The
// first error is kept; later reads return zero values.
type cacheReader struct {
	r   *bufio.Reader
	err error
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
	b, _ := c.r.Peek(binary.MaxVarintLen64) // fewer at the end of the stream
	v, n := binary.Uvarint(b)
	if n <= 0 {
		if n == 0 && len(b) < binary.MaxVarintLen64 {
			c.fail(io.ErrUnexpectedEOF)
		} else {
			c.fail(errCorruptBlob)
		}
		return 0
	}
	c.r.Discard(n)
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
	n := c.uvar()
	if c.err != nil || n > maxCachePath {
		c.fail(errCorruptBlob)
		return dst
	}
	for n > 0 {
		b, err := c.r.Peek(min(int(n), c.r.Size()))
		if len(b) == 0 {
			c.fail(cmpOr(err, io.ErrUnexpectedEOF))
			return dst
		}
		dst = append(dst, b...)
		c.r.Discard(len(b))
		n -= uint64(len(b))
	}
	return dst
}

// header reads the root and the creation time.
func (c *cacheReader) header() *snapshot.Manifest {
	m := &snapshot.Manifest{Root: string(c.appendBytes(nil))}
	if c.uvar() != 0 {
		m.CreatedAt = time.Unix(0, c.svar())
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
		e.Dev, e.Ino = c.uvar(), c.uvar()
		e.Size, e.MTime, e.CTime = c.svar(), c.svar(), c.svar()
	}
	flush(len(es))
}

// setHashes gives each entry its hash, in hex, from the raw sums: every
// hash in one string, written once (hex.EncodeToString would build it
// twice).
func setHashes(es []snapshot.Entry, sums []byte) {
	var all strings.Builder
	all.Grow(64 * len(es))
	var h [64]byte
	for i := range es {
		hex.Encode(h[:], sums[32*i:32*i+32])
		all.Write(h[:])
	}
	hs := all.String()
	for i := range es {
		es[i].SHA256 = hs[64*i : 64*i+64]
	}
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
	m, err := decodeCache(data)
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
	mu  sync.Mutex
	ws  string
	sum uint64
	at  int64 // the loaded cache's CreatedAt, in ns
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
	var b [41]byte
	for i := range m.Entries {
		x := &m.Entries[i]
		if !cacheable(x) {
			continue
		}
		h.WriteString(x.Path)
		b[0] = 0 // paths hold no NUL: it ends one
		binary.LittleEndian.PutUint64(b[1:], x.Dev)
		binary.LittleEndian.PutUint64(b[9:], x.Ino)
		binary.LittleEndian.PutUint64(b[17:], uint64(x.Size))
		binary.LittleEndian.PutUint64(b[25:], uint64(x.MTime))
		binary.LittleEndian.PutUint64(b[33:], uint64(x.CTime))
		h.Write(b[:])
		h.WriteString(x.SHA256)
		newest = max(newest, x.CTime)
	}
	return h.Sum64(), newest
}

// set remembers the cache just loaded for ws.
func (c *cacheMemo) set(ws string, m *snapshot.Manifest) {
	sum, _ := cacheFingerprint(m)
	c.mu.Lock()
	c.ws, c.sum, c.at = ws, sum, m.CreatedAt.UnixNano()
	c.mu.Unlock()
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
	defer c.mu.Unlock()
	if c.ws == "" || c.ws != ws || c.at == 0 {
		return false
	}
	sum, newest := cacheFingerprint(m)
	if sum == c.sum && newest < c.at-racyMargin {
		return true
	}
	c.ws = ""
	return false
}
