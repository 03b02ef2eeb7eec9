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

// maxCacheMeta bounds the decompressed size of a cache's metadata.
const maxCacheMeta = 1 << 30

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
	metaBytes, err := inflate(z, maxCacheMeta)
	if err != nil {
		return nil, err
	}
	d := dec{b: metaBytes}
	m := &snapshot.Manifest{Root: d.str()}
	if d.uint() != 0 {
		m.CreatedAt = time.Unix(0, d.int())
	}
	n := d.count(7)
	if d.err != nil || len(sums) != 32*n {
		return nil, errCorruptBlob
	}
	m.Entries = make([]snapshot.Entry, n)
	var path []byte // the previous path, then the current one
	for i := 0; i < n && d.err == nil; i++ {
		shared := d.uint()
		suffix := d.bytes()
		if d.err != nil || shared > uint64(len(path)) {
			return nil, errCorruptBlob
		}
		path = append(path[:shared], suffix...)
		e := &m.Entries[i]
		e.Path, e.Type, e.UID, e.GID = string(path), snapshot.File, -1, -1
		e.Dev, e.Ino = d.uint(), d.uint()
		e.Size, e.MTime, e.CTime = d.int(), d.int(), d.int()
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errCorruptBlob
	}
	all := hex.EncodeToString(sums) // one allocation for every hash
	for i := range m.Entries {
		m.Entries[i].SHA256 = all[64*i : 64*i+64]
	}
	return m, nil
}

// HashCache returns the file entries (path, dev, ino, size, mtime, ctime,
// SHA-256) of the workspace's latest recorded after-manifest, with its Root
// and CreatedAt, for snapshot.Options.Prior; nil, nil when there is none.
func (db *DB) HashCache(ctx context.Context, workspace string) (*snapshot.Manifest, error) {
	var data []byte
	err := db.sql.QueryRowContext(ctx, "SELECT data FROM hash_cache WHERE workspace = ?", blob(workspace)).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hash cache: %w", errText(err))
	}
	m, err := decodeCache(data)
	if err != nil {
		return nil, fmt.Errorf("hash cache of %s: %w", workspace, err)
	}
	return m, nil
}
