package proc

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"
)

// The network handlers.
//
// With the network off, no AF_INET or AF_INET6 socket ever reaches the
// kernel: socket() is answered with a stand-in, an unconnected AF_UNIX
// stream socket injected into the script (SECCOMP_ADDFD_FLAG_SEND). The
// program goes on to connect it, send on it or bind it, and that call
// names the address it wanted: it is recorded and refused (EACCES).
// Options at the IP, TCP and UDP levels are accepted on a stand-in (and
// ignored) so that a program gets as far as its connect. A stand-in can
// reach nothing: it is a stream socket (which refuses an address on
// send), it is never connected, and connect on it is answered by the
// supervisor. Where the kernel cannot inject one, socket() itself is
// refused and recorded without an address.
//
// connect and addressed sends are carried out by the supervisor itself on
// the script's socket (pidfd_getfd), with the address it read: an AF_UNIX
// socket may be reached only below a writable directory (the workspace,
// its TMPDIR, --writable), never an abstract one (Landlock's scope would
// refuse the script's own connect to one outside its tree, but the
// supervisor's is not in that scope); with the network on, an AF_INET or
// AF_INET6 address goes through as given.

// maxSend bounds what an addressed send carried out by the supervisor may
// carry (a datagram is far smaller).
const maxSend = 4 << 20

// onSocket handles socket(AF_INET|AF_INET6, ...) with the network off.
func (w *watcher) onSocket(n *seccompNotif, op string) {
	family, typ := int(arg32(n.Data.Args[0])), int(arg32(n.Data.Args[1]))
	if !w.pol.noNet {
		w.cont(n.ID)
		return
	}
	if !w.addfd {
		w.deny(n, kindNet, familyName(family)+" socket", op, unix.EACCES)
		return
	}
	flags := unix.SOCK_STREAM | unix.SOCK_CLOEXEC
	if typ&unix.SOCK_NONBLOCK != 0 {
		flags |= unix.SOCK_NONBLOCK
	}
	s, err := unix.Socket(unix.AF_UNIX, flags, 0)
	if err != nil {
		w.fail(n.ID, unix.ENOBUFS)
		return
	}
	defer unix.Close(s)
	var st unix.Stat_t
	if err := unix.Fstat(s, &st); err != nil {
		w.fail(n.ID, unix.ENOBUFS)
		return
	}
	w.fakes.Store(st.Ino, family)
	if typ&0xf == unix.SOCK_DGRAM {
		w.dgrams.Store(st.Ino, true)
	} else {
		w.dgrams.Delete(st.Ino)
	}
	add := seccompAddfd{ID: n.ID, Flags: unix.SECCOMP_ADDFD_FLAG_SEND, Srcfd: uint32(s)}
	if typ&unix.SOCK_CLOEXEC != 0 {
		add.NewfdFlags = unix.O_CLOEXEC
	}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(w.fd), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&add)))
	if errno != 0 {
		w.fakes.Delete(st.Ino)
		if errno != unix.ENOENT {
			w.fail(n.ID, unix.EACCES)
		}
	}
}

