package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/internal/testenv"
)

// TestDeeperThanPathMax walks a tree whose paths are longer than PATH_MAX:
// every directory is opened relative to its parent, so the deepest file is
// recorded and hashed like any other.
func TestDeeperThanPathMax(t *testing.T) {
	root := t.TempDir()
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("d", 200)
	depth := 30 // 30 * 201 bytes > PATH_MAX (4096)
	for i := 0; i < depth; i++ {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		nfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = nfd
	}
	ffd, err := unix.Openat(fd, "deep.txt", unix.O_WRONLY|unix.O_CREAT, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Write(ffd, []byte("deep"))
	unix.Close(ffd)
	unix.Close(fd)
	t.Cleanup(func() { removeDeep(root) })

	rel := strings.TrimSuffix(strings.Repeat(name+"/", depth), "/") + "/deep.txt"
	if len(root)+len(rel) <= unix.PathMax {
		t.Fatalf("path only %d bytes", len(root)+len(rel))
	}
	m := take(t, root, Options{})
	for _, e := range m.Errors() {
		t.Errorf("%s: %s", e.Path[:20], e.Err)
	}
	e := m.Lookup(rel)
	if e == nil || e.SHA256 != hexsha("deep") {
		t.Fatalf("deep file: %+v", e)
	}
	// Reading it back for a text diff goes the same way.
	if data, err := ReadContent(root, rel, 100); err != nil || string(data) != "deep" {
		t.Fatalf("ReadContent: %q %v", data, err)
	}
}

// removeDeep removes a tree deeper than PATH_MAX (os.RemoveAll copes, but
// only from inside).
func removeDeep(root string) {
	var rm func(dfd int)
	rm = func(dfd int) {
		d := dirHandle{fd: dfd}
		sc := newScratch()
		if d.list(sc) != nil {
			return
		}
		var names []string
		for _, de := range sc.ents {
			names = append(names, string(sc.names[de.off:de.off+de.n]))
		}
		for _, n := range names {
			if unix.Unlinkat(dfd, n, 0) == nil {
				continue
			}
			if sub, err := unix.Openat(dfd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0); err == nil {
				rm(sub)
				unix.Close(sub)
			}
			unix.Unlinkat(dfd, n, unix.AT_REMOVEDIR)
		}
	}
	if fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0); err == nil {
		rm(fd)
		unix.Close(fd)
	}
}

// TestSwappedDirectoryNeverRedirects races a swapper that replaces a
// directory of the tree with a symlink to a look-alike tree outside it: no
// snapshot may contain an entry from outside.
func TestSwappedDirectoryNeverRedirects(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	for i := 0; i < 20; i++ {
		write(t, root, fmt.Sprintf("a/b/c/in%02d", i), "in")
		write(t, outside, fmt.Sprintf("b/c/OUTSIDE%02d", i), "out")
	}
	// a and a.link trade places atomically, over and over: half of the
	// time, a is a symlink to the look-alike tree outside.
	a, link := filepath.Join(root, "a"), filepath.Join(root, "a.link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	for i := 0; i < 60; i++ {
		m := take(t, root, Options{})
		for _, e := range m.Entries {
			if strings.Contains(e.Path, "OUTSIDE") {
				t.Fatalf("snapshot %d recorded %s from outside the workspace", i, e.Path)
			}
		}
	}
}

// TestUnreadableFileKeepsMetadata: as a normal user, a file without read
// permission is recorded with its type, mode, owner and size; only its
// content is unknown, and the same on every snapshot (no false change).
func TestUnreadableFileKeepsMetadata(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	root := t.TempDir()
	write(t, root, "secret", "hidden")
	write(t, root, "dir/secret2", "hidden")
	for _, p := range []string{"secret", "dir/secret2"} {
		os.Chmod(filepath.Join(root, p), 0o200)
	}
	first := take(t, root, Options{})
	for _, prior := range []*Manifest{nil, first} {
		m := take(t, root, Options{Prior: prior})
		for _, p := range []string{"secret", "dir/secret2"} {
			e := m.Lookup(p)
			if e == nil || e.Type != File || e.Perm != 0o200 || e.UID != int64(os.Getuid()) || e.Size != 6 || e.Ino == 0 || e.SHA256 != "" || !strings.Contains(e.Err, "permission denied") {
				t.Fatalf("prior %v: %s: %+v", prior != nil, p, e)
			}
		}
	}
}

// TestLockedDirectoryIsRecorded: as a normal user, a mode-000 directory is
// recorded with its metadata and an error saying it could not be opened.
func TestLockedDirectoryIsRecorded(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	root := t.TempDir()
	write(t, root, "locked/inner", "x")
	os.Chmod(filepath.Join(root, "locked"), 0)
	defer os.Chmod(filepath.Join(root, "locked"), 0o755)
	m := take(t, root, Options{})
	e := m.Lookup("locked")
	if e == nil || e.Type != Dir || e.Perm != 0 || !e.Hides() || !strings.Contains(e.Err, "permission denied") {
		t.Fatalf("locked: %+v", e)
	}
}

