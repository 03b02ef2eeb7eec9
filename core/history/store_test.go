//go:build !js

package history

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

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
