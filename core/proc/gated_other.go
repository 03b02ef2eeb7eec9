//go:build !linux

package proc

// InGatedRun reports whether the calling process runs inside a gated run. On
// this platform there is no supervisor that marks the script's tree, so it
// always returns false: callers must not rely on it as their only protection
// outside Linux.
func InGatedRun() bool { return false }

// markGate does nothing on this platform.
func markGate() (unmark func()) { return func() {} }
