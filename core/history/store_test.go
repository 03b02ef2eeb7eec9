//go:build !js

package history

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/pgtest"
)

// storeFn makes a fresh, empty store for t and returns it with the path
// (or team store URL) that opens it again.
type storeFn func(t *testing.T) (*DB, string)

// storeKinds are the store implementations the suite runs against: the
// local SQLite file and a team store on a real PostgreSQL server (started
// once per kind; each case gets a database of its own).
var storeKinds = []struct {
	name  string
	start func(t *testing.T) storeFn
}{
	{"sqlite", func(t *testing.T) storeFn {
		return func(t *testing.T) (*DB, string) {
			path := filepath.Join(t.TempDir(), "sub", "history.db")
			return openTest(t, path), path
		}
	}},
	{"postgres", func(t *testing.T) storeFn {
		srv := pgtest.Start(t)
		// A team store keeps its caches in the local history: never the user's.
		t.Setenv("XDG_CONFIG_HOME", t.TempDir())
		t.Setenv(EnvDB, "")
		return func(t *testing.T) (*DB, string) {
			url := srv.URL("owner", srv.NewDB(t, "owner"))
			return openTest(t, url), url
		}
	}},
}

// storeSuite is the one store test suite, run against every store kind.
var storeSuite = []struct {
	name string
	fn   func(t *testing.T, newStore storeFn)
}{
	{"RoundTripOddPaths", testRoundTripOddPaths},
	{"RoundTripEmptyReport", testRoundTripEmptyReport},
	{"ListFilterDecide", testListFilterDecide},
	{"AllowlistVersions", testAllowlistVersions},
	{"ApproveRun", testApproveRun},
	{"HashCache", testHashCache},
	{"ConcurrentGoroutines", testConcurrentGoroutines},
}

func TestStoreSuite(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			newStore := k.start(t)
			for _, c := range storeSuite {
				t.Run(c.name, func(t *testing.T) { c.fn(t, newStore) })
			}
		})
	}
}

// TestTeamStoreConcurrentProcesses: two processes recording runs for one
// workspace on one team store at the same time lose nothing and keep one
// valid chain (the writers' advisory lock).
func TestTeamStoreConcurrentProcesses(t *testing.T) {
	srv := pgtest.Start(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the local caches: never the user's
	t.Setenv(EnvDB, "")
	url := srv.URL("owner", srv.NewDB(t, "owner"))
	openTest(t, url) // migrated once, before the children race
	const perChild = 40
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|p%d|%d|/ws/one", childEnv, url, i, perChild))
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Errorf("child %d: %v: %s", i, errs[i], outs[i])
		}
	}
	db := openTest(t, url)
	if n, err := db.Count(ctx, Filter{Workspace: "/ws/one"}); err != nil || n != 2*perChild {
		t.Errorf("%d runs, %v; want %d", n, err, 2*perChild)
	}
	if b, err := db.Verify(ctx); b != nil || err != nil {
		t.Errorf("verify: %+v, %v", b, err)
	}
}

// TestStableKey: a workspace's id on a team store is the same on every
// machine: the .diffgate file's id, else the git remote (however spelled)
// and the path inside the checkout, else the path.
func TestStableKey(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	os.MkdirAll(filepath.Join(repo, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(repo, ".git", "config"), []byte("[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://x/y\n[remote \"origin\"]\n\turl = ssh://git@GitHub.com:22/team/repo.git\n"), 0o644)
	for _, c := range []struct{ dir, want string }{
		{repo, "git:github.com/team/repo"},
		{filepath.Join(repo, "a", "b"), "git:github.com/team/repo#a/b"},
		{root, root},
	} {
		if got, err := StableKey(c.dir); err != nil || got != c.want {
			t.Errorf("StableKey(%s) = %q, %v; want %q", c.dir, got, err, c.want)
		}
	}
	// A worktree's .git is a file naming the git directory.
	wt := filepath.Join(root, "wt")
	os.MkdirAll(filepath.Join(repo, ".git", "worktrees", "wt"), 0o755)
	os.WriteFile(filepath.Join(repo, ".git", "worktrees", "wt", "commondir"), []byte("../..\n"), 0o644)
	os.MkdirAll(wt, 0o755)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n"), 0o644)
	if got, _ := StableKey(wt); got != "git:github.com/team/repo" {
		t.Errorf("worktree: %q", got)
	}
	// .diffgate wins.
	os.WriteFile(filepath.Join(repo, "a", IDFile), []byte("id = payments-gen\n"), 0o644)
	if got, _ := StableKey(filepath.Join(repo, "a")); got != "id:payments-gen" {
		t.Errorf(".diffgate: %q", got)
	}
	os.WriteFile(filepath.Join(repo, "a", "b", IDFile), []byte("identity-svc\n"), 0o644)
	if got, _ := StableKey(filepath.Join(repo, "a", "b")); got != "id:identity-svc" {
		t.Errorf(".diffgate with a bare id: %q", got)
	}
	os.WriteFile(filepath.Join(repo, "a", "b", IDFile), []byte("\n"), 0o644)
	if _, err := StableKey(filepath.Join(repo, "a", "b")); err == nil {
		t.Error("an empty .diffgate was accepted")
	}
	for in, want := range map[string]string{
		"https://user:pw@github.com/team/repo.git/": "github.com/team/repo",
		"git@github.com:team/repo.git":              "github.com/team/repo",
		"ssh://git@github.com/team/repo":            "github.com/team/repo",
		"http://GitLab.example:8080/g/r":            "gitlab.example/g/r",
	} {
		if got := normalizeRemote(in); got != want {
			t.Errorf("normalizeRemote(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTeamStoreCachesStayLocal: a team store's hash cache and text store
// are this machine's: kept in the local history file (LocalPath), never
// sent to the server, and that file is what Files and CheckOutside guard.
func TestTeamStoreCachesStayLocal(t *testing.T) {
	srv := pgtest.Start(t)
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv(EnvDB, "")
	url := srv.URL("owner", srv.NewDB(t, "owner"))
	db := openTest(t, url)
	ws := "/abs/ws"
	m := sampleManifest(ws, 100)
	if _, err := db.Record(ctx, &Run{Report: sampleReport(ws, 3)}, sampleContents, m); err != nil {
		t.Fatal(err)
	}
	text := []byte("a text of the workspace\n")
	if _, err := db.KeepTexts(ctx, ws, func(yield func(string, []byte) bool) { yield(shaOf(string(text)), text) }, nil, nil, 1<<20); err != nil {
		t.Fatal(err)
	}
	if got, err := db.HashCache(ctx, ws); err != nil || got == nil || len(got.Entries) != 100 {
		t.Fatalf("hash cache: %v, %v", got, err)
	}
	if got, err := db.Text(ctx, ws, shaOf(string(text))); err != nil || string(got) != string(text) {
		t.Fatalf("text: %q, %v", got, err)
	}
	for _, table := range []string{"hash_cache", "text_store"} {
		var n int
		if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s on the server: %d rows, %v; want none", table, n, err)
		}
	}
	local := filepath.Join(cfg, "diffgate", "history.db")
	ldb := openTest(t, local)
	if got, err := ldb.HashCache(ctx, ws); err != nil || got == nil {
		t.Errorf("the local file's hash cache: %v, %v", got, err)
	}
	if fs := Files(url); len(fs) == 0 || fs[0] != local {
		t.Errorf("Files(team store) = %q, want the local file first", fs)
	}
	cfgDir, err := fspath.ResolveDir(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckOutside(url, cfgDir); err == nil {
		t.Error("a workspace holding the local cache file was accepted")
	}
}
