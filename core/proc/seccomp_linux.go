package proc

import (
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The script's thread gets up to three seccomp filters, each one policy
// of github.com/elastic/go-seccomp-bpf (which holds the system call
// tables and assembles the BPF; a policy's first matching group decides,
// so each filter is one group). The kernel runs them all and takes the
// strongest answer (an errno beats a notification, which beats allow):
//
//   - adminFilter: system calls that administer the host (modules, mounts,
//     clock, reboot, swap, kexec, keyrings, bpf, perf, ...) and a seccomp
//     filter with a listener of the script's own fail with EPERM. As root
//     most of them would work: the capability drop takes their privilege
//     away too, this keeps them away should one remain.
//   - socketFilter: io_uring (which would do opens and connects behind
//     every other filter's back) and sockets of any family but AF_UNIX and
//     AF_NETLINK (and AF_INET/AF_INET6 while the network is on or while
//     they are answered with stand-ins; socket pairs only of AF_UNIX) fail
//     with EACCES.
//   - notifyFilter: the file system and network calls the supervisor
//     watches come to it as user notifications (SECCOMP_RET_USER_NOTIF,
//     see watcher): it records what Landlock will refuse, refuses what
//     Landlock cannot express, and performs connects itself.
//
// A call of another ABI than the native one (on x86_64: i386 through
// INT $0x80, and x32, the native arch with bit 30 of the number set) has
// other numbers, which no rule of the library's would match: go-seccomp-bpf
// sends a foreign arch to the policy's default action (Allow). So every
// filter starts with abiGuard, which answers such a call before any other
// rule, with foreignAction: the notify filter hands it to the supervisor,
// which refuses it (ENOSYS) and records "syscall-abi"; the other filters
// then allow it, as an errno of theirs would beat the notification and
// nothing would be recorded. Without the watcher every filter refuses it
// with ENOSYS itself. Should the supervisor be gone, the kernel answers a
// notification with ENOSYS too: no path lets a foreign call through.

// adminNames are the host-administration calls adminFilter refuses.
var adminNames = []string{
	"acct", "add_key", "keyctl", "request_key", "bpf", "perf_event_open",
	"clock_adjtime", "clock_settime", "settimeofday", "stime",
	"init_module", "finit_module", "delete_module", "create_module",
	"kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
	"ioperm", "iopl", "lookup_dcookie", "nfsservctl", "quotactl", "quotactl_fd",
	"mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree",
	"fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
	"open_by_handle_at", "syslog", "uselib", "userfaultfd", "vhangup",
}

// File system calls the supervisor watches (notifyFilter).
var (
	openNames   = []string{"open", "openat", "openat2", "creat"}
	createNames = []string{"mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat"}
	removeNames = []string{"unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2", "truncate"}
	metaNames   = []string{
		"chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "fchownat", "lchown",
		"utime", "utimes", "futimesat", "utimensat",
		"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
		"setxattrat", "removexattrat",
	}
)

// seccompArch is the system call table of this platform ("" when the
// library has none: no filter can be built).
func seccompArch() *arch.Info {
	a, err := arch.GetInfo("")
	if err != nil {
		return nil
	}
	return a
}

// known keeps the names this platform has (arm64 has no open(2), no
// mkdir(2), ...): the library refuses a policy naming an unknown call.
func known(a *arch.Info, names ...[]string) []string {
	var out []string
	for _, list := range names {
		for _, n := range list {
			if _, ok := a.SyscallNames[n]; ok {
				out = append(out, n)
			}
		}
	}
	return out
}

func errnoAction(e unix.Errno) seccomp.Action { return seccomp.ActionErrno | seccomp.Action(e) }

// adminPolicy refuses the host-administration calls, and a seccomp filter
// of the script's own with a listener: the kernel hands a notification to
// the most recently installed filter that asks for one, so such a filter
// would take the watched calls away from the supervisor (and allow them).
func adminPolicy(a *arch.Info) seccomp.Policy {
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{{
		Names: known(a, adminNames), Action: errnoAction(unix.EPERM),
		NamesWithCondtions: []seccomp.NameWithConditions{{Name: "seccomp", Conditions: seccomp.ArgumentConditions{
			{Argument: 1, Operation: seccomp.BitsSet, Value: unix.SECCOMP_FILTER_FLAG_NEW_LISTENER}}}},
	}}}
}

// socketPolicy refuses io_uring and the socket families the script may not
// open: inet says whether AF_INET and AF_INET6 may reach the kernel (the
// network is on, or those calls are answered with stand-ins). A family is
// compared as a 64-bit value: a family with garbage in its high word (the
// kernel reads only the low one) is never one of the allowed ones, so it
// is refused.
// noConnect (the network off and no watcher to carry connects out) refuses
// connect and addressed sends altogether: an AF_UNIX socket outside the
// workspace (a container engine's, a session bus) must not be reached, and
// nothing else can tell where a connect goes.
func socketPolicy(a *arch.Info, inet, noConnect bool) seccomp.Policy {
	allowed := []uint64{unix.AF_UNIX, unix.AF_NETLINK}
	if inet {
		allowed = append(allowed, unix.AF_INET, unix.AF_INET6)
	}
	var conds seccomp.ArgumentConditions
	for _, f := range allowed {
		conds = append(conds, seccomp.Condition{Argument: 0, Operation: seccomp.NotEqual, Value: f})
	}
	g := seccomp.SyscallGroup{
		Names: known(a, []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}),
		NamesWithCondtions: []seccomp.NameWithConditions{
			{Name: "socket", Conditions: conds},
			{Name: "socketpair", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_UNIX}}},
		},
		Action: errnoAction(unix.EACCES),
	}
	if noConnect {
		g.Names = append(g.Names, known(a, []string{"connect", "sendmmsg"})...)
		g.NamesWithCondtions = append(g.NamesWithCondtions, seccomp.NameWithConditions{Name: "sendto",
			Conditions: seccomp.ArgumentConditions{{Argument: 4, Operation: seccomp.NotEqual, Value: 0}}})
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{g}}
}

