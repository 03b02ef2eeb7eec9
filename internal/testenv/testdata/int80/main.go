//go:build linux && amd64

// Command int80 makes system calls through the i386 entry (INT $0x80) and,
// for x32, through SYSCALL with bit 30 of the number set, from a 64-bit
// process: what a contained script could do to get past seccomp filters
// that look at the native system call table only. Each argument names one
// attempt; each prints "NAME RESULT" (RESULT: the call's return value, a
// negative one is -errno). It is built by the tests (internal/testenv).
//
//	int80 getpid | udp PORT | unix PATH | userfaultfd | io_uring | keyctl |
//	      hook DIR | write FILE | chmod FILE | x32 | seccomp
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

func int80(nr, a1, a2, a3, a4, a5, a6 uintptr) uintptr

// i386 system call numbers (arch/x86/entry/syscalls/syscall_32.tbl).
const (
	nrWrite        = 4
	nrOpen         = 5
	nrClose        = 6
	nrChmod        = 15
	nrGetpid       = 20
	nrMkdir        = 39
	nrKeyctl       = 288
	nrSeccomp      = 354
	nrSocket       = 359
	nrConnect      = 362
	nrSendto       = 369
	nrUserfaultfd  = 374
	nrIoUringSetup = 425
	x32Bit         = 0x40000000
	x32Socket      = 41 // the x32 table shares the 64-bit numbers here
	keyctlGetKeyID = 0
)

// low is a page below 4 GiB (MAP_32BIT): the i386 entry takes 32-bit
// pointers.
var low []byte

func put(off int, b []byte) uintptr {
	copy(low[off:], b)
	low[off+len(b)] = 0
	return uintptr(unsafe.Pointer(&low[off]))
}

func sys(nr uintptr, a ...uintptr) int32 {
	var v [6]uintptr
	copy(v[:], a)
	return int32(int80(nr, v[0], v[1], v[2], v[3], v[4], v[5]))
}

func main() {
	var err error
	low, err = syscall.Mmap(-1, 0, 1<<16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_32BIT)
	if err != nil {
		fmt.Fprintln(os.Stderr, "int80: mmap:", err)
		os.Exit(2)
	}
	args := os.Args[1:]
	for len(args) > 0 {
		name := args[0]
		args = args[1:]
		arg := func() string {
			if len(args) == 0 {
				fmt.Fprintln(os.Stderr, "int80:", name, "needs an argument")
				os.Exit(2)
			}
			a := args[0]
			args = args[1:]
			return a
		}
		var r int32
		switch name {
		case "getpid":
			r = sys(nrGetpid)
		case "udp":
			port, _ := strconv.Atoi(arg())
			fd := sys(nrSocket, syscall.AF_INET, syscall.SOCK_DGRAM, 0)
			if r = fd; fd >= 0 {
				sa := make([]byte, 16)
				binary.LittleEndian.PutUint16(sa, syscall.AF_INET)
				binary.BigEndian.PutUint16(sa[2:], uint16(port))
				copy(sa[4:], []byte{127, 0, 0, 1})
				r = sys(nrSendto, uintptr(fd), put(0, []byte("int80")), 5, 0, put(64, sa), 16)
				sys(nrClose, uintptr(fd))
			}
		case "unix":
			path := arg()
			fd := sys(nrSocket, syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if r = fd; fd >= 0 {
				sa := make([]byte, 2+len(path))
				binary.LittleEndian.PutUint16(sa, syscall.AF_UNIX)
				copy(sa[2:], path)
				r = sys(nrConnect, uintptr(fd), put(0, sa), uintptr(len(sa)+1))
				sys(nrClose, uintptr(fd))
			}
		case "userfaultfd":
			r = sys(nrUserfaultfd, syscall.O_CLOEXEC)
		case "io_uring":
			r = sys(nrIoUringSetup, 4, put(0, make([]byte, 120)))
		case "keyctl":
			r = sys(nrKeyctl, keyctlGetKeyID, 0xfffffffc, 1) // KEY_SPEC_USER_KEYRING (-4)
		case "seccomp": // a filter with a listener of its own: SECCOMP_SET_MODE_FILTER, NEW_LISTENER, NULL
			r = sys(nrSeccomp, 1, 8, 0)
		case "hook": // mkdir DIR and write DIR/pre-commit: the first failure, or the write's result
			dir := arg()
			r = sys(nrMkdir, put(0, []byte(dir)), 0o755)
			if w := writeFile(dir+"/pre-commit", "#!/bin/sh\necho pwned\n", syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC); r >= 0 {
				r = w
			}
		case "write":
			r = writeFile(arg(), "[core]\n\tfsmonitor = evil\n", syscall.O_WRONLY|syscall.O_APPEND)
		case "chmod":
			r = sys(nrChmod, put(0, []byte(arg())), 0o4777)
		case "x32": // socket(AF_INET, SOCK_DGRAM) through the x32 table
			r1, _, e := syscall.RawSyscall(x32Bit|x32Socket, syscall.AF_INET, syscall.SOCK_DGRAM, 0)
			if r = int32(r1); e != 0 {
				r = -int32(e)
			}
		default:
			fmt.Fprintln(os.Stderr, "int80: unknown attempt", name)
			os.Exit(2)
		}
		fmt.Printf("%s %d\n", name, r)
	}
}

func writeFile(path, data string, flags int) int32 {
	fd := sys(nrOpen, put(0, []byte(path)), uintptr(flags), 0o755)
	if fd < 0 {
		return fd
	}
	defer sys(nrClose, uintptr(fd))
	return sys(nrWrite, uintptr(fd), put(4096, []byte(data)), uintptr(len(data)))
}
