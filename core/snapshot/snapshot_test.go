package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/diffgate/diffgate/internal/testenv"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func take(t *testing.T, root string, opt Options) *Manifest {
	t.Helper()
	m, err := Take(context.Background(), root, opt)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func hexsha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestTakeRecordsEveryType(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "hello")
	write(t, root, "sub/deep/b.bin", strings.Repeat("x", 300<<10))
	os.Mkdir(filepath.Join(root, "empty"), 0o700)
	os.Symlink("../outside", filepath.Join(root, "sub/link"))
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	syscall.Chmod(filepath.Join(root, "a.txt"), 0o4755)

	done := make(chan *Manifest)
	go func() { done <- take(t, root, Options{}) }()
	var m *Manifest
	select {
	case m = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("walk hung (FIFO opened?)")
	}
	want := map[string]Type{"a.txt": File, "empty": Dir, "fifo": FIFO, "sub": Dir, "sub/deep": Dir, "sub/deep/b.bin": File, "sub/link": Symlink}
	if len(m.Entries) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(m.Entries), len(want), m.Entries)
	}
	for p, typ := range want {
		e := m.Lookup(p)
		if e == nil || e.Type != typ {
			t.Fatalf("%s: got %+v, want type %s", p, e, typ)
		}
	}
	a := m.Lookup("a.txt")
	if a.SHA256 != hexsha("hello") || a.Size != 5 || a.Perm != 0o4755 || a.UID != int64(os.Getuid()) {
		t.Errorf("a.txt: %+v", a)
	}
	if b := m.Lookup("sub/deep/b.bin"); b.SHA256 != hexsha(strings.Repeat("x", 300<<10)) {
		t.Errorf("b.bin hash %s", b.SHA256)
	}
	if l := m.Lookup("sub/link"); l.Target != "../outside" {
		t.Errorf("link target %q", l.Target)
	}
	if e := m.Lookup("empty"); e.Perm != 0o700 {
		t.Errorf("empty perm %o", e.Perm)
	}
	for i := 1; i < len(m.Entries); i++ {
		if m.Entries[i-1].Path >= m.Entries[i].Path {
			t.Fatal("entries not sorted")
		}
	}
}

func TestTakeBigFilesAndProgress(t *testing.T) {
	root := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), (bigFile+12345)/16)
	for _, n := range []string{"x", "y", "z"} {
		os.WriteFile(filepath.Join(root, n), big, 0o644)
	}
	var calls atomic.Int64
	var last atomic.Int64
	m := take(t, root, Options{Progress: func(p Progress) { calls.Add(1); last.Store(p.Bytes) }})
	sum := sha256.Sum256(big)
	for _, e := range m.Entries {
		if e.SHA256 != hex.EncodeToString(sum[:]) || e.Size != int64(len(big)) || e.Err != "" {
			t.Fatalf("%s: %+v", e.Path, e)
		}
	}
	if calls.Load() == 0 || last.Load() != 3*int64(len(big)) {
		t.Errorf("progress: %d calls, last bytes %d", calls.Load(), last.Load())
	}
}

func TestOddNames(t *testing.T) {
	root := t.TempDir()
	names := []string{"new\nline", "bad\xffutf8", "tab\tname", "ü"}
	for _, n := range names {
		write(t, root, n, n)
	}
	m := take(t, root, Options{})
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		e := back.Lookup(n)
		if e == nil || e.SHA256 != hexsha(n) {
			t.Errorf("%q lost in round trip: %+v", n, e)
		}
	}
}

func TestRootErrors(t *testing.T) {
	if _, err := Take(context.Background(), filepath.Join(t.TempDir(), "missing"), Options{}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing root: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Take(context.Background(), f, Options{}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file root: %v", err)
	}
}

// TestUnreadableEntryRecorded: a file that cannot be read is recorded with
// its error (as a normal user: root reads everything).
func TestUnreadableEntryRecorded(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	root := t.TempDir()
	write(t, root, "secret", "x")
	os.Chmod(filepath.Join(root, "secret"), 0)
	m := take(t, root, Options{})
	if e := m.Lookup("secret"); e == nil || e.Err != "cannot read: permission denied" {
		t.Fatalf("got %+v", e)
	}
}

// TestVanishingFiles removes files while walks run: the walk must finish,
// recording what it saw, with no error for the whole tree.
func TestVanishingFiles(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 2000; i++ {
		write(t, root, filepath.Join("d", string(rune('a'+i%26)), strings.Repeat("f", 1+i%7)+string(rune('0'+i%10))), "content")
	}
	stop := make(chan struct{})
	go func() {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			select {
			case <-stop:
				return filepath.SkipAll
			default:
			}
			if err == nil && !d.IsDir() {
				os.Remove(p)
			}
			return nil
		})
	}()
	for i := 0; i < 5; i++ {
		if _, err := Take(context.Background(), root, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
}

func TestSeedFormat(t *testing.T) {
	m, err := Parse([]byte(`[["b.txt", 3, "abc"], ["a/x", 1, "def"]]`))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Seed || len(m.Entries) != 2 || m.Entries[0].Path != "a/x" || m.Entries[1].Size != 3 {
		t.Fatalf("%+v", m)
	}
	for _, bad := range []string{``, `nope`, `{"schema":"other"}`, `[["a", 1]]`, `[[1, 2, 3]]`, `{"schema":"diffgate.manifest/v1","entries":[{"path":"a","type":"weird"}]}`, `{"schema":"diffgate.manifest/v1","entries":[`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: multi-line error %q", bad, err)
		}
	}
}

func TestHashReuse(t *testing.T) {
	root := t.TempDir()
	write(t, root, "same", "unchanged")
	write(t, root, "edit", "before!")
	old := time.Now().Add(-time.Hour)
	first := take(t, root, Options{})
	// Pretend the prior snapshot is old enough that no ctime is racy.
	first.CreatedAt = time.Now().Add(time.Hour)
	// Same size, mtime restored: only ctime betrays the edit.
	st, _ := os.Stat(filepath.Join(root, "edit"))
	os.WriteFile(filepath.Join(root, "edit"), []byte("after!!"), 0o644)
	os.Chtimes(filepath.Join(root, "edit"), old, st.ModTime())
	// Poison the prior hash of "same" to prove it is reused, not recomputed.
	first.Lookup("same").SHA256 = "reused"
	second := take(t, root, Options{Prior: first})
	if got := second.Lookup("same").SHA256; got != "reused" {
		t.Errorf("unchanged file rehashed: %s", got)
	}
	if got := second.Lookup("edit").SHA256; got != hexsha("after!!") {
		t.Errorf("edited file not rehashed: %s", got)
	}
	// A prior taken just now is racy: nothing may be reused.
	fresh := take(t, root, Options{})
	fresh.Lookup("same").SHA256 = "stale"
	if got := take(t, root, Options{Prior: fresh}).Lookup("same").SHA256; got == "stale" {
		t.Error("racy ctime: hash reused")
	}
}

func TestCancel(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 200; i++ {
		write(t, root, filepath.Join("d", strings.Repeat("x", i%50+1)), "x")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Take(ctx, root, Options{}); err == nil {
		t.Error("cancelled walk returned no error")
	}
	if runtime.NumGoroutine() > 50 {
		t.Log("goroutines:", runtime.NumGoroutine())
	}
}
