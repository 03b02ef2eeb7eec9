package proc

import (
	"encoding/binary"
	"testing"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompInput fabricates a struct seccomp_data for golang.org/x/net/bpf's
// VM. The VM loads words in network byte order, the kernel in the
// machine's: each 32-bit word is written big-endian where the kernel
// would find it on a little-endian machine (a 64-bit argument's low word
// first), so the programs run unchanged.
func seccompInput(a *arch.Info, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], uint32(a.ID))
	for i, v := range args {
		binary.BigEndian.PutUint32(b[16+8*i:], uint32(v))
		binary.BigEndian.PutUint32(b[20+8*i:], uint32(v>>32))
	}
	return b
}

func runFilter(t *testing.T, raw []bpf.RawInstruction, in []byte) uint32 {
	t.Helper()
	insts, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the program does not disassemble")
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	v, err := vm.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

// strongest is the kernel's answer across filters: the action with the
// highest precedence, the lowest as a signed 32-bit value
// (seccomp_run_filters, ACTION_ONLY).
func strongest(rets ...uint32) uint32 {
	best := rets[0]
	for _, r := range rets[1:] {
		if int32(r&unix.SECCOMP_RET_ACTION_FULL) < int32(best&unix.SECCOMP_RET_ACTION_FULL) {
			best = r
		}
	}
	return best
}

// TestABIGuard runs the assembled filters in a BPF VM: a call of a foreign
// ABI (i386 through INT $0x80, x32) gets the foreign action before any
// rule, whatever its number means natively, while native calls still meet
// the library's rules. Across the thread's filters a foreign call goes to
// the supervisor with the watcher and fails with ENOSYS without it. The
// library alone allows them (the defect).
func TestABIGuard(t *testing.T) {
	a := seccompArch()
	if a == nil || a.ID != arch.X86_64.ID {
		t.Skip("the foreign ABIs tested are those of x86_64")
	}
	notifyErr := unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	i386Socket := seccompInput(arch.I386, 359, unix.AF_INET, unix.SOCK_DGRAM)
	i386Keyctl := seccompInput(arch.I386, 288)
	i386Chmod := seccompInput(arch.I386, 15)
	x32Socket := seccompInput(arch.X86_64, x32Bit|41, unix.AF_INET, unix.SOCK_DGRAM)
	foreign := [][]byte{i386Socket, i386Keyctl, i386Chmod, x32Socket}

	// The defect: the library sends a foreign arch to the default action.
	lib := adminPolicy(a)
	insts, err := lib.Assemble()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := bpf.Assemble(insts)
	if got := runFilter(t, raw, i386Keyctl); got != unix.SECCOMP_RET_ALLOW {
		t.Logf("the library alone answers i386 keyctl with %#x", got)
	} else {
		t.Logf("the library alone allows i386 keyctl (what abiGuard is for)")
	}

	policies := map[string]seccomp.Policy{
		"admin": adminPolicy(a), "socket": socketPolicy(a, false, true),
		"socket-inet": socketPolicy(a, true, false), "notify": notifyPolicy(a, true),
	}
	for _, watched := range []bool{true, false} {
		var all [][]bpf.RawInstruction
		for name, p := range policies {
			notify := name == "notify"
			if notify && !watched {
				continue
			}
			raw, err := assemble(p, a, foreignAction(notify, watched))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if name != "socket-inet" {
				all = append(all, raw)
			}
			for i, in := range foreign {
				if got, want := runFilter(t, raw, in), foreignAction(notify, watched); got != want {
					t.Errorf("%s (watched %v): foreign call %d answered %#x, want %#x", name, watched, i, got, want)
				}
			}
			// Native calls: the library's rules.
			getpid := seccompInput(a, uint32(a.SyscallNames["getpid"]))
			if got := runFilter(t, raw, getpid); got != unix.SECCOMP_RET_ALLOW {
				t.Errorf("%s: getpid answered %#x", name, got)
			}
		}
		// The thread's answer for each foreign call, all filters together.
		for i, in := range foreign {
			var rets []uint32
			for _, raw := range all {
				rets = append(rets, runFilter(t, raw, in))
			}
			got := strongest(rets...)
			if watched && got != unix.SECCOMP_RET_USER_NOTIF || !watched && got != notifyErr {
				t.Errorf("watched %v: foreign call %d: the kernel would answer %#x", watched, i, got)
			}
		}
	}
	check := func(p seccomp.Policy, in []byte, want uint32) {
		t.Helper()
		raw, err := assemble(p, a, foreignAction(false, true))
		if err != nil {
			t.Fatal(err)
		}
		if got := runFilter(t, raw, in); got != want {
			t.Errorf("native call answered %#x, want %#x", got, want)
		}
	}
	check(adminPolicy(a), seccompInput(a, uint32(a.SyscallNames["keyctl"])), unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	check(socketPolicy(a, false, true), seccompInput(a, uint32(a.SyscallNames["socket"]), unix.AF_INET), unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))
	check(socketPolicy(a, false, true), seccompInput(a, uint32(a.SyscallNames["socket"]), unix.AF_UNIX), unix.SECCOMP_RET_ALLOW)
	check(notifyPolicy(a, false), seccompInput(a, uint32(a.SyscallNames["openat"])), unix.SECCOMP_RET_USER_NOTIF)

	for _, c := range []struct {
		d        seccompData
		abi, tgt string
	}{
		{seccompData{Nr: 359, Arch: uint32(arch.I386.ID)}, "i386", "i386 socket (359)"},
		{seccompData{Nr: x32Bit | 41, Arch: uint32(arch.X86_64.ID)}, "x32", "x32 socket (41)"},
		{seccompData{Nr: 99999, Arch: uint32(arch.I386.ID)}, "i386", "i386 99999"},
		{seccompData{Nr: 7, Arch: 0x1234}, "arch 0x1234", "arch 0x1234 7"},
	} {
		abi, tgt := foreignName(&c.d)
		if abi != c.abi || tgt != c.tgt {
			t.Errorf("foreignName(%+v) = %q, %q; want %q, %q", c.d, abi, tgt, c.abi, c.tgt)
		}
		if !foreignABI(a, &c.d) {
			t.Errorf("foreignABI(%+v) = false", c.d)
		}
	}
	if foreignABI(a, &seccompData{Nr: 41, Arch: uint32(a.ID)}) {
		t.Error("a native call is foreign")
	}
}
