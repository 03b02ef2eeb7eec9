package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestArenaSameEntries checks that a walk recording into the arena (a prior
// manifest gives the size) yields exactly the manifest of a plain walk: when
// the tree fits, when it outgrew the prior (the slab fallback), and with
// excluded entries leaving holes in the arena.
func TestArenaSameEntries(t *testing.T) {
	root := t.TempDir()
	benchTree(t, root, 3000, 40, 64)
	os.Symlink("d00/s001", filepath.Join(root, "link"))
	plain := take(t, root, Options{})
	exclude := func(rel string) bool { return strings.HasSuffix(rel, "7") || strings.HasPrefix(rel, "d01/s011") }
	plainEx := take(t, root, Options{Exclude: exclude})
	if len(plainEx.Entries) >= len(plain.Entries) {
		t.Fatal("the exclusion excluded nothing")
	}
	small := &Manifest{Root: plain.Root, CreatedAt: plain.CreatedAt, Entries: plain.Entries[:10]}
	for _, tc := range []struct {
		name      string
		prior     *Manifest
		exclude   func(string) bool
		want      *Manifest
		fromArena bool
	}{
		{"fits", plain, nil, plain, true},
		{"holes", plain, exclude, plainEx, true},
		{"outgrown", small, nil, plain, false},
	} {
		before := arenaWalks.Load()
		m := take(t, root, Options{Prior: tc.prior, Exclude: tc.exclude, Workers: 3})
		if got := arenaWalks.Load() - before; got != map[bool]int64{true: 1, false: 0}[tc.fromArena] {
			t.Errorf("%s: %d walks gathered from the arena", tc.name, got)
		}
		if len(m.Entries) != len(tc.want.Entries) {
			t.Fatalf("%s: %d entries, want %d", tc.name, len(m.Entries), len(tc.want.Entries))
		}
		for i := range m.Entries {
			if !reflect.DeepEqual(m.Entries[i], tc.want.Entries[i]) {
				t.Fatalf("%s: entry %d is\n%+v\nwant\n%+v", tc.name, i, m.Entries[i], tc.want.Entries[i])
			}
		}
		if cap(m.Entries) != len(m.Entries) {
			t.Errorf("%s: room after the entries: an append would write into the arena", tc.name)
		}
	}
}

// TestArenaHoldsEntriesOnce pins the memory a walk with a prior allocates:
// its entries once (the arena, with its eighth of room), not once per
// worker slab plus once more for the sorted manifest.
func TestArenaHoldsEntriesOnce(t *testing.T) {
	root := t.TempDir()
	const files = 10000
	benchTree(t, root, files, 100, 0)
	prior := take(t, root, Options{})
	// Every hash is reused (none is recent enough to be doubted), so the
	// walk allocates the same whatever the clock.
	prior.CreatedAt = time.Now().Add(time.Hour)
	n := len(prior.Entries)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	start := ms.TotalAlloc
	m, err := Take(context.Background(), root, Options{Prior: prior, Workers: 3})
	runtime.ReadMemStats(&ms)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != n {
		t.Fatalf("%d entries, want %d", len(m.Entries), n)
	}
	// Per entry: the arena's 1.125 entries and the path string; the
	// listing buffers and hashers of the workers are a fixed cost (about
	// 1 MiB for 3 workers). Slabs and a sorted copy cost 2 entries each.
	size := int64(unsafe.Sizeof(Entry{}))
	limit := int64(n)*(size*3/2+32) + 3<<19
	if got := int64(ms.TotalAlloc - start); got > limit {
		t.Fatalf("a walk of %d entries with a prior allocated %d bytes, want at most %d (%d bytes an entry)", n, got, limit, size)
	}
}