// onNet handles connect, sendto (with an address), sendmsg, sendmmsg,
// bind and setsockopt. Those that may block (connect, a send) are
// answered from a goroutine of their own.
func (w *watcher) onNet(n *seccompNotif, op string) {
	switch op {
	case "connect", "sendto", "sendmsg":
		nn := *n
		go w.onSend(&nn, op)
		return
	}
	tid := int(n.PID)
	sfd, fake, err := w.socketOf(tid, arg32(n.Data.Args[0]))
	if err != nil {
		w.cont(n.ID) // not a socket, or gone: the call fails on its own
		return
	}
	defer unix.Close(sfd)
	switch op {
	case "setsockopt":
		if fake {
			w.ret(n.ID, 0, nil)
			return
		}
	case "bind":
		if fake {
			addr, _ := readMem(tid, n.Data.Args[1], max(0, min(int(arg32(n.Data.Args[2])), 128)))
			if loopbackProbe(addr) {
				// A probe (urllib3's "is there IPv6?": bind to [::1]:0
				// and close): no port asked for, nothing reached, so no
				// network use. Refused, not recorded.
				w.fail(n.ID, unix.EADDRNOTAVAIL)
				return
			}
			if w.valid(n.ID) {
				w.rec.add(tid, kindNet, formatAddr(addr), op)
			}
			w.fail(n.ID, unix.EACCES)
			return
		}
	case "sendmmsg":
		if fake && w.dnsQuery(n, sfd, op) {
			return
		}
		named, e := w.mmsgNamed(tid, n)
		if e != 0 {
			w.refuse(n, e, kindNet, op)
			return
		}
		if named {
			if fake {
				w.deny(n, kindNet, "addresses of a sendmmsg", op, unix.EACCES)
			} else {
				w.fail(n.ID, unix.EPERM) // not carried out by the supervisor (see docs/containment.md, "What does not hold")
			}
			return
		}
	}
	w.cont(n.ID)
}

// mmsgNamed reports whether any message of a sendmmsg names an address.
func (w *watcher) mmsgNamed(tid int, n *seccompNotif) (bool, unix.Errno) {
	vlen := min(int(uint32(n.Data.Args[2])), 1024)
	if vlen == 0 {
		return false, 0
	}
	const size = msghdrSize + 8 // struct mmsghdr
	b, e := readMem(tid, n.Data.Args[1], vlen*size)
	if e != 0 {
		return false, e
	}
	for i := range vlen {
		if binary.NativeEndian.Uint64(b[i*size:]) != 0 {
			return true, 0
		}
	}
	return false, 0
}

