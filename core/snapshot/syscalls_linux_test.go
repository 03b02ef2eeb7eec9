package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/internal/testenv"
)

// TestSparseProbedOnlyWithHoles: a file with fewer blocks than its size is
// hashed as sparse (its holes found with SEEK_DATA/SEEK_HOLE), a dense file
// of the same size is read plainly, never probed; both digests are those of
// the full content.
func TestSparseProbedOnlyWithHoles(t *testing.T) {
	root := t.TempDir()
	sparse(t, filepath.Join(root, "holes"), 8<<20, map[int64]string{3 << 20: "data"})
	dense := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB, no holes
	if err := os.WriteFile(filepath.Join(root, "dense"), dense, 0o644); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(root, "holes"), &st); err != nil || st.Blocks*512 >= st.Size {
		t.Skipf("this filesystem stores no holes (blocks %d, size %d, %v)", st.Blocks, st.Size, err)
	}
	before := sparseHashes.Load()
	m := take(t, root, Options{Workers: 1})
	if n := sparseHashes.Load() - before; n != 1 {
		t.Fatalf("%d files hashed as sparse, want 1 (only the one with holes)", n)
	}
	for _, name := range []string{"holes", "dense"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if e := m.Lookup(name); e == nil || e.SHA256 != hex.EncodeToString(sum[:]) || e.Size != 8<<20 || e.Err != "" {
			t.Fatalf("%s: %+v", name, e)
		}
	}
}

// wantXattr computes Entry.Xattr for path the slow way: the list's size
// first, then the list, then each value by name.
func wantXattr(t *testing.T, path string) string {
	t.Helper()
	n, err := unix.Llistxattr(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, n)
	n, err = unix.Llistxattr(path, buf)
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00")
	slices.Sort(names)
	h := sha256.New()
	for _, name := range names {
		v := make([]byte, 64<<10)
		k, err := unix.Lgetxattr(path, name, v)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s\x00%s\x00", name, v[:k])
	}
	return strings.Join(names, ",") + "#" + hex.EncodeToString(h.Sum(nil)[:8])
}

// TestXattrsReadFromTheOpenFile: extended attributes are still recorded with
// the single flistxattr into the worker's buffer: a file with one, a list
// longer than the buffer (the size is asked for only then), files without
// any after it (the grown buffer is kept), and a directory.
func TestXattrsReadFromTheOpenFile(t *testing.T) {
	root := t.TempDir()
	write(t, root, "one", "1")
	write(t, root, "many", "2")
	write(t, root, "dir/none", "3")
	write(t, root, "dir/zz-none", "4")
	if err := unix.Setxattr(filepath.Join(root, "one"), "user.a", []byte("v"), 0); err != nil {
		t.Skipf("setxattr: %v", err)
	}
	long := 0
	for i := 0; long <= 1200; i++ { // more than the first 1 KiB buffer
		name := fmt.Sprintf("user.attribute-with-a-long-name-%03d", i)
		if err := unix.Setxattr(filepath.Join(root, "many"), name, []byte{byte('a' + i%26)}, 0); err != nil {
			t.Skipf("setxattr %s: %v", name, err)
		}
		long += len(name) + 1
	}
	if err := unix.Setxattr(filepath.Join(root, "dir"), "user.d", []byte("dv"), 0); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 0} {
		m := take(t, root, Options{Workers: workers})
		for _, p := range []string{"one", "many", "dir"} {
			if e, want := m.Lookup(p), wantXattr(t, filepath.Join(root, p)); e == nil || e.Xattr != want {
				t.Fatalf("workers %d: %s: xattr %q, want %q", workers, p, e.Xattr, want)
			}
		}
		for _, p := range []string{"dir/none", "dir/zz-none"} {
			if e := m.Lookup(p); e == nil || e.Xattr != XattrNone {
				t.Fatalf("workers %d: %s: %+v", workers, p, e)
			}
		}
	}
}

