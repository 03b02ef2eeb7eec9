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
	"io"
	"strings"
	"time"

	"github.com/diffgate/diffgate/core/snapshot"
)

// The hash cache is one BLOB per workspace:
//
//	"DGHC" 0x01, uvarint length of the DEFLATE'd metadata, the metadata,
//	then the raw 32-byte SHA-256 of every entry, in order.
//
// The metadata is root, has-created_at (0/1), created_at (varint ns), the
// entry count, then per regular file (in the manifest's order, sorted by
// path): the prefix length shared with the previous path, the rest of the
// path, dev, ino (uvarint), size, mtime, ctime (varint ns). Hashes are not
// compressed (they would not shrink). Only regular files with a hash and no
// error are kept: they are all a before-snapshot can reuse. 200,000 entries
// encode and decode in tens of milliseconds, far faster than the manifest's
// JSON.
const cacheMagic = "DGHC\x01"

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
	z := deflate(meta.b, flate.BestSpeed)
	out := enc{b: make([]byte, 0, len(cacheMagic)+10+len(z)+len(sums))}
	out.b = append(out.b, cacheMagic...)
	out.raw(z)
	out.b = append(out.b, sums...)
	return out.b, n
}

func cacheable(e *snapshot.Entry) bool {
	return e.Type == snapshot.File && e.Err == "" && isHexSHA(e.SHA256)
}

func decodeCache(b []byte) (*snapshot.Manifest, error) {
	if len(b) < len(cacheMagic) || string(b[:len(cacheMagic)]) != cacheMagic {
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
	// The metadata is decoded as it is inflated: on a tree of a million
	// files it is tens of MiB that need not be held at once.
	fr := flate.NewReader(bytes.NewReader(z))
	defer fr.Close()
	lr := &io.LimitedReader{R: fr, N: maxCacheMeta}
	r := bufio.NewReaderSize(lr, 64<<10)
	var err error
	fail := func(e error) {
		if err == nil {
			err = e
		}
	}
	uvar := func() uint64 {
		v, e := binary.ReadUvarint(r)
		if e != nil {
			fail(e)
		}
		return v
	}
	svar := func() int64 {
		v, e := binary.ReadVarint(r)
		if e != nil {
			fail(e)
		}
		return v
	}
	var buf []byte
	bytesN := func() []byte {
		n := uvar()
		if err != nil || n > maxCachePath {
			fail(errCorruptBlob)
			return nil
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, e := io.ReadFull(r, buf); e != nil {
			fail(e)
		}
		return buf
	}
	m := &snapshot.Manifest{Root: string(bytesN())}
	if uvar() != 0 {
		m.CreatedAt = time.Unix(0, svar())
	}
	n := uvar()
	if err != nil || n != uint64(len(sums)/32) {
		return nil, cacheErr(err)
	}
	m.Entries = make([]snapshot.Entry, n)
	var path []byte // the previous path, then the current one
	for i := range m.Entries {
		shared := uvar()
		suffix := bytesN()
		if err != nil || shared > uint64(len(path)) {
			return nil, cacheErr(err)
		}
		path = append(path[:shared], suffix...)
		e := &m.Entries[i]
		e.Path, e.Type, e.UID, e.GID = string(path), snapshot.File, -1, -1
		e.Dev, e.Ino = uvar(), uvar()
		e.Size, e.MTime, e.CTime = svar(), svar(), svar()
	}
	if err != nil {
		return nil, cacheErr(err)
	}
	if _, e := r.ReadByte(); e != io.EOF {
		return nil, cacheErr(e)
	}
	// Every hash in one string, written once (hex.EncodeToString would
	// build it twice).
	var all strings.Builder
	all.Grow(64 * len(m.Entries))
	var h [64]byte
	for i := range m.Entries {
		hex.Encode(h[:], sums[32*i:32*i+32])
		all.Write(h[:])
	}
	hs := all.String()
	for i := range m.Entries {
		m.Entries[i].SHA256 = hs[64*i : 64*i+64]
	}
	return m, nil
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
	return m, nil
}