// socketOf fetches the script's descriptor fd (pidfd_getfd) and tells
// whether it is a stand-in.
func (w *watcher) socketOf(tid int, fd int32) (int, bool, error) {
	pidfd, err := unix.PidfdOpen(tgid(tid), 0)
	if err != nil {
		return -1, false, err
	}
	defer unix.Close(pidfd)
	sfd, err := unix.PidfdGetfd(pidfd, int(fd), 0)
	if err != nil {
		return -1, false, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(sfd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		unix.Close(sfd)
		return -1, false, unix.ENOTSOCK
	}
	_, fake := w.fakes.Load(st.Ino)
	return sfd, fake, nil
}

// remote is a buffer in the script's memory. Its address is kept as a
// number: a foreign address must never sit in a Go pointer.
type remote struct{ addr, len uint64 }

// msghdr is the part of a struct msghdr (LP64 layout) the watcher reads.
type msghdr struct {
	name       uint64
	namelen    int
	iov        uint64
	iovlen     int
	controllen uint64
}

const msghdrSize = 56

func parseMsghdr(b []byte) msghdr {
	e := binary.NativeEndian
	return msghdr{name: e.Uint64(b[0:]), namelen: int(e.Uint32(b[8:])), iov: e.Uint64(b[16:]),
		iovlen: int(e.Uint64(b[24:])), controllen: e.Uint64(b[40:])}
}

// onSend carries out connect, an addressed sendto or sendmsg: it reads the
// address, fetches the script's socket, and answers for a stand-in
// (standInSend) or makes the call itself on the script's socket
// (sendOnSocket).
func (w *watcher) onSend(n *seccompNotif, op string) {
	addrPtr, addrLen, msg, ok := w.sendTarget(n, op)
	if !ok {
		return
	}
	addr, ok := w.sendAddr(n, op, addrPtr, addrLen)
	if !ok {
		return
	}
	sfd, fake, ok := w.sendSocket(n, op)
	if !ok {
		return
	}
	defer unix.Close(sfd)
	if !w.valid(n.ID) {
		return
	}
	if fake {
		w.standInSend(n, op, sfd, addr, msg)
		return
	}
	w.sendOnSocket(n, op, sfd, addr, msg)
}

// sendTarget is where connect, sendto or sendmsg sends to: the address's
// place and length in the script's memory, and for sendmsg its msghdr. It
// answers an unaddressed sendmsg, or one whose msghdr cannot be read,
// itself (ok false).
func (w *watcher) sendTarget(n *seccompNotif, op string) (addrPtr uint64, addrLen int, msg msghdr, ok bool) {
	a := &n.Data.Args
	switch op {
	case "connect":
		addrPtr, addrLen = a[1], int(arg32(a[2]))
	case "sendto":
		addrPtr, addrLen = a[4], int(arg32(a[5]))
	case "sendmsg":
		b, e := readMem(int(n.PID), a[1], msghdrSize)
		if e != 0 {
			w.refuse(n, e, kindNet, op)
			return 0, 0, msg, false
		}
		msg = parseMsghdr(b)
		if msg.name == 0 {
			w.unaddressedSendmsg(n, op)
			return 0, 0, msg, false
		}
		addrPtr, addrLen = msg.name, msg.namelen
	}
	return addrPtr, addrLen, msg, true
}

// unaddressedSendmsg answers a sendmsg that names no address: a connected
// socket (or an error). Left to the kernel; see docs/containment.md, "What
// does not hold", on what a racing thread can do here. A stand-in
// "connected" to port 53 sends its query: named.
func (w *watcher) unaddressedSendmsg(n *seccompNotif, op string) {
	if sfd, fake, err := w.socketOf(int(n.PID), arg32(n.Data.Args[0])); err == nil {
		named := fake && w.dnsQuery(n, sfd, op)
		unix.Close(sfd)
		if named {
			return
		}
	}
	w.cont(n.ID)
}

// sendAddrLenOK reports whether an address length given to connect or a
// send is one the supervisor reads (EINVAL otherwise).
func sendAddrLenOK(n int) bool {
	return n >= 0 && n <= int(unsafe.Sizeof(unix.RawSockaddrAny{}))
}

// sendAddr reads the address a connect or send names (nil for none). A
// bad length or an unreadable address is answered here (ok false).
func (w *watcher) sendAddr(n *seccompNotif, op string, addrPtr uint64, addrLen int) ([]byte, bool) {
	if !sendAddrLenOK(addrLen) {
		w.fail(n.ID, unix.EINVAL)
		return nil, false
	}
	if addrLen == 0 {
		return nil, true
	}
	addr, e := readMem(int(n.PID), addrPtr, addrLen)
	if e != 0 {
		w.refuse(n, e, kindNet, op)
		return nil, false
	}
	return addr, true
}

// sendSocket fetches the socket a connect or send is made on, and tells
// whether it is a stand-in. When it cannot be had the call is answered
// here (ok false): never left to the kernel, the supervisor carries these
// out.
func (w *watcher) sendSocket(n *seccompNotif, op string) (sfd int, fake, ok bool) {
	sfd, fake, err := w.socketOf(int(n.PID), arg32(n.Data.Args[0]))
	if err == nil {
		return sfd, fake, true
	}
	if e, recorded := socketFailure(err); recorded {
		w.refuse(n, e, kindNet, op)
	} else {
		w.fail(n.ID, e)
	}
	return -1, false, false
}

// socketFailure is the answer to a connect or send whose socket the
// supervisor cannot fetch: a bad descriptor or one that is no socket fails
// as the kernel would, anything else is refused (EPERM) and recorded.
func socketFailure(err error) (e unix.Errno, recorded bool) {
	e, _ = err.(unix.Errno)
	switch e {
	case unix.EBADF, unix.ENOTSOCK:
		return e, false
	}
	return unix.EPERM, true
}

// standInAnswer is what a connect or send on a stand-in gets (standInStep).
type standInAnswer int

const (
	// standInDenied: refused (EACCES) and recorded as network use.
	standInDenied standInAnswer = iota
	// standInRefused: a connect to port 0 reaches nothing: refused as the
	// kernel would (ECONNREFUSED), not network use, not recorded.
	standInRefused
	// standInProxy: a connect to the gate's proxy, carried out.
	standInProxy
	// standInHeld: a resolver's UDP socket connects to port 53: its
	// connect "succeeds" and is held, so that the query it then sends
	// names what it looked up.
	standInHeld
	// standInQuery: a send to port 53: refused and recorded as the name it
	// asks for, or as network use when it is no DNS query.
	standInQuery
)

// standInStep decides what a connect or addressed send (op) to addr on a
// stand-in gets; toProxy tells whether addr is the gate's proxy, dgram
// whether the stand-in stands for a datagram socket.
func standInStep(op string, addr []byte, toProxy, dgram bool) standInAnswer {
	connect := op == "connect"
	switch {
	case connect && portZero(addr):
		return standInRefused
	case connect && toProxy:
		return standInProxy
	case addrPort(addr) != 53:
		return standInDenied
	case dgram && connect:
		return standInHeld
	case !connect:
		return standInQuery
	}
	return standInDenied
}

// standInSend answers a connect or addressed send on a stand-in
// (standInStep): the socket reaches nothing but the gate's proxy.
func (w *watcher) standInSend(n *seccompNotif, op string, sfd int, addr []byte, msg msghdr) {
	tid := int(n.PID)
	ino := inodeOf(sfd)
	_, dgram := w.dgrams.Load(ino)
	switch standInStep(op, addr, w.toProxy(addr), dgram) {
	case standInRefused:
		w.fail(n.ID, unix.ECONNREFUSED)
	case standInProxy:
		w.ret(n.ID, 0, w.connectProxy(tid, sfd))
	case standInHeld:
		// A query sent with send() or write() is not seen (the filter
		// leaves those calls to the kernel, which refuses them on the
		// unconnected stand-in): it is recorded by the server it was for,
		// BLOCKED dns ADDR:53.
		w.rec.hold(ino, tid, kindDNS, formatAddr(addr), op)
		w.ret(n.ID, 0, nil)
	case standInQuery:
		if name := dnsName(queryData(tid, op, &n.Data.Args, msg)); name != "" {
			w.deny(n, kindDNS, name, op, unix.EACCES)
			return
		}
		w.deny(n, kindNet, formatAddr(addr), op, unix.EACCES)
	default:
		w.deny(n, kindNet, formatAddr(addr), op, unix.EACCES)
	}
}

// queryData is what a sendto or sendmsg to port 53 carries, as far as a
// DNS question goes (the first 512 bytes of its first buffer).
func queryData(tid int, op string, a *[6]uint64, msg msghdr) []byte {
	if op == "sendto" {
		data, _ := readData(tid, []remote{{a[1], min(uint64(a[2]), 512)}})
		return data
	}
	return firstBuffer(tid, msg)
}

// firstBuffer is the first 512 bytes of a message's first buffer (nil
// when it cannot be read).
func firstBuffer(tid int, msg msghdr) []byte {
	iov, e := readIovecs(tid, msg.iov, msg.iovlen)
	if e != 0 || len(iov) == 0 {
		return nil
	}
	iov[0].len = min(iov[0].len, 512)
	data, _ := readData(tid, iov[:1])
	return data
}

// sendOnSocket carries out a connect or addressed send on the script's
// own socket, to the address as reachable checked it.
func (w *watcher) sendOnSocket(n *seccompNotif, op string, sfd int, addr []byte, msg msghdr) {
	a := &n.Data.Args
	tid := int(n.PID)
	addr, closeFn, errno := w.reachable(tid, addr, op)
	defer closeFn()
	if errno != 0 {
		w.fail(n.ID, errno)
		return
	}
	switch op {
	case "connect":
		w.ret(n.ID, 0, rawSockcall(unix.SYS_CONNECT, sfd, addr))
	case "sendto":
		data, e := readData(tid, []remote{{a[1], uint64(a[2])}})
		if e != 0 {
			w.refuse(n, e, kindNet, op)
			return
		}
		k, err := rawSendto(sfd, data, int(arg32(a[3])), addr)
		w.ret(n.ID, int64(k), err)
	case "sendmsg":
		w.sendmsgTo(n, op, sfd, addr, msg)
	}
}

// sendmsgTo carries out an addressed sendmsg on the script's socket.
// Ancillary data (passed descriptors, credentials) with an address is not
// carried out (see docs/containment.md, "What does not hold").
func (w *watcher) sendmsgTo(n *seccompNotif, op string, sfd int, addr []byte, msg msghdr) {
	if msg.controllen != 0 {
		w.fail(n.ID, unix.EPERM)
		return
	}
	tid := int(n.PID)
	iov, e := readIovecs(tid, msg.iov, msg.iovlen)
	if e == 0 {
		var data []byte
		if data, e = readData(tid, iov); e == 0 {
			k, err := rawSendto(sfd, data, int(arg32(n.Data.Args[2])), addr)
			w.ret(n.ID, int64(k), err)
			return
		}
	}
	w.refuse(n, e, kindNet, op)
}

// reachable checks an address the script's socket is to connect or send
// to, and returns it as the supervisor must pass it: an AF_UNIX path is
// resolved from the script's working directory and replaced by a
// descriptor of the socket file, so that what is reached is what was
// checked. A refusal is recorded.
func (w *watcher) reachable(tid int, addr []byte, op string) ([]byte, func(), unix.Errno) {
	none := func() {}
	if len(addr) < 2 || binary.NativeEndian.Uint16(addr) != unix.AF_UNIX {
		return addr, none, 0 // the kernel checks family and address
	}
	path := addr[2:]
	switch {
	case len(path) == 0:
		return addr, none, 0 // unnamed: autobind, or EINVAL
	case path[0] == 0:
		w.rec.add(tid, kindNet, formatAddr(addr), op)
		return nil, none, unix.EACCES
	}
	if i := bytes.IndexByte(path, 0); i >= 0 {
		path = path[:i]
	}
	t := resolve(tid, unix.AT_FDCWD, string(path), true, false)
	switch {
	case !t.ok || !t.exists:
		return nil, none, unix.ENOENT
	case !w.inDirs(t.path):
		w.rec.add(tid, kindNet, t.path, op)
		return nil, none, unix.EACCES
	}
	fd, err := unix.Open(t.path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, none, unix.ENOENT
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK || (devIno{uint64(st.Dev), st.Ino}) != t.id {
		unix.Close(fd)
		return nil, none, unix.ECONNREFUSED
	}
	via := "/proc/self/fd/" + strconv.Itoa(fd)
	out := make([]byte, 2+len(via)+1)
	binary.NativeEndian.PutUint16(out, unix.AF_UNIX)
	copy(out[2:], via)
	return out, func() { unix.Close(fd) }, 0
}

// readIovecs reads a struct iovec array of task tid.
func readIovecs(tid int, ptr uint64, n int) ([]remote, unix.Errno) {
	if n < 0 || n > 1024 {
		return nil, unix.EMSGSIZE
	}
	if n == 0 {
		return nil, 0
	}
	b, e := readMem(tid, ptr, n*16)
	if e != 0 {
		return nil, e
	}
	out := make([]remote, n)
	for i := range out {
		out[i] = remote{binary.NativeEndian.Uint64(b[i*16:]), binary.NativeEndian.Uint64(b[i*16+8:])}
	}
	return out, 0
}

// readData gathers the bytes that buffers of task tid hold, at most
// maxSend in all (EMSGSIZE beyond).
func readData(tid int, bufs []remote) ([]byte, unix.Errno) {
	var total uint64
	for _, v := range bufs {
		total += v.len
		if total > maxSend || v.len > maxSend {
			return nil, unix.EMSGSIZE
		}
	}
	out := make([]byte, 0, total)
	for _, v := range bufs {
		if v.len == 0 {
			continue
		}
		b, e := readMem(tid, v.addr, int(v.len))
		if e != 0 {
			return nil, e
		}
		out = append(out, b...)
	}
	return out, 0
}

func rawSockcall(nr uintptr, fd int, addr []byte) error {
	var p unsafe.Pointer
	if len(addr) > 0 {
		p = unsafe.Pointer(&addr[0])
	}
	_, _, errno := unix.Syscall(nr, uintptr(fd), uintptr(p), uintptr(len(addr)))
	if errno != 0 {
		return errno
	}
	return nil
}

func rawSendto(fd int, data []byte, flags int, addr []byte) (int, error) {
	var d, a unsafe.Pointer
	if len(data) > 0 {
		d = unsafe.Pointer(&data[0])
	}
	if len(addr) > 0 {
		a = unsafe.Pointer(&addr[0])
	}
	n, _, errno := unix.Syscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(d), uintptr(len(data)), uintptr(flags), uintptr(a), uintptr(len(addr)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// inetAddr parses an AF_INET or AF_INET6 socket address.
func inetAddr(b []byte) (netip.AddrPort, bool) {
	if len(b) < 2 {
		return netip.AddrPort{}, false
	}
	switch binary.NativeEndian.Uint16(b) {
	case unix.AF_INET:
		if len(b) >= 8 {
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:4])), true
		}
	case unix.AF_INET6:
		if len(b) >= 24 {
			return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:4])), true
		}
	}
	return netip.AddrPort{}, false
}

