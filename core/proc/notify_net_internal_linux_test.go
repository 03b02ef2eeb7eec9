package proc

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockaddr builds a socket address as the script would pass it: an
// AF_INET or AF_INET6 one for an address and port, an AF_UNIX one for a
// path.
func sockaddr(t *testing.T, s string) []byte {
	t.Helper()
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		b := make([]byte, 2+len(s)+1)
		binary.NativeEndian.PutUint16(b, unix.AF_UNIX)
		copy(b[2:], s)
		return b
	}
	family, size, at := unix.AF_INET, 16, 4
	if !ap.Addr().Is4() {
		family, size, at = unix.AF_INET6, 28, 8
	}
	b := make([]byte, size)
	binary.NativeEndian.PutUint16(b, uint16(family))
	binary.BigEndian.PutUint16(b[2:], ap.Port())
	copy(b[at:], ap.Addr().AsSlice())
	return b
}

// TestStandInStep: what a connect or addressed send on a stand-in (the
// network is off) gets, by destination: only the gate's proxy is reached.
func TestStandInStep(t *testing.T) {
	cases := []struct {
		op, addr       string
		toProxy, dgram bool
		want           standInAnswer
	}{
		{"connect", "93.184.216.34:443", false, false, standInDenied},
		{"connect", "[2606:2800:220:1::]:80", false, false, standInDenied},
		{"connect", "127.0.0.1:8080", false, false, standInDenied},
		{"sendto", "93.184.216.34:443", false, true, standInDenied},
		{"sendmsg", "[::1]:9", false, true, standInDenied},
		{"connect", "/run/some.sock", false, false, standInDenied},
		{"sendto", "/run/some.sock", false, true, standInDenied},
		// Port 0 reaches nothing: refused, not recorded (a connect only).
		{"connect", "127.0.0.1:0", false, false, standInRefused},
		{"connect", "[::1]:0", false, true, standInRefused},
		{"connect", "127.0.0.1:0", true, false, standInRefused},
		{"sendto", "127.0.0.1:0", false, true, standInDenied},
		// The proxy: its connect only; a send to it is network use.
		{"connect", "127.0.0.1:3128", true, false, standInProxy},
		{"connect", "127.0.0.1:53", true, true, standInProxy},
		{"sendto", "127.0.0.1:3128", true, false, standInDenied},
		// Port 53: a resolver's UDP connect is held, a send is read for
		// its question, a TCP connect is network use.
		{"connect", "8.8.8.8:53", false, true, standInHeld},
		{"connect", "[2001:4860:4860::8888]:53", false, true, standInHeld},
		{"connect", "8.8.8.8:53", false, false, standInDenied},
		{"sendto", "8.8.8.8:53", false, true, standInQuery},
		{"sendto", "8.8.8.8:53", false, false, standInQuery},
		{"sendmsg", "[::1]:53", false, false, standInQuery},
		{"connect", "8.8.8.8:5353", false, true, standInDenied},
	}
	for _, c := range cases {
		if got := standInStep(c.op, sockaddr(t, c.addr), c.toProxy, c.dgram); got != c.want {
			t.Errorf("%s %s (proxy %v, dgram %v): %d, want %d", c.op, c.addr, c.toProxy, c.dgram, got, c.want)
		}
	}
	// No address, or a truncated one: network use.
	for _, addr := range [][]byte{nil, {1}, sockaddr(t, "8.8.8.8:53")[:3]} {
		if got := standInStep("connect", addr, false, true); got != standInDenied {
			t.Errorf("connect to %v: %d, want denied", addr, got)
		}
	}
}

// TestSocketFailure: a connect or send whose socket the supervisor cannot
// fetch fails as the kernel would for a bad descriptor, and is refused
// and recorded otherwise.
func TestSocketFailure(t *testing.T) {
	cases := []struct {
		err      error
		want     unix.Errno
		recorded bool
	}{
		{unix.EBADF, unix.EBADF, false},
		{unix.ENOTSOCK, unix.ENOTSOCK, false},
		{unix.ESRCH, unix.EPERM, true},
		{unix.EPERM, unix.EPERM, true},
		{errors.New("not an errno"), unix.EPERM, true},
	}
	for _, c := range cases {
		e, recorded := socketFailure(c.err)
		if e != c.want || recorded != c.recorded {
			t.Errorf("%v: %v (recorded %v), want %v (recorded %v)", c.err, e, recorded, c.want, c.recorded)
		}
	}
}

// TestSendAddrLenOK: the address lengths the supervisor reads.
func TestSendAddrLenOK(t *testing.T) {
	most := int(unsafe.Sizeof(unix.RawSockaddrAny{}))
	for n, want := range map[int]bool{-1: false, 0: true, 16: true, most: true, most + 1: false, 1 << 20: false} {
		if got := sendAddrLenOK(n); got != want {
			t.Errorf("length %d: %v, want %v", n, got, want)
		}
	}
}
