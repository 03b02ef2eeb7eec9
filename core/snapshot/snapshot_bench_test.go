package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchTree writes a deterministic tree of files of 0..maxSize bytes spread
// over dirs directories and returns the total content size.
func benchTree(tb testing.TB, root string, files, dirs, maxSize int) int64 {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, maxSize+1)
	var total int64
	for i := 0; i < files; i++ {
		d := filepath.Join(root, fmt.Sprintf("d%02d", i%dirs/10), fmt.Sprintf("s%03d", i%dirs))
		if i < dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				tb.Fatal(err)
			}
		}
		b := buf[:r.IntN(maxSize+1)]
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%06d", i)), b, 0o644); err != nil {
			tb.Fatal(err)
		}
		total += int64(len(b))
	}
	return total
}

func takeB(b *testing.B, root string, opt Options) *Manifest {
	m, err := Take(context.Background(), root, opt)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkTake is a full snapshot (every file hashed) of 5,000 files of
// 0-16 KiB in 100 directories, page cache warm.
func BenchmarkTake(b *testing.B) {
	root := b.TempDir()
	size := benchTree(b, root, 5000, 100, 16<<10)
	takeB(b, root, Options{}) // warm the cache
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		takeB(b, root, Options{})
	}
}

// BenchmarkTakePrior is the reuse path: nothing changed since a prior
// snapshot old enough for every hash to be reused (stat only, no reads).
func BenchmarkTakePrior(b *testing.B) {
	root := b.TempDir()
	benchTree(b, root, 5000, 100, 16<<10)
	prior := takeB(b, root, Options{})
	prior.CreatedAt = time.Now().Add(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		m := takeB(b, root, Options{Prior: prior})
		if m.Entries[len(m.Entries)-1].SHA256 != prior.Entries[len(prior.Entries)-1].SHA256 {
			b.Fatal("hash not reused")
		}
	}
}

// BenchmarkTakeBig hashes four 16 MiB files: the hashing throughput.
func BenchmarkTakeBig(b *testing.B) {
	root := b.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<20)
	for i := 0; i < 4; i++ {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprint("big", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	takeB(b, root, Options{})
	b.SetBytes(4 * int64(len(data)))
	for b.Loop() {
		takeB(b, root, Options{})
	}
}

// benchManifest is a synthetic manifest of n entries shaped like a real one.
func benchManifest(n int) *Manifest {
	m := &Manifest{Root: "/work/tree", CreatedAt: time.Unix(1700000000, 123456789), Entries: make([]Entry, n)}
	for i := range m.Entries {
		e := &m.Entries[i]
		*e = Entry{Path: fmt.Sprintf("d%02d/s%03d/file-%06d.txt", i/10000, i/100%100, i), Type: File, Perm: 0o644,
			Size: int64(i * 37 % 16384), UID: 1000, GID: 1000, MTime: 1700000000123456789 + int64(i), CTime: 1700000000223456789 + int64(i),
			Dev: 2049, Ino: uint64(1000000 + i), SHA256: fmt.Sprintf("%064x", i*7919)}
		if i%100 == 0 {
			e.Type, e.Size, e.SHA256, e.Perm = Dir, 0, "", 0o755
		}
	}
	m.Sort()
	return m
}

// BenchmarkManifestWrite serialises 50,000 entries.
func BenchmarkManifestWrite(b *testing.B) {
	m := benchManifest(50000)
	var buf bytes.Buffer
	m.Write(&buf)
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := m.Write(&buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkManifestParse reads 50,000 entries back.
func BenchmarkManifestParse(b *testing.B) {
	var buf bytes.Buffer
	benchManifest(50000).Write(&buf)
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(buf.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
}