// loopbackProbe reports whether a bind address is a loopback address with
// port 0: a program probing whether the address family works, which binds
// nothing anyone could reach.
func loopbackProbe(b []byte) bool {
	ap, ok := inetAddr(b)
	return ok && ap.Port() == 0 && ap.Addr().Unmap().IsLoopback()
}

// portZero reports whether an AF_INET or AF_INET6 address names port 0.
func portZero(b []byte) bool {
	ap, ok := inetAddr(b)
	return ok && ap.Port() == 0
}

// formatAddr renders a socket address: "127.0.0.1:8080", "[::1]:443",
// a path, or "@name" for an abstract AF_UNIX socket.
func formatAddr(b []byte) string {
	if len(b) < 2 {
		return "(no address)"
	}
	switch binary.NativeEndian.Uint16(b) {
	case unix.AF_INET:
		if len(b) >= 8 {
			ip := netip.AddrFrom4([4]byte(b[4:8]))
			return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:4])).String()
		}
	case unix.AF_INET6:
		if len(b) >= 24 {
			ip := netip.AddrFrom16([16]byte(b[8:24]))
			return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:4])).String()
		}
	case unix.AF_UNIX:
		p := b[2:]
		if len(p) > 0 && p[0] == 0 {
			return "@" + strings.ReplaceAll(string(p[1:]), "\x00", "@")
		}
		if i := bytes.IndexByte(p, 0); i >= 0 {
			p = p[:i]
		}
		return string(p)
	}
	return familyName(int(binary.NativeEndian.Uint16(b))) + " address"
}

