package diff_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/testenv"
)

func snap(t *testing.T, root string, opt snapshot.Options) *snapshot.Manifest {
	t.Helper()
	m, err := snapshot.Take(context.Background(), root, opt)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func lines(cs []diff.Change, us []diff.Unknown) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(strings.ToUpper(string(c.Kind)) + " " + c.Path)
		if c.Risk != "" {
			b.WriteString(" [" + string(c.Risk) + "]")
		}
		b.WriteString("\n")
	}
	for _, u := range us {
		b.WriteString(u.Line(func(s string) string { return s }) + "\n")
	}
	return b.String()
}

// TestLockedDirectoryHidesNothing: as a normal user, a directory that is
// readable before and locked after (with a setuid file planted inside while
// it was open) is an UNREADABLE finding, and what was below it is not
// called removed.
func TestLockedDirectoryHidesNothing(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	root := t.TempDir()
	write(t, root, "box/a", "a")
	write(t, root, "box/sub/b", "b")
	write(t, root, "other", "o")
	box := filepath.Join(root, "box")
	before := snap(t, root, snapshot.Options{})
	write(t, root, "box/planted", "evil")
	must(t, unix.Chmod(filepath.Join(box, "planted"), 0o4755))
	must(t, os.Chmod(box, 0o755)) // same mode as before: only the lock hides it
	must(t, unix.Chmod(box, 0))
	defer os.Chmod(box, 0o755)
	after := snap(t, root, snapshot.Options{})
	cs := diff.Compare(before, after, diff.Options{})
	us := diff.Unreadable(before, after)
	got := lines(cs, us)
	want := "CHANGED box\nUNREADABLE box (cannot open directory: permission denied)\n"
	if got != want {
		t.Fatalf("got\n%swant\n%s", got, want)
	}
	// Locked on both sides: still a finding, every time.
	if got := lines(nil, diff.Unreadable(after, after)); got != "UNREADABLE box (cannot open directory: permission denied)\n" {
		t.Fatalf("both: %s", got)
	}
}

// TestUnreadableFileIsNeverUnchanged: as a normal user, a file without read
// permission is not CHANGED on a no-op run, is UNREADABLE every time, and
// an edit that keeps its size is still a finding (never "unchanged").
func TestUnreadableFileIsNeverUnchanged(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	root := t.TempDir()
	write(t, root, "secret", "aaaa")
	p := filepath.Join(root, "secret")
	must(t, os.Chmod(p, 0o200))
	before := snap(t, root, snapshot.Options{})
	after := snap(t, root, snapshot.Options{Prior: before})
	if got := lines(diff.Compare(before, after, diff.Options{}), diff.Unreadable(before, after)); got != "UNREADABLE secret (cannot read: permission denied)\n" {
		t.Fatalf("no-op: %s", got)
	}
	must(t, os.WriteFile(p, []byte("bbbb"), 0o200)) // write-only: same size, new content
	edited := snap(t, root, snapshot.Options{})
	if got := lines(diff.Compare(before, edited, diff.Options{}), diff.Unreadable(before, edited)); got != "UNREADABLE secret (cannot read: permission denied)\n" {
		t.Fatalf("edit: %s", got)
	}
	must(t, os.WriteFile(p, []byte("longer"), 0o200))
	grown := snap(t, root, snapshot.Options{})
	if got := lines(diff.Compare(before, grown, diff.Options{}), diff.Unreadable(before, grown)); got != "CHANGED secret\nUNREADABLE secret (cannot read: permission denied)\n" {
		t.Fatalf("grown: %s", got)
	}
}