// notifyPolicy sends the watched calls to the supervisor. standIns adds
// what the network stand-ins need: socket(AF_INET|AF_INET6), bind, and
// setsockopt at the IP, IPv6, TCP and UDP levels (a stand-in, an AF_UNIX
// socket, would refuse those options before the program gets to its
// connect). sendto is watched only with an address.
func notifyPolicy(a *arch.Info, standIns bool) seccomp.Policy {
	g := seccomp.SyscallGroup{
		Names:  known(a, openNames, createNames, removeNames, metaNames, []string{"connect", "sendmsg", "sendmmsg"}),
		Action: seccomp.Action(unix.SECCOMP_RET_USER_NOTIF),
		NamesWithCondtions: []seccomp.NameWithConditions{{Name: "sendto", Conditions: seccomp.ArgumentConditions{
			{Argument: 4, Operation: seccomp.NotEqual, Value: 0}}}},
	}
	if standIns {
		g.Names = append(g.Names, "bind")
		for _, f := range []uint64{unix.AF_INET, unix.AF_INET6} {
			g.NamesWithCondtions = append(g.NamesWithCondtions, seccomp.NameWithConditions{Name: "socket",
				Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: f}}})
		}
		for _, lvl := range []uint64{unix.SOL_IP, unix.SOL_TCP, unix.SOL_UDP, unix.SOL_IPV6} {
			g.NamesWithCondtions = append(g.NamesWithCondtions, seccomp.NameWithConditions{Name: "setsockopt",
				Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.Equal, Value: lvl}}})
		}
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{g}}
}

// x32Bit marks a system call of the x32 ABI on x86_64 (__X32_SYSCALL_BIT).
const x32Bit = 0x40000000

// foreignAction is what a filter answers a call of a foreign ABI: the
// notify filter hands it to the supervisor (which refuses and records
// it); with the notify filter loaded (watched) the other filters allow it,
// since the kernel takes the strongest answer of all filters and an errno
// beats a notification; without it each refuses it with ENOSYS, the
// errno of a system call that does not exist.
func foreignAction(notify, watched bool) uint32 {
	switch {
	case notify:
		return unix.SECCOMP_RET_USER_NOTIF
	case watched:
		return unix.SECCOMP_RET_ALLOW
	default:
		return unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	}
}

// abiGuard is the prefix of every filter: a call whose arch is not a's,
// or (x86_64) whose number has the x32 bit, gets foreign; every other
// goes on to the library's program, which follows.
func abiGuard(a *arch.Info, foreign uint32) []bpf.Instruction {
	g := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(a.ID), SkipFalse: 3},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: x32Bit, SkipTrue: 1},
		bpf.Jump{Skip: 1},
		bpf.RetConstant{Val: foreign},
	}
	if a.ID != arch.X86_64.ID {
		g = []bpf.Instruction{
			bpf.LoadAbsolute{Off: 4, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(a.ID), SkipTrue: 1},
			bpf.RetConstant{Val: foreign},
		}
	}
	return g
}

// foreignABI reports whether d is a call of a foreign ABI (see abiGuard).
func foreignABI(a *arch.Info, d *seccompData) bool {
	return d.Arch != uint32(a.ID) || a.ID == arch.X86_64.ID && uint32(d.Nr)&x32Bit != 0
}

// foreignName names a foreign call for the record: its ABI (the op), and
// as the target the ABI, the call's name when the library knows the table,
// and its number ("i386 socket (359)").
func foreignName(d *seccompData) (abi, target string) {
	for _, t := range []*arch.Info{arch.I386, arch.ARM, arch.X86_64, arch.AARCH64} {
		if d.Arch != uint32(t.ID) {
			continue
		}
		nr := int(d.Nr)
		if t == arch.X86_64 && uint32(d.Nr)&x32Bit != 0 {
			t, nr = arch.X32, int(uint32(d.Nr)&^x32Bit)
		}
		if name, ok := t.SyscallNumbers[nr]; ok {
			return t.Name, fmt.Sprintf("%s %s (%d)", t.Name, name, nr)
		}
		return t.Name, fmt.Sprintf("%s %d", t.Name, nr)
	}
	abi = fmt.Sprintf("arch %#x", d.Arch)
	return abi, fmt.Sprintf("%s %d", abi, uint32(d.Nr))
}

// assemble is p's program behind abiGuard(foreign).
func assemble(p seccomp.Policy, a *arch.Info, foreign uint32) ([]bpf.RawInstruction, error) {
	insts, err := p.Assemble()
	if err != nil {
		return nil, fmt.Errorf("assemble: %v", err)
	}
	raw, err := bpf.Assemble(append(abiGuard(a, foreign), insts...))
	if err != nil {
		return nil, fmt.Errorf("assemble: %v", err)
	}
	return raw, nil
}

// loadPolicy installs p behind abiGuard(foreign) on the calling thread
// (which has no_new_privs) with the given SECCOMP_FILTER_FLAG_* flags;
// with NEW_LISTENER it returns the listener (close-on-exec), otherwise -1.
func loadPolicy(p seccomp.Policy, a *arch.Info, foreign uint32, flags uintptr) (int, error) {
	raw, err := assemble(p, a, foreign)
	if err != nil {
		return -1, err
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return -1, errno
	}
	if flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER == 0 {
		return -1, nil
	}
	return int(fd), nil
}
