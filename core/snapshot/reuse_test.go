package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cacheOf returns m as the history hash cache gives it back: regular files
// only, no owner, mode or errors; their extended attributes kept.
func cacheOf(m *Manifest) *Manifest {
	c := &Manifest{Root: m.Root, CreatedAt: m.CreatedAt}
	for _, e := range m.Entries {
		if e.Type == File && e.Err == "" {
			c.Entries = append(c.Entries, Entry{Path: e.Path, Type: File, UID: -1, GID: -1, Size: e.Size,
				MTime: e.MTime, CTime: e.CTime, Dev: e.Dev, Ino: e.Ino, SHA256: e.SHA256, Xattr: e.Xattr})
		}
	}
	return c
}

// poisoned returns a copy of prior, pretended old enough for reuse, whose
// hashes are all "poison": a file whose hash comes out as poison was reused.
func poisoned(prior *Manifest) *Manifest {
	p := &Manifest{Root: prior.Root, CreatedAt: time.Now().Add(time.Hour), Entries: append([]Entry(nil), prior.Entries...)}
	for i := range p.Entries {
		if p.Entries[i].Type == File {
			p.Entries[i].SHA256 = "poison"
		}
	}
	return p
}

// TestReuseOnlyWhenAllMatch changes one recorded field at a time: any
// difference in device, inode, size, mtime or ctime forces a rehash, and so
// does a prior that does not know the file's extended attributes.
func TestReuseOnlyWhenAllMatch(t *testing.T) {
	root := t.TempDir()
	write(t, root, "dir/f", "content")
	base := take(t, root, Options{})
	for _, prior := range []*Manifest{base, cacheOf(base)} {
		for _, c := range []struct {
			name   string
			change func(e *Entry)
			reuse  bool
		}{
			{"nothing", func(e *Entry) {}, true},
			{"dev", func(e *Entry) { e.Dev++ }, false},
			{"ino", func(e *Entry) { e.Ino++ }, false},
			{"size", func(e *Entry) { e.Size++ }, false},
			{"mtime", func(e *Entry) { e.MTime++ }, false},
			{"ctime", func(e *Entry) { e.CTime-- }, false},
			{"error", func(e *Entry) { e.Err = "permission denied" }, false},
			{"no hash", func(e *Entry) { e.SHA256 = "" }, false},
			// A hash cache of format 0x03 or older: the after-snapshot
			// would know them, the before not, and the diff compares
			// none then (an attribute set by the script unseen).
			{"xattrs unknown", func(e *Entry) { e.Xattr = "" }, false},
		} {
			p := poisoned(prior)
			c.change(p.Lookup("dir/f"))
			got := take(t, root, Options{Prior: p}).Lookup("dir/f").SHA256
			if reused := got == "poison"; reused != c.reuse {
				t.Errorf("%s changed (prior of %d entries): reused %v, want %v", c.name, len(p.Entries), reused, c.reuse)
			}
			if !c.reuse && got != hexsha("content") {
				t.Errorf("%s changed: hash %s", c.name, got)
			}
		}
	}
}

// TestReuseCatchesRestoredEdit is the racy-git case through a hash cache: a
// same-size edit with the mtime put back is caught by the ctime, and a file
// whose ctime is within the granularity of the prior's creation is rehashed
// even when nothing else differs.
func TestReuseCatchesRestoredEdit(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a/edit", "before!")
	write(t, root, "a/same", "unchanged")
	first := take(t, root, Options{})
	st, err := os.Stat(filepath.Join(root, "a/edit"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a ctime the filesystem clock can tell apart
	write(t, root, "a/edit", "after!!")
	if err := os.Chtimes(filepath.Join(root, "a/edit"), st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	second := take(t, root, Options{Prior: poisoned(cacheOf(first))})
	if got := second.Lookup("a/edit"); got.SHA256 != hexsha("after!!") || got.MTime != first.Lookup("a/edit").MTime {
		t.Errorf("restored-mtime edit: %+v", got)
	}
	if got := second.Lookup("a/same").SHA256; got != "poison" {
		t.Errorf("unchanged file rehashed: %s", got)
	}

	// Racy: the prior was taken less than Granularity after the last change.
	e := first.Lookup("a/same")
	racy := poisoned(first)
	racy.CreatedAt = time.Unix(0, e.CTime).Add(time.Second)
	if got := take(t, root, Options{Prior: racy}).Lookup("a/same").SHA256; got == "poison" {
		t.Error("ctime within 2s of the prior: hash reused")
	}
	if got := take(t, root, Options{Prior: racy, Granularity: 500 * time.Millisecond}).Lookup("a/same").SHA256; got != "poison" {
		t.Error("ctime older than the given granularity: hash not reused")
	}
	// A seed manifest has no inode or times: never reused.
	seed := poisoned(first)
	seed.Seed = true
	if got := take(t, root, Options{Prior: seed}).Lookup("a/same").SHA256; got == "poison" {
		t.Error("seed prior: hash reused")
	}
}

// TestReuseDeepTree checks lookups in the prior across directory levels whose
// names prefix one another.
func TestReuseDeepTree(t *testing.T) {
	root := t.TempDir()
	paths := []string{"a/b/c", "a/b.c", "a/b-c/d", "a.b/c", "ab/c", "a/bc", "a/b/c2/d"}
	for _, p := range paths {
		write(t, root, p, p)
	}
	p := poisoned(take(t, root, Options{}))
	m := take(t, root, Options{Prior: p})
	for _, path := range paths {
		if got := m.Lookup(path).SHA256; got != "poison" {
			t.Errorf("%s not reused", path)
		}
	}
	write(t, root, "a/b/c", "x") // different size: rehashed
	if got := take(t, root, Options{Prior: p}).Lookup("a/b/c").SHA256; got != hexsha("x") || strings.Contains(got, "poison") {
		t.Errorf("a/b/c: %s", got)
	}
}

// TestReuseInStepWithListing checks the in-step search of the prior: files
// between subtrees of every size (the search gallops over them), files the
// prior lacks (hashed) and prior entries no longer listed (skipped).
func TestReuseInStepWithListing(t *testing.T) {
	root := t.TempDir()
	var files []string
	for i := 0; i < 24; i++ {
		files = append(files, fmt.Sprintf("top/f%02d", i))
		if i%3 == 0 {
			for k := 0; k < 1<<(i/3); k++ {
				files = append(files, fmt.Sprintf("top/f%02d.d/g%03d", i, k))
			}
		}
	}
	for _, f := range files {
		write(t, root, f, f)
	}
	p := poisoned(take(t, root, Options{}))
	// Every fourth file leaves the prior; a name that is not listed joins.
	var kept []Entry
	dropped := map[string]bool{}
	for i, e := range p.Entries {
		if e.Type == File && i%4 == 0 {
			dropped[e.Path] = true
			continue
		}
		kept = append(kept, e)
		if e.Path == "top/f07" {
			kept = append(kept, Entry{Path: "top/f07a", Type: File, SHA256: "poison"})
		}
	}
	p.Entries = kept
	m := take(t, root, Options{Prior: p})
	for _, f := range files {
		got := m.Lookup(f).SHA256
		if want := "poison"; dropped[f] {
			want = hexsha(f)
			if got != want {
				t.Errorf("%s (not in the prior): hash %s", f, got)
			}
		} else if got != want {
			t.Errorf("%s not reused: %s", f, got)
		}
	}
}