// TestRootChanges: the workspace root's own mode, and a root replaced by a
// symlink to a copy, are changes of ".".
func TestRootChanges(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	write(t, ws, "f", "x")
	must(t, os.Chmod(ws, 0o755))
	before := snap(t, ws, snapshot.Options{})
	must(t, unix.Chmod(ws, 0o2777))
	after := snap(t, ws, snapshot.Options{KeepRoot: true})
	cs := diff.Compare(before, after, diff.Options{Root: ws})
	if len(cs) != 1 || cs[0].Path != "." || !cs[0].Has(diff.Mode) {
		t.Fatalf("chmod: %+v", cs)
	}
	must(t, os.Rename(ws, filepath.Join(dir, "copy")))
	must(t, os.Symlink(filepath.Join(dir, "copy"), ws))
	after = snap(t, ws, snapshot.Options{KeepRoot: true})
	cs = diff.Compare(before, after, diff.Options{Root: ws})
	us := diff.Unreadable(before, after)
	if got := lines(cs, us); got != "CHANGED . [symlink-escape]\nUNREADABLE . (not a directory)\n" {
		t.Fatalf("symlinked root:\n%s", got)
	}
}

// TestSymlinkEscapeIsResolved: links that each look inside the workspace
// but resolve outside are escapes; links that resolve inside are not.
func TestSymlinkEscapeIsResolved(t *testing.T) {
	root := t.TempDir()
	write(t, root, "keep", "k")
	must(t, os.Symlink("/etc", filepath.Join(root, "sys"))) // pre-existing, allowed once
	before := snap(t, root, snapshot.Options{})
	must(t, os.MkdirAll(filepath.Join(root, "a/b"), 0o755))
	for link, target := range map[string]string{
		"through":    "sys/passwd",                // through an existing link to /etc
		"d":          ".",                         // inside
		"chain":      "d/d/d/../../../etc/passwd", // lexically inside, resolves to ../etc/passwd
		"a/b/hop":    "../../hop2",                // inside ...
		"hop2":       "a/b/../../../etc",          // ... to a link that leaves
		"loop1":      "loop2",
		"loop2":      "loop1",
		"fine":       "a/b/../keep",
		"abs-inside": filepath.Join(root, "keep"),
	} {
		must(t, os.Symlink(target, filepath.Join(root, link)))
	}
	after := snap(t, root, snapshot.Options{})
	risky := map[string]bool{}
	for _, c := range diff.Compare(before, after, diff.Options{Root: root}) {
		if c.Risk == diff.SymlinkEscape {
			risky[c.Path] = true
		}
	}
	for _, p := range []string{"through", "chain", "a/b/hop", "hop2"} {
		if !risky[p] {
			t.Errorf("%s: not flagged", p)
		}
	}
	for _, p := range []string{"d", "loop1", "loop2", "fine", "abs-inside", "sys"} {
		if risky[p] {
			t.Errorf("%s: flagged", p)
		}
	}
}

// TestUnchangedLinkNowEscapes: a link the script did not touch, which
// resolves outside only through a directory the script turned into a link.
func TestUnchangedLinkNowEscapes(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "d/d"), 0o755))
	must(t, os.Symlink("d/d/../../etc", filepath.Join(root, "old")))
	before := snap(t, root, snapshot.Options{})
	must(t, os.RemoveAll(filepath.Join(root, "d")))
	must(t, os.Symlink(".", filepath.Join(root, "d")))
	// Changes on both sides of it, and one to the root itself: the
	// change found once the merge is over (unchangedLinks) takes its
	// place in path order, the root's stays first.
	write(t, root, "a", "x")
	write(t, root, "zz", "x")
	must(t, os.Chmod(root, 0o750))
	after := snap(t, root, snapshot.Options{})
	var got, all []string
	for _, c := range diff.Compare(before, after, diff.Options{Root: root}) {
		if c.Risk == diff.SymlinkEscape {
			got = append(got, c.Path)
		}
		all = append(all, c.Path)
	}
	if strings.Join(got, ",") != "old" {
		t.Fatalf("escapes: %v", got)
	}
	if strings.Join(all, ",") != ".,a,d,d/d,old,zz" {
		t.Fatalf("changes, in this order: %v", all)
	}
}

