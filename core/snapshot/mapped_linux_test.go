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
