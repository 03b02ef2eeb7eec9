package gate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/diffgate/diffgate/core/snapshot"
)

// TestGitDirs: every git directory of the workspace is found (a .git, a
// submodule's and a nested submodule's under .git/modules, a worktree's, a
// bare repository, a .git file's gitdir: target inside the workspace, not
// one outside), and --writable .git lifts those inside it.
func TestGitDirs(t *testing.T) {
	ws := t.TempDir()
	mk := func(dir string, files ...string) {
		os.MkdirAll(filepath.Join(ws, dir), 0o755)
		for _, f := range files {
			p := filepath.Join(ws, dir, f)
			if f == "objects" {
				os.MkdirAll(p, 0o755)
			} else {
				os.WriteFile(p, []byte("x\n"), 0o644)
			}
		}
	}
	mk(".git", "HEAD", "objects")
	mk(".git/modules/a", "HEAD", "objects")
	mk(".git/modules/a/modules/b", "HEAD", "objects")
	mk(".git/worktrees/w", "HEAD", "commondir")
	mk("bare.git", "HEAD", "objects")
	mk("sep", "HEAD", "objects")
	mk("x")
	os.WriteFile(filepath.Join(ws, "x", ".git"), []byte("gitdir: ../sep\n"), 0o644)
	mk("y")
	os.WriteFile(filepath.Join(ws, "y", ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
	mk("plain", "HEAD") // no objects, no commondir: not a git directory
	m, err := snapshot.Take(context.Background(), ws, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range []string{".git", ".git/modules/a", ".git/modules/a/modules/b", ".git/worktrees/w", "bare.git", "sep"} {
		want = append(want, filepath.Join(ws, d))
	}
	slices.Sort(want)
	if got := gitDirs(ws, m); !slices.Equal(got, want) {
		t.Errorf("gitDirs = %q\nwant %q", got, want)
	}
	ro := gitReadOnly(ws, gitDirs(ws, m), []string{ws, filepath.Join(ws, ".git")})
	for _, p := range ro {
		if filepath.Dir(p) != filepath.Join(ws, "bare.git") && filepath.Dir(p) != filepath.Join(ws, "sep") {
			t.Errorf("--writable .git left %s read-only", p)
		}
	}
	if len(ro) != 8 || !slices.Contains(ro, filepath.Join(ws, "sep", "hooks")) || !slices.Contains(ro, filepath.Join(ws, "bare.git", "commondir")) {
		t.Errorf("gitReadOnly = %q", ro)
	}
}
