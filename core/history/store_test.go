//go:build !js

package history

import (
	"path/filepath"
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
