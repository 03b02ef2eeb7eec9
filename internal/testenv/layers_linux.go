package testenv

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

var (
	layersOnce sync.Once
	layersWhy  string
)

// ContainmentLayers says what this machine lacks for a contained run that
// blocks and observes the script's actions ("" when it lacks nothing):
// Landlock, seccomp user notification, and a private mount tree
// (MountNamespaces). The probes ask the kernel directly, independent of
// the code under test, so that a test skips for the machine, never for a
// regression of the gate.
func ContainmentLayers() string {
	layersOnce.Do(func() {
		if abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); errno != 0 || int(abi) < 1 {
			layersWhy = "no Landlock (" + errno.Error() + ")"
			return
		}
		// SECCOMP_GET_NOTIF_SIZES exists where user notification does.
		var sizes [3]uint16
		if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_NOTIF_SIZES, 0, uintptr(unsafe.Pointer(&sizes))); errno != 0 {
			layersWhy = "no seccomp user notification (" + errno.Error() + ")"
			return
		}
		if !MountNamespaces() {
			layersWhy = "no private mount namespace (unshare --mount --propagation private fails)"
		}
	})
	return layersWhy
}
