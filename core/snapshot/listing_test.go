package snapshot

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// doctored returns a copy of prior pretended old enough for reuse, without
// the entry at hidden and with every symlink's target "poison": a walk that
// misses hidden took a listing from the prior, one that gives "poison" took
// a target from it.
func doctored(prior *Manifest, hidden string) *Manifest {
	p := &Manifest{Root: prior.Root, CreatedAt: time.Now().Add(time.Hour), Listed: prior.Listed}
	for _, e := range prior.Entries {
		if e.Path == hidden {
			continue
		}
		if e.Type == Symlink {
			e.Target = "poison"
		}
		p.Entries = append(p.Entries, e)
	}
	return p
}

func listingTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write(t, root, "d/a", "a")
	write(t, root, "d/b", "b")
	write(t, root, "d/b-c", "b-c")
	write(t, root, "d/b.txt", "b.txt")
	write(t, root, "d/sub/deep/f", "f")
	write(t, root, "d/subz", "subz")
	write(t, root, "d/z", "z")
	if err := os.Symlink("a", filepath.Join(root, "d/l")); err != nil {
		t.Fatal(err)
	}
	return root
}

func paths(m *Manifest) []string {
	var out []string
	for _, e := range m.Entries {
		out = append(out, e.Path)
	}
	return out
}

// TestListingReusedOnlyWhenUnchanged: a directory whose recorded metadata
// all match a Listed prior's, older than the cutoff, gets its names from
// the prior (a name the prior lacks stays missing: the listing was not
// read); any difference, an error, a prior too recent or not Listed lists
// it again. The names below a reused directory's subdirectories
// (listed from the prior as well, names that extend others: "b", "b-c",
// "b.txt", then "b/...") all come out, in order.
func TestListingReusedOnlyWhenUnchanged(t *testing.T) {
	root := listingTree(t)
	base := take(t, root, Options{})
	for _, c := range []struct {
		name   string
		change func(p *Manifest)
		reuse  bool
	}{
		{"nothing", func(p *Manifest) {}, true},
		{"prior not listed", func(p *Manifest) { p.Listed = false }, false},
		{"dev", func(p *Manifest) { p.Lookup("d").Dev++ }, false},
		{"ino", func(p *Manifest) { p.Lookup("d").Ino++ }, false},
		{"size", func(p *Manifest) { p.Lookup("d").Size++ }, false},
		{"mtime", func(p *Manifest) { p.Lookup("d").MTime++ }, false},
		{"ctime", func(p *Manifest) { p.Lookup("d").CTime-- }, false},
		{"error", func(p *Manifest) { p.Lookup("d").Err = "cannot list directory: permission denied" }, false},
		{"not a directory", func(p *Manifest) { p.Lookup("d").Type = File }, false},
		{"prior too recent", func(p *Manifest) { p.CreatedAt = base.CreatedAt }, false},
	} {
		p := doctored(base, "d/b")
		c.change(p)
		got := take(t, root, Options{Prior: p})
		if reused := got.Lookup("d/b") == nil; reused != c.reuse {
			t.Errorf("%s: listing reused %v, want %v", c.name, reused, c.reuse)
		}
		want := paths(base)
		if c.reuse {
			want = slices.DeleteFunc(want, func(p string) bool { return p == "d/b" })
		}
		if !slices.Equal(paths(got), want) {
			t.Errorf("%s: paths\n%v\nwant\n%v", c.name, paths(got), want)
		}
		if d := got.Lookup("d"); d == nil || d.Err != "" || d.Ino != base.Lookup("d").Ino {
			t.Errorf("%s: d recorded as %+v", c.name, d)
		}
	}
}

// TestListingNotReusedFromCache: a hash cache holds no directories, so
// nothing is reused from it and every name is listed.
func TestListingNotReusedFromCache(t *testing.T) {
	root := listingTree(t)
	base := take(t, root, Options{})
	p := cacheOf(doctored(base, "d/b"))
	got := take(t, root, Options{Prior: p})
	if !slices.Equal(paths(got), paths(base)) {
		t.Errorf("paths\n%v\nwant\n%v", paths(got), paths(base))
	}
}

// TestListingChangedDirectoryRelisted: a name added to a directory after
// the prior changes its ctime, and the walk lists it.
func TestListingChangedDirectoryRelisted(t *testing.T) {
	root := listingTree(t)
	base := take(t, root, Options{})
	before := base.Lookup("d")
	write(t, root, "d/new", "new")
	st := take(t, root, Options{}).Lookup("d")
	if st.CTime == before.CTime {
		t.Skip("the directory's ctime did not change within one clock tick (no fine-grained timestamps here)")
	}
	got := take(t, root, Options{Prior: doctored(base, "")})
	if got.Lookup("d/new") == nil {
		t.Errorf("d/new missing: the changed directory's listing was taken from the prior")
	}
}

// TestSymlinkTargetReusedOnlyWhenUnchanged: a symlink's target comes from
// the prior only when its metadata all match, older than the cutoff.
func TestSymlinkTargetReusedOnlyWhenUnchanged(t *testing.T) {
	root := listingTree(t)
	base := take(t, root, Options{})
	for _, c := range []struct {
		name   string
		change func(e *Entry)
		reuse  bool
	}{
		{"nothing", func(e *Entry) {}, true},
		{"ino", func(e *Entry) { e.Ino++ }, false},
		{"size", func(e *Entry) { e.Size++ }, false},
		{"mtime", func(e *Entry) { e.MTime++ }, false},
		{"ctime", func(e *Entry) { e.CTime-- }, false},
		{"error", func(e *Entry) { e.Err = "permission denied" }, false},
		{"no target", func(e *Entry) { e.Target = "" }, false},
	} {
		p := doctored(base, "")
		c.change(p.Lookup("d/l"))
		got := take(t, root, Options{Prior: p}).Lookup("d/l").Target
		if reused := got == "poison"; reused != c.reuse {
			t.Errorf("%s: target %q, reused %v, want %v", c.name, got, reused, c.reuse)
		} else if !c.reuse && got != "a" {
			t.Errorf("%s: target %q, want a", c.name, got)
		}
	}
}

// TestDirXattrsReusedOnlyWhenUnchanged: an unchanged directory's extended
// attributes come from the prior as its names do (setting one changes the
// ctime); a changed one, or one whose prior record does not know them, has
// them read.
func TestDirXattrsReusedOnlyWhenUnchanged(t *testing.T) {
	if !xattrSupported {
		t.Skip("this platform's walk records no extended attributes")
	}
	root := listingTree(t)
	base := take(t, root, Options{})
	real := base.Lookup("d").Xattr
	if real == "" {
		t.Fatal("the walk did not record d's extended attributes")
	}
	for _, c := range []struct {
		name   string
		change func(e *Entry)
		want   string
	}{
		{"nothing", func(e *Entry) {}, "poison"},
		{"ctime", func(e *Entry) { e.CTime-- }, real},
		{"ino", func(e *Entry) { e.Ino++ }, real},
		{"unknown in the prior", func(e *Entry) { e.Xattr = "" }, real},
	} {
		p := doctored(base, "")
		p.Lookup("d").Xattr = "poison"
		c.change(p.Lookup("d"))
		if got := take(t, root, Options{Prior: p}).Lookup("d").Xattr; got != c.want {
			t.Errorf("%s: d's xattrs %q, want %q", c.name, got, c.want)
		}
	}
}
