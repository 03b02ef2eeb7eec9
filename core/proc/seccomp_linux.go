package proc

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompArch is the audit architecture of the platforms the network
// filter knows (little-endian: the low word of an argument comes first).
var seccompArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}

// netFilter returns the seccomp program that turns the network off:
// socket(AF_INET|AF_INET6, ...) and io_uring_setup fail with EACCES, as
// does every system call of another ABI (x32, a 32-bit compat layer)
// where the numbers differ; AF_UNIX and everything else are allowed.
func netFilter() ([]unix.SockFilter, bool) {
	arch, ok := seccompArch[runtime.GOARCH]
	if !ok {
		return nil, false
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	deny := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
	return []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, K: arch, Jt: 1},
		{Code: ret, K: deny},
		{Code: ld, K: 0},                  // seccomp_data.nr
		{Code: jge, K: 0x40000000, Jt: 6}, // the x32 ABI
		{Code: jeq, K: unix.SYS_IO_URING_SETUP, Jt: 5},
		{Code: jeq, K: unix.SYS_SOCKET, Jf: 3},
		{Code: ld, K: 16}, // seccomp_data.args[0], low word: the family
		{Code: jeq, K: unix.AF_INET, Jt: 2},
		{Code: jeq, K: unix.AF_INET6, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: deny},
	}, true
}

// applyNetFilter loads the network filter on the calling thread (which
// has no_new_privs); what it starts inherits it.
func applyNetFilter() error {
	f, ok := netFilter()
	if !ok {
		return fmt.Errorf("no filter for %s", runtime.GOARCH)
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return err
	}
	runtime.KeepAlive(f)
	return nil
}
