//go:build !js

package history

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestHashCacheLoadMemory pins what loading a hash cache allocates: the
// entries, their paths and one string of every hash, plus the driver's copy
// of the blob; not a copy of the blob per layer, the whole inflated
// metadata, or every hash twice. On a tree of a million files that
// difference was hundreds of MiB at the start of a run.
func TestHashCacheLoadMemory(t *testing.T) {
	db, _ := tempDB(t)
	const n = 100_000
	m := sampleManifest("/abs/ws", n)
	if _, err := db.Record(ctx, &Run{Report: sampleReport("/abs/ws", 1)}, nil, m); err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	start := ms.TotalAlloc
	got, err := db.HashCache(ctx, "/abs/ws")
	runtime.ReadMemStats(&ms)
	if err != nil || len(got.Entries) != n {
		t.Fatalf("%v, %d entries", err, len(got.Entries))
	}
	for i := range got.Entries {
		if got.Entries[i].Path != m.Entries[i].Path || got.Entries[i].SHA256 != m.Entries[i].SHA256 {
			t.Fatalf("entry %d: %+v, want %+v", i, got.Entries[i], m.Entries[i])
		}
	}
	// Per entry: the Entry, its path (32 bytes for these), 64 hex digits,
	// and the blob (32 bytes of hash, a few of compressed metadata, in the
	// driver's copy).
	size := int64(unsafe.Sizeof(got.Entries[0]))
	limit := int64(n)*(size+32+64+64) + 1<<20
	if used := int64(ms.TotalAlloc - start); used > limit {
		t.Fatalf("loading %d entries allocated %d bytes, want at most %d", n, used, limit)
	}
}

// TestRecordContentsMemory pins what recording the contents of a run's
// changed files allocates: about their size, not a compressor's state (about
// 1 MiB) per content. A run with 5,000 changed files spent most of its peak
// memory on that garbage.
func TestRecordContentsMemory(t *testing.T) {
	db, _ := tempDB(t)
	const n = 1000
	rep := sampleReport("/abs/ws", n)
	contents := map[string][]byte{}
	for i := 0; i < 1000; i++ {
		contents[shaOf(contentN(i))] = []byte(contentN(i))
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	start := ms.TotalAlloc
	if _, err := db.Record(ctx, &Run{Report: rep}, func(sha string) ([]byte, bool) {
		d, ok := contents[sha]
		return d, ok
	}, nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms)
	var stored int
	if err := db.sql.QueryRow("SELECT count(*) FROM contents").Scan(&stored); err != nil || stored < n/2 {
		t.Fatalf("%d contents stored (%v), want at least %d", stored, err, n/2)
	}
	if used := ms.TotalAlloc - start; used > 64<<20 {
		t.Fatalf("recording %d changes and %d contents allocated %d MiB, want at most 64", n, stored, used>>20)
	}
}