func familyName(f int) string {
	switch f {
	case unix.AF_INET:
		return "AF_INET"
	case unix.AF_INET6:
		return "AF_INET6"
	case unix.AF_UNIX:
		return "AF_UNIX"
	}
	return "family " + strconv.Itoa(f)
}

// toProxy reports whether a stand-in's connect names the gate's proxy
// (Containment.Proxy): the only address the script may reach when the
// network is open by host.
func (w *watcher) toProxy(addr []byte) bool {
	if !w.pol.proxy.IsValid() || w.pol.proxyUnix == "" {
		return false
	}
	a, err := netip.ParseAddrPort(formatAddr(addr))
	return err == nil && a.Addr().Unmap() == w.pol.proxy.Addr() && a.Port() == w.pol.proxy.Port()
}

// proxySeq numbers the connections made to the proxy.
var proxySeq atomic.Uint64

// connectProxy connects a stand-in (the script's own socket, as the
// supervisor holds it) to the proxy's unix socket. It first binds the
// stand-in to an abstract name that carries the process's pid
// (ProxyPeer), so that the proxy knows who made each request; the script
// cannot make such a connection itself (the proxy's socket is outside
// its writable directories, and its stand-ins may not bind).
func (w *watcher) connectProxy(tid int, sfd int) error {
	name := proxyPeerPrefix + strconv.Itoa(tgid(tid)) + ":" + strconv.FormatUint(proxySeq.Add(1), 10)
	_ = unix.Bind(sfd, &unix.SockaddrUnix{Name: "@" + name}) // unnamed (pid unknown) if it fails
	// A unix connect completes at once (or fails: EAGAIN when the
	// proxy's backlog is full), blocking stand-in or not.
	return unix.Connect(sfd, &unix.SockaddrUnix{Name: w.pol.proxyUnix})
}

