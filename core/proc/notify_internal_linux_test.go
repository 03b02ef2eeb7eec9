package proc

import (
	"os"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestTaskPath: /proc/self and /proc/thread-self name the script's task,
// never the supervisor; nothing else is changed.
func TestTaskPath(t *testing.T) {
	const task = "/proc/42"
	cases := map[string]string{
		"/proc/self":                  "/proc/42",
		"/proc/self/":                 "/proc/42/",
		"/proc/self/root/etc/shadow":  "/proc/42/root/etc/shadow",
		"/proc/thread-self":           "/proc/42",
		"/proc/thread-self/fd/3":      "/proc/42/fd/3",
		"/proc/selfish":               "/proc/selfish",
		"/proc/thread-selfish/x":      "/proc/thread-selfish/x",
		"/proc/1/root":                "/proc/1/root",
		"proc/self/root":              "proc/self/root",
		"/etc/passwd":                 "/etc/passwd",
		"/proc/self/../thread-self/x": "/proc/42/../thread-self/x",
	}
	for in, want := range cases {
		if got := taskPath(task, in); got != want {
			t.Errorf("taskPath(%q): %q, want %q", in, got, want)
		}
	}
}

// TestSplitParent: a path that does not exist resolves through its
// parent; a last name of ".", ".." or none has none.
func TestSplitParent(t *testing.T) {
	cases := []struct {
		path, dir, name string
		ok              bool
	}{
		{"a", ".", "a", true},
		{"a/", ".", "a", true},
		{"d/a", "d/", "a", true},
		{"/w/d/a//", "/w/d/", "a", true},
		{"/a", "/", "a", true},
		{"/", "", "", false},
		{"//", "", "", false},
		{".", "", "", false},
		{"..", "", "", false},
		{"d/..", "", "", false},
		{"d/./", "", "", false},
	}
	for _, c := range cases {
		dir, name, ok := splitParent(c.path)
		if dir != c.dir || name != c.name || ok != c.ok {
			t.Errorf("splitParent(%q): %q, %q, %v; want %q, %q, %v", c.path, dir, name, ok, c.dir, c.name, c.ok)
		}
	}
}

// TestReadString reads NUL-terminated strings from this process's memory
// as the watcher reads a path from a script's: past the short first read,
// up to the end of a page followed by one that cannot be read, and at the
// PATH_MAX bound.
func TestReadString(t *testing.T) {
	const page = 4096
	mem, err := unix.Mmap(-1, 0, 3*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Mprotect(mem[2*page:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	put := func(off int, s string, nul bool) uint64 {
		clear(mem[:2*page])
		copy(mem[off:], s)
		if nul {
			mem[off+len(s)] = 0
		} else if off+len(s) < 2*page {
			mem[off+len(s)] = 'x'
		}
		return base + uint64(off)
	}
	long := strings.Repeat("a", 300)
	cases := []struct {
		name string
		off  int // -1: no address
		s    string
		nul  bool
		want string
		err  unix.Errno
	}{
		{"past the short read", 100, "/" + long, true, "/" + long, 0},
		{"across a page", page - 10, "/" + long, true, "/" + long, 0},
		{"NUL last of the readable", 2*page - 301, "/" + long[:299], true, "/" + long[:299], 0},
		{"into the unreadable page", 2*page - 50, strings.Repeat("b", 50), false, "", unix.EFAULT},
		{"PATH_MAX with its NUL", 10, strings.Repeat("c", pathMax-1), true, strings.Repeat("c", pathMax-1), 0},
		{"longer than PATH_MAX", 10, strings.Repeat("d", pathMax), false, "", unix.ENAMETOOLONG},
		{"no address", -1, "", false, "", unix.EFAULT},
	}
	for _, c := range cases {
		addr := uint64(0)
		if c.off >= 0 {
			addr = put(c.off, c.s, c.nul)
		}
		got, e := readString(os.Getpid(), addr)
		if got != c.want || e != c.err {
			t.Errorf("%s: %d bytes, %v; want %d bytes, %v", c.name, len(got), e, len(c.want), c.err)
		}
	}
}