// TestRootRecorded: the root's own type, mode and owner are in the
// manifest, and survive writing and reading it.
func TestRootRecorded(t *testing.T) {
	root := t.TempDir()
	unix.Chmod(root, 0o2775)
	m := take(t, root, Options{})
	if m.Self == nil || m.Self.Path != "." || m.Self.Type != Dir || m.Self.Perm != 0o2775 || m.Self.UID != int64(os.Getuid()) {
		t.Fatalf("self: %+v", m.Self)
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(buf.Bytes())
	if err != nil || back.Self == nil || *back.Self != *m.Self {
		t.Fatalf("read back: %+v %v", back.Self, err)
	}
}

// TestKeepRootNeverFollows: with KeepRoot, a root that became a symlink is
// recorded as one and not walked; without, it is followed (the CLI's
// snapshot of a linked directory).
func TestKeepRootNeverFollows(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "copy")
	write(t, real, "f", "x")
	link := filepath.Join(dir, "ws")
	os.Symlink(real, link)
	m := take(t, link, Options{KeepRoot: true})
	if m.Self.Type != Symlink || m.Self.Target != real || len(m.Entries) != 0 || m.Self.Err != "not a directory" {
		t.Fatalf("KeepRoot: self %+v, %d entries", m.Self, len(m.Entries))
	}
	if m := take(t, link, Options{}); m.Lookup("f") == nil {
		t.Fatal("without KeepRoot the link should be followed")
	}
	if _, err := Take(context.Background(), filepath.Join(dir, "missing"), Options{KeepRoot: true}); !errors.Is(err, ErrRoot) {
		t.Fatalf("missing root: %v", err)
	}
}

// TestLockedRootWithKeepRoot: as a normal user, a root that cannot be
// opened is recorded with an error under KeepRoot, an error of Take without.
func TestLockedRootWithKeepRoot(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	root := t.TempDir()
	write(t, root, "f", "x")
	os.Chmod(root, 0)
	defer os.Chmod(root, 0o755)
	m := take(t, root, Options{KeepRoot: true})
	if m.Self.Type != Dir || m.Self.Perm != 0 || !strings.Contains(m.Self.Err, "permission denied") {
		t.Fatalf("self %+v", m.Self)
	}
	if _, err := Take(context.Background(), root, Options{}); !errors.Is(err, ErrRoot) {
		t.Fatalf("without KeepRoot: %v", err)
	}
}

// sparse writes a sparse file of size bytes with the given data at the
// given offsets.
func sparse(t *testing.T, p string, size int64, data map[int64]string) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for off, s := range data {
		if _, err := f.WriteAt([]byte(s), off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size); errors.Is(err, unix.EFBIG) {
		t.Skipf("this filesystem holds no file of %d bytes", size)
	} else if err != nil {
		t.Fatal(err)
	}
}

// TestSparseHashIsOfTheFullContent: holes are hashed as zeros without being
// read; the digest equals sha256 of the whole content read the plain way.
func TestSparseHashIsOfTheFullContent(t *testing.T) {
	root := t.TempDir()
	cases := map[string]struct {
		size int64
		data map[int64]string
	}{
		"holes-only":    {64 << 20, nil},
		"data-in-holes": {64 << 20, map[int64]string{0: "start", 5<<20 + 7: "middle", 40 << 20: strings.Repeat("z", 300<<10)}},
		"trailing-data": {9<<20 + 3, map[int64]string{9 << 20: "end"}},
	}
	for name, c := range cases {
		sparse(t, filepath.Join(root, name), c.size, c.data)
	}
	m := take(t, root, Options{})
	for name := range cases {
		f, _ := os.Open(filepath.Join(root, name))
		h := sha256.New()
		io.Copy(h, f)
		f.Close()
		want := hex.EncodeToString(h.Sum(nil))
		if e := m.Lookup(name); e == nil || e.SHA256 != want || e.Err != "" {
			t.Errorf("%s: %+v, want sha %s", name, e, want)
		}
	}
}

// TestCancelDuringHugeHash: a cancel while one huge sparse file is being
// hashed returns promptly; with Partial the file is marked not hashed.
func TestCancelDuringHugeHash(t *testing.T) {
	root := t.TempDir()
	sparse(t, filepath.Join(root, "huge"), 15<<40, map[int64]string{1 << 30: "x"})
	write(t, root, "small", "s")
	for _, partial := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var once sync.Once
		type res struct {
			m   *Manifest
			err error
		}
		done := make(chan res, 1)
		go func() {
			m, err := Take(ctx, root, Options{Partial: partial, Progress: func(p Progress) {
				if p.Bytes > 64<<20 { // the huge file is being hashed
					once.Do(cancel)
				}
			}})
			done <- res{m, err}
		}()
		var r res
		select {
		case r = <-done:
		case <-time.After(2 * time.Minute): // hashing 15 TiB would take hours
			t.Fatal("cancel did not reach the hash of a huge file")
		}
		cancel()
		if !partial {
			if !errors.Is(r.err, context.Canceled) {
				t.Fatalf("err %v", r.err)
			}
			continue
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		if e := r.m.Lookup("huge"); e == nil || e.SHA256 != "" || e.Err != "not hashed: cancelled" {
			t.Fatalf("huge: %+v", e)
		}
	}
}