// TestUnchangedLinkNowEscapesThroughRetarget: a link retargeted (its type
// unchanged) is a symlink change too, which has the unchanged links
// resolved again.
func TestUnchangedLinkNowEscapesThroughRetarget(t *testing.T) {
	root := t.TempDir()
	must(t, os.Symlink(".", filepath.Join(root, "l")))
	must(t, os.Symlink("l/etc", filepath.Join(root, "old")))
	before := snap(t, root, snapshot.Options{})
	must(t, os.Remove(filepath.Join(root, "l")))
	must(t, os.Symlink("..", filepath.Join(root, "l")))
	after := snap(t, root, snapshot.Options{})
	var got []string
	for _, c := range diff.Compare(before, after, diff.Options{Root: root}) {
		if c.Risk == diff.SymlinkEscape {
			got = append(got, c.Path)
		}
	}
	if strings.Join(got, ",") != "l,old" {
		t.Fatalf("escapes: %v", got)
	}
}

// TestCapabilityGained: a file given file capabilities is a capability
// risk and an xattr change (needs CAP_SETFCAP, so root).
func TestCapabilityGained(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("setting security.capability needs root")
	}
	root := t.TempDir()
	write(t, root, "tool", "#!/bin/sh\n")
	before := snap(t, root, snapshot.Options{})
	// vfs_cap_data revision 2, effective, permitted = CAP_SETUID (7).
	v := []byte{0x01, 0, 0, 0x02, 1 << 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if err := unix.Setxattr(filepath.Join(root, "tool"), "security.capability", v, 0); err != nil {
		t.Skipf("setxattr: %v", err)
	}
	for _, prior := range []*snapshot.Manifest{nil, before} {
		after := snap(t, root, snapshot.Options{Prior: prior})
		cs := diff.Compare(before, after, diff.Options{Root: root})
		if len(cs) != 1 || cs[0].Risk != diff.Capability || !cs[0].Has(diff.Xattr) {
			t.Fatalf("prior %v: %+v", prior != nil, cs)
		}
		// Dropping it again is no gain.
		if back := diff.Compare(after, before, diff.Options{Root: root}); len(back) != 1 || back[0].Risk != "" {
			t.Fatalf("removal: %+v", back)
		}
	}
}

// TestAutomationIsARisk: an added or changed CI workflow, GitLab pipeline
// or git hook is the risk automation (something runs it later, outside
// the gate; the contract's round 3); the same names elsewhere, a hook's
// .sample and a workflow whose time alone changed are not.
func TestAutomationIsARisk(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, ".github/workflows/old.yml", "on: push\n")
	write(t, ws, ".github/workflows/touched.yml", "on: push\n")
	write(t, ws, "README", "r")
	before := snap(t, ws, snapshot.Options{})
	for _, p := range []string{".github/workflows/ci.yml", ".github/workflows/rel.yaml", ".gitlab-ci.yml",
		".git/hooks/pre-commit", ".git/hooks/pre-push.sample", "sub/.git/hooks/post-checkout",
		"sub/.gitlab-ci.yml", "docs/ci.yml", ".github/ci.yml", ".github/workflows/notes.txt"} {
		write(t, ws, p, "x")
	}
	write(t, ws, ".github/workflows/old.yml", "on: pull_request\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(ws, ".github/workflows/touched.yml"), later, later); err != nil {
		t.Fatal(err)
	}
	after := snap(t, ws, snapshot.Options{})
	got := map[string]diff.Risk{}
	for _, c := range diff.Compare(before, after, diff.Options{Root: ws}) {
		got[c.Path] = c.Risk
	}
	for p, want := range map[string]diff.Risk{
		".github/workflows/ci.yml": diff.Automation, ".github/workflows/rel.yaml": diff.Automation,
		".gitlab-ci.yml": diff.Automation, ".git/hooks/pre-commit": diff.Automation,
		"sub/.git/hooks/post-checkout": diff.Automation, "sub/.gitlab-ci.yml": diff.Automation,
		".git/hooks/pre-push.sample": diff.NoRisk, "docs/ci.yml": diff.NoRisk, ".github/ci.yml": diff.NoRisk,
		".github/workflows/notes.txt": diff.NoRisk, ".github/workflows/old.yml": diff.Automation,
	} {
		if r, ok := got[p]; !ok || r != want {
			t.Errorf("%s: risk %q (listed %v), want %q", p, r, ok, want)
		}
	}
	if r := got[".github/workflows/touched.yml"]; r != diff.NoRisk {
		t.Errorf("a workflow whose time alone changed: risk %q", r)
	}
}