const proxyPeerPrefix = "diffgate-proxy:"

// ProxyPeer names the process behind a connection the proxy accepted on
// its unix socket from a stand-in (connectProxy): its pid and command
// line, or 0 and "" when it is not one.
func ProxyPeer(c net.Conn) (int, string) {
	a, ok := c.RemoteAddr().(*net.UnixAddr)
	if !ok {
		return 0, ""
	}
	rest, ok := strings.CutPrefix(a.Name, "@"+proxyPeerPrefix)
	if !ok {
		return 0, ""
	}
	pid, err := strconv.Atoi(strings.SplitN(rest, ":", 2)[0])
	if err != nil || pid <= 0 {
		return 0, ""
	}
	return pid, cmdline(pid)
}

// dnsQuery names the query a stand-in held at its connect to port 53
// sends with sendmsg or sendmmsg (the first message's first buffer), and
// refuses it: BLOCKED dns NAME in place of the held connect. It reports
// false, leaving the call alone, for any other stand-in.
func (w *watcher) dnsQuery(n *seccompNotif, sfd int, op string) bool {
	ino := inodeOf(sfd)
	if !w.rec.holds(ino) {
		return false
	}
	tid := int(n.PID)
	b, e := readMem(tid, n.Data.Args[1], msghdrSize) // a struct mmsghdr starts with its msghdr
	var data []byte
	if e == 0 {
		data = firstBuffer(tid, parseMsghdr(b))
	}
	name := dnsName(data)
	if name == "" {
		return false // recorded as the held connect at the end
	}
	w.rec.release(ino)
	w.deny(n, kindDNS, name, op, unix.ECONNREFUSED)
	return true
}

// dnsName is the name of the first question of a DNS query ("" when data
// is not one).
func dnsName(data []byte) string {
	var p dnsmessage.Parser
	h, err := p.Start(data)
	if err != nil || h.Response {
		return ""
	}
	q, err := p.Question()
	if err != nil {
		return ""
	}
	name := strings.TrimSuffix(q.Name.String(), ".")
	if name == "" {
		return "."
	}
	return strings.ToLower(name)
}

// addrPort is the port of an AF_INET or AF_INET6 address (0 otherwise).
func addrPort(b []byte) uint16 {
	if len(b) < 4 {
		return 0
	}
	switch binary.NativeEndian.Uint16(b) {
	case unix.AF_INET, unix.AF_INET6:
		return binary.BigEndian.Uint16(b[2:4])
	}
	return 0
}

// inodeOf is the inode of descriptor fd (0 when it cannot be had).
func inodeOf(fd int) uint64 {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0
	}
	return st.Ino
}