// TestNoAtimeLeavesAccessTime: a snapshot of one's own files reads them
// with O_NOATIME: an access time that a plain read would update (relatime:
// older than the mtime) stays as it was, for files and directories.
func TestNoAtimeLeavesAccessTime(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f", "content")
	write(t, root, "d/g", "more")
	write(t, root, "control", "x")
	old := time.Now().Add(-48 * time.Hour)
	for _, p := range []string{"f", "d", "control"} {
		if err := os.Chtimes(filepath.Join(root, p), old, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	atime := func(p string) int64 {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(root, p), &st); err != nil {
			t.Fatal(err)
		}
		return st.Atim.Nano()
	}
	if _, err := os.ReadFile(filepath.Join(root, "control")); err != nil {
		t.Fatal(err)
	}
	if atime("control") == old.UnixNano() {
		t.Skip("this mount does not update access times (noatime)")
	}
	noAtimeRefused.Store(false)
	m := take(t, root, Options{})
	if e := m.Lookup("f"); e == nil || e.SHA256 == "" {
		t.Fatalf("f: %+v", e)
	}
	for _, p := range []string{"f", "d"} {
		if got := atime(p); got != old.UnixNano() {
			t.Errorf("%s: access time moved from %d to %d", p, old.UnixNano(), got)
		}
	}
	if noAtimeRefused.Load() && os.Geteuid() == 0 {
		t.Error("O_NOATIME refused to root")
	}
}

// TestNoAtimeRefusedFallsBack: as a normal user, O_NOATIME on a file one
// does not own is refused (EPERM); the open is repeated without it, once,
// and the walk remembers not to ask again: the file is still hashed, and a
// directory not one's own is still opened and walked.
func TestNoAtimeRefusedFallsBack(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	const dir, file = "/etc", "passwd" // root's, readable by everyone
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(dir, file), &st); err != nil || st.Uid == uint32(os.Getuid()) {
		t.Skipf("%s/%s is not another user's file (%v)", dir, file, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Skip(err)
	}
	sum := sha256.Sum256(data)
	// A directory that is not ours, opened as the walk's root and as a
	// subdirectory, and a file in it.
	noAtimeRefused.Store(false)
	m, err := Paths(context.Background(), "/", []string{"etc", "etc/" + file}, PathsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !noAtimeRefused.Load() {
		t.Fatal("O_NOATIME on another user's directory was not refused: the fallback is untested")
	}
	if e := m.Lookup("etc/" + file); e == nil || e.SHA256 != hex.EncodeToString(sum[:]) || e.Err != "" {
		t.Fatalf("%s: %+v", file, e)
	}
	if e := m.Lookup("etc"); e == nil || e.Type != Dir || e.Err != "" {
		t.Fatalf("etc: %+v", e)
	}
	// The file alone, the first refusal coming from it.
	noAtimeRefused.Store(false)
	d, err := openRoot(dir, &Entry{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	noAtimeRefused.Store(false)
	e := Entry{Path: file}
	if _, err := d.hashFile(toZname(file), &e, newScratch(), -1, 0, nil); err != nil || e.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("hashFile: %v, %+v", err, e)
	}
	if !noAtimeRefused.Load() {
		t.Fatal("O_NOATIME on another user's file was not refused")
	}
	// One's own tree, walked after the refusal, is recorded the same.
	root := t.TempDir()
	write(t, root, "a/b", "own")
	if e := take(t, root, Options{}).Lookup("a/b"); e == nil || e.SHA256 == "" || e.Err != "" {
		t.Fatalf("own file after the refusal: %+v", e)
	}
}

// TestListedDirectoryChangedBeforeItsJob: a name listed as a directory is
// not lstat'ed by its parent; when its job cannot open it, it is recorded
// as the listing's lstat would have recorded it: a locked directory with
// its metadata and the open's error, a vanished entry as vanished, and one
// swapped for a file or symlink as a directory that could not be opened
// (metadata unknown).
func TestListedDirectoryChangedBeforeItsJob(t *testing.T) {
	root := t.TempDir()
	write(t, root, "file", "now a file")
	os.Symlink("elsewhere", filepath.Join(root, "link"))
	os.Mkdir(filepath.Join(root, "dir"), 0o700)
	d, err := openRoot(root, &Entry{})
	if err != nil {
		t.Fatal(err)
	}
	ref := &dirRef{d: d}
	ref.refs.Store(1)
	defer ref.release()
	w := &walker{ctx: context.Background()}
	late := func(name string, openErr error) *Entry {
		e := &Entry{Path: name, Type: Dir, UID: -1, GID: -1}
		w.listedLate(job{dir: ref, name: toZname(name), self: e, unstatted: true}, &os.PathError{Op: "open", Path: name, Err: openErr})
		return e
	}
	for name, msg := range map[string]string{"file": "not a directory", "link": "too many levels of symbolic links"} {
		if e := late(name, map[string]error{"file": unix.ENOTDIR, "link": unix.ELOOP}[name]); e.Type != Dir || e.Ino != 0 || e.UID != -1 || e.Err != "cannot open directory: "+msg || !e.Unreadable() {
			t.Errorf("%s: %+v", name, e)
		}
	}
	if e := late("gone", unix.ENOENT); e.Type != Unknown || e.Err != "vanished during the walk" {
		t.Errorf("gone: %+v", e)
	}
	if e := late("dir", unix.EACCES); e.Type != Dir || e.Perm != 0o700 || e.Ino == 0 || e.UID != int64(os.Getuid()) || e.Err != "cannot open directory: permission denied" {
		t.Errorf("dir: %+v", e)
	}
}

// TestAbandonedDirectoryKeepsMetadata: a listed directory whose job a
// cancelled Partial walk never ran carries its metadata (lstat'ed then, as
// its parent no longer does) next to "not walked: cancelled".
func TestAbandonedDirectoryKeepsMetadata(t *testing.T) {
	root := t.TempDir()
	for i := range 8 {
		write(t, root, fmt.Sprintf("d%d/f", i), "x")
		os.Chmod(filepath.Join(root, fmt.Sprintf("d%d", i)), 0o751)
	}
	for try := 0; try < 20; try++ {
		ctx, cancel := context.WithCancel(context.Background())
		m, err := Take(ctx, root, Options{Workers: 1, Partial: true, Exclude: func(rel string) bool {
			if strings.HasSuffix(rel, "/f") {
				cancel()
			}
			return false
		}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, e := range m.Entries {
			if e.Err != "not walked: cancelled" {
				continue
			}
			found++
			if e.Type != Dir || e.Perm != 0o751 || e.Ino == 0 || e.UID != int64(os.Getuid()) || e.MTime == 0 {
				t.Fatalf("%s: %+v", e.Path, e)
			}
		}
		if found > 0 {
			return
		}
	}
	t.Skip("no directory job was left when the walk stopped")
}
