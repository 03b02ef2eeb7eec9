package proc

import "testing"

// WithoutCgroup turns the cgroup mechanism off for t (the subreaper
// mechanism then keeps the script's tree, as it does where no cgroup v2 is
// writable). Not parallel-safe: t must not call t.Parallel.
func WithoutCgroup(t *testing.T) {
	t.Helper()
	noCgroup.Store(true)
	t.Cleanup(func() { noCgroup.Store(false) })
}
