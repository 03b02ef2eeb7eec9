package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeReference is the encoding/json manifest writer that Write replaced;
// Write must produce exactly its bytes.
func writeReference(m *Manifest, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	head, err := json.Marshal(struct {
		Schema    string    `json:"schema"`
		Root      string    `json:"root"`
		CreatedAt time.Time `json:"created_at"`
	}{Schema, m.Root, m.CreatedAt})
	if err != nil {
		return err
	}
	bw.Write(head[:len(head)-1])
	bw.WriteString(",\"entries\":[")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range m.Entries {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n")
		buf.Reset()
		if err := enc.Encode(m.Entries[i].toJSON(true)); err != nil {
			return err
		}
		bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

func TestWriteMatchesEncodingJSON(t *testing.T) {
	odd := []string{"", "plain/path.txt", "sp ace", "quo\"te", "back\\slash", "new\nline", "tab\t", "ctl\x01\x1f\x7f",
		"<html>&amp;", "ü/ñ", "line\u2028sep\u2029", "bad\xffutf8", "\xc3", "emoji 😀", "\b\f\r"}
	m := &Manifest{Root: "/r<o>ot&\"x\"", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
	for i, s := range odd {
		for _, typ := range []Type{File, Dir, Symlink, FIFO, Socket, Block, Char, Unknown, ""} {
			e := Entry{Path: s + string(typ), Type: typ, Perm: uint32(i*0o421) & 0o7777, Size: int64(i*1000 - 3),
				UID: int64(i - 1), GID: int64(i * 7), MTime: int64(i) * 1e17, CTime: -int64(i), Dev: uint64(i) << 60,
				Ino: uint64(i), Nlink: uint32(i%3) * math.MaxUint32 / 2, Rdev: math.MaxUint64 - uint64(i), SHA256: s, Target: odd[(i+3)%len(odd)], Err: odd[(i+5)%len(odd)]}
			if i%4 == 0 {
				e = Entry{Path: s, Type: typ, UID: -1, GID: -1}
			}
			m.Entries = append(m.Entries, e)
		}
	}
	m.Entries = append(m.Entries, Entry{Path: "big", Type: File, Perm: 0o17777, Size: math.MaxInt64, UID: math.MaxInt64, GID: math.MinInt64, MTime: math.MinInt64})
	for _, mm := range []*Manifest{m, {}, benchManifest(3000)} {
		var got, want bytes.Buffer
		if err := mm.Write(&got); err != nil {
			t.Fatal(err)
		}
		if err := writeReference(mm, &want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			g, w := got.Bytes(), want.Bytes()
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Fatalf("Write differs from encoding/json at byte %d:\n got %q\nwant %q", i, g[max(0, i-80):min(len(g), i+80)], w[max(0, i-80):min(len(w), i+80)])
		}
	}
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, io.ErrShortWrite
	}
	f.n -= len(p)
	return len(p), nil
}

// A write that fails part-way (a full disk) is returned, whichever block
// it hit, and Write does not wait for the blocks it will not write.
func TestWriteReturnsFailedWrite(t *testing.T) {
	m := benchManifest(20 * blockEntries)
	var full bytes.Buffer
	if err := m.Write(&full); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 100, full.Len() / 2, full.Len() - 2} {
		if err := m.Write(&failAfter{n: n}); err != io.ErrShortWrite {
			t.Fatalf("write failing after %d of %d bytes: Write returned %v", n, full.Len(), err)
		}
	}
}

// WriteFile leaves the manifest or, when it fails, nothing: no temporary
// file stays behind either way.
func TestWriteFileLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	m := benchManifest(10)
	if err := m.WriteFile(dir + "/m.json"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir+"/taken", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(dir + "/taken"); err == nil {
		t.Fatal("WriteFile over a directory succeeded")
	}
	names, _ := filepath.Glob(dir + "/*")
	if len(names) != 2 {
		t.Fatalf("left %q, want only m.json and taken", names)
	}
	if got, err := ReadFile(dir + "/m.json"); err != nil || len(got.Entries) != 10 {
		t.Fatalf("manifest read back: %v, %v", got, err)
	}
}
