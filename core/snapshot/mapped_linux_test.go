package snapshot

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSharedMappingIsRehashed: a file whose page is already writable in a
// process's shared mapping changes without a ctime update; the hash cache
// must not reuse its hash, also when the mapping is gone by the time of the
// second snapshot (it was seen by the first).
func TestSharedMappingIsRehashed(t *testing.T) {
	for _, unmap := range []bool{false, true} {
		t.Run(map[bool]string{false: "mapped", true: "unmapped"}[unmap], func(t *testing.T) { testSharedMapping(t, unmap) })
	}
}

func testSharedMapping(t *testing.T, unmap bool) {
	root := t.TempDir()
	p := filepath.Join(root, "mapped")
	write(t, root, "mapped", "aaaa")
	write(t, root, "plain", "pppp")
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if mem != nil {
			syscall.Munmap(mem)
		}
	}()
	mem[0] = 'b' // the write fault: ctime updated, the page is now writable
	before := take(t, root, Options{})
	before.CreatedAt = time.Now().Add(time.Hour) // old enough for reuse
	st0, _ := os.Stat(p)
	mem[1] = 'c' // no fault: no ctime update
	if unmap {
		syscall.Munmap(mem)
		mem = nil
	}
	st1, _ := os.Stat(p)
	if st0.Sys().(*syscall.Stat_t).Ctim != st1.Sys().(*syscall.Stat_t).Ctim {
		t.Log("this kernel updated ctime on the second write")
	}
	after := take(t, root, Options{Prior: before})
	if got, want := after.Lookup("mapped").SHA256, hexsha("bcaa"); got != want {
		t.Fatalf("mapped file: hash %s, want %s (reused a stale hash)", got, want)
	}
	if after.Lookup("plain").SHA256 != before.Lookup("plain").SHA256 {
		t.Fatal("plain file")
	}
}

func BenchmarkSharedWritable(b *testing.B) {
	for b.Loop() {
		sharedWritable()
	}
}

// TestSharedWritableQueryMatchesText: the PROCMAP_QUERY ioctl finds the same
// shared, writable file mappings as reading the maps files as text, among
// them one of this process (a file mapped shared and writable), and neither
// a private writable mapping nor a shared read-only one of other files.
func TestSharedWritableQueryMatchesText(t *testing.T) {
	root := t.TempDir()
	mapFile := func(name string, prot, flags int) (devIno, func()) {
		write(t, root, name, "abcd")
		f, err := os.OpenFile(filepath.Join(root, name), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		mem, err := syscall.Mmap(int(f.Fd()), 0, 4, prot, flags)
		if err != nil {
			t.Fatal(err)
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		return devIno{uint64(st.Dev), st.Ino}, func() { syscall.Munmap(mem); f.Close() }
	}
	shared, undo1 := mapFile("shared", syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	defer undo1()
	private, undo2 := mapFile("private", syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	defer undo2()
	readOnly, undo3 := mapFile("readonly", syscall.PROT_READ, syscall.MAP_SHARED)
	defer undo3()

	query := sharedWritable()
	if noProcmapQuery.Load() {
		t.Skip("this kernel has no PROCMAP_QUERY (Linux 6.11): the maps files are read as text")
	}
	noProcmapQuery.Store(true)
	text := sharedWritable()
	noProcmapQuery.Store(false)
	if !query[shared] || !text[shared] {
		t.Fatalf("the shared writable mapping: found by the ioctl %v, as text %v", query[shared], text[shared])
	}
	for _, k := range []devIno{private, readOnly} {
		if query[k] || text[k] {
			t.Fatalf("%v reported as shared and writable (ioctl %v, text %v)", k, query[k], text[k])
		}
	}
	// Other processes' mappings may come and go between the two scans:
	// compare this process's view only through the files above, and the
	// rest loosely (each set found by one is mostly found by the other).
	missing := 0
	for k := range text {
		if !query[k] {
			missing++
		}
	}
	if missing > len(text)/2 {
		t.Fatalf("the ioctl missed %d of the %d mappings found as text", missing, len(text))
	}
}
