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

// WithoutSupervisorCleanup makes the supervisors of t's runs skip their
// final sweep, as if it had run out of time at once: what the script left
// is then the gate's to find. Not parallel-safe: t must not call t.Parallel.
func WithoutSupervisorCleanup(t *testing.T) {
	t.Helper()
	supervisorCleanup.Store(-1)
	t.Cleanup(func() { supervisorCleanup.Store(0) })
}

// ReapAdoptedWhileRunning holds this process in the state of a run in
// progress (a child subreaper, its adopted children reaped as they exit)
// until t ends.
func ReapAdoptedWhileRunning(t *testing.T) {
	t.Helper()
	t.Cleanup(enterRun())
}
