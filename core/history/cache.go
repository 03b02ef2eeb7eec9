//go:build !js

package history

import (
	"compress/flate"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/diffgate/diffgate/core/snapshot"
)

// The hash cache is one BLOB per workspace: DEFLATE over a binary encoding
//
//	"DGHC" 0x01, root, has created_at (0/1), created_at (varint ns), count,
//	then per regular file, sorted by path:
//	  shared prefix length with the previous path, path suffix,
//	  dev, ino (uvarint), size, mtime, ctime (varint ns), 32 raw SHA-256 bytes
//
// Only regular files with a hash and no error are kept: they are all a
// before-snapshot can reuse. It encodes and decodes 200,000 entries in tens
// of milliseconds, far faster than the manifest's JSON.
const cacheMagic = "DGHC\x01"

// maxCacheBytes bounds the decompressed size of a cache BLOB.
const maxCacheBytes = 1 << 30

func encodeCache(m *snapshot.Manifest) ([]byte, int) {
	e := enc{b: make([]byte, 0, 64+len(m.Entries)*80)}
	e.b = append(e.b, cacheMagic...)
	e.str(m.Root)
	e.bool(!m.CreatedAt.IsZero())
	if !m.CreatedAt.IsZero() {
		e.int(m.CreatedAt.UnixNano())
	}
	n := 0
	for i := range m.Entries {
		if cacheable(&m.Entries[i]) {
			n++
		}
	}
	e.uint(uint64(n))
	prev := ""
	var sum [32]byte
	for i := range m.Entries {
		x := &m.Entries[i]
		if !cacheable(x) {
			continue
		}
		hex.Decode(sum[:], []byte(x.SHA256)) // cacheable checked the form
		shared := 0
		for shared < len(prev) && shared < len(x.Path) && prev[shared] == x.Path[shared] {
			shared++
		}
		e.uint(uint64(shared))
		e.str(x.Path[shared:])
		e.uint(x.Dev)
		e.uint(x.Ino)
		e.int(x.Size)
		e.int(x.MTime)
		e.int(x.CTime)
		e.b = append(e.b, sum[:]...)
		prev = x.Path
	}
	return deflate(e.b, flate.BestSpeed), n
}

func cacheable(e *snapshot.Entry) bool {
	if e.Type != snapshot.File || e.Err != "" || len(e.SHA256) != 64 {
		return false
	}
	for i := 0; i < len(e.SHA256); i++ {
		c := e.SHA256[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func decodeCache(z []byte) (*snapshot.Manifest, error) {
	b, err := inflate(z, maxCacheBytes)
	if err != nil {
		return nil, err
	}
	if len(b) < len(cacheMagic) || string(b[:len(cacheMagic)]) != cacheMagic {
		return nil, errors.New("unknown hash cache format")
	}
	d := dec{b: b[len(cacheMagic):]}
	m := &snapshot.Manifest{Root: d.str()}
	if d.uint() != 0 {
		m.CreatedAt = time.Unix(0, d.int())
	}
	n := d.count(32 + 7)
	m.Entries = make([]snapshot.Entry, 0, n)
	var path []byte // the previous path, then the current one
	hexBuf := make([]byte, 64*n)
	for i := 0; i < n && d.err == nil; i++ {
		shared := d.uint()
		suffix := d.bytes()
		if d.err != nil || shared > uint64(len(path)) {
			return nil, errCorruptBlob
		}
		path = append(path[:shared], suffix...)
		e := snapshot.Entry{Path: string(path), Type: snapshot.File, UID: -1, GID: -1}
		e.Dev, e.Ino = d.uint(), d.uint()
		e.Size, e.MTime, e.CTime = d.int(), d.int(), d.int()
		if d.err != nil || len(d.b) < 32 {
			return nil, errCorruptBlob
		}
		hex.Encode(hexBuf[64*i:], d.b[:32])
		d.b = d.b[32:]
		m.Entries = append(m.Entries, e)
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errCorruptBlob
	}
	all := string(hexBuf) // one allocation for every hash
	for i := range m.Entries {
		m.Entries[i].SHA256 = all[64*i : 64*i+64]
	}
	return m, nil
}

// HashCache returns the file entries (path, dev, ino, size, mtime, ctime,
// SHA-256) of the workspace's latest recorded after-manifest, with its Root
// and CreatedAt, for snapshot.Options.Prior; nil, nil when there is none.
func (db *DB) HashCache(ctx context.Context, workspace string) (*snapshot.Manifest, error) {
	var z []byte
	err := db.sql.QueryRowContext(ctx, "SELECT data FROM hash_cache WHERE workspace = ?", blob(workspace)).Scan(&z)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hash cache: %w", errText(err))
	}
	m, err := decodeCache(z)
	if err != nil {
		return nil, fmt.Errorf("hash cache of %s: %w", workspace, err)
	}
	return m, nil
}
