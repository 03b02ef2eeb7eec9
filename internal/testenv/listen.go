package testenv

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Listen starts a TCP listener on 127.0.0.1 that accepts and closes every
// connection and counts them: what a contained script must never reach. The
// count is final once stop has returned (stop closes the listener).
func Listen(t *testing.T) (port int, stop func() int64) {
	t.Helper()
	ln, stop := listen(t, "tcp", "127.0.0.1:0")
	return ln.Addr().(*net.TCPAddr).Port, stop
}

// ListenUnix is Listen on an AF_UNIX stream socket at addr: a path, or
// "@name" for an abstract one.
func ListenUnix(t *testing.T, addr string) (stop func() int64) {
	t.Helper()
	_, stop = listen(t, "unix", addr)
	return stop
}

func listen(t *testing.T, network, addr string) (net.Listener, func() int64) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	var once sync.Once
	stop := func() int64 {
		once.Do(func() { ln.Close(); <-done })
		return n.Load()
	}
	t.Cleanup(func() { stop() })
	return ln, stop
}

// ListenUDP starts a UDP socket on 127.0.0.1 that counts the datagrams it
// receives; the count is final once stop has returned (stop sends itself
// a last datagram and waits for it: what was queued before is counted).
func ListenUDP(t *testing.T) (port int, stop func() int64) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const last = "\x00testenv-stop"
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			k, _, err := pc.ReadFrom(buf)
			if err != nil || string(buf[:k]) == last {
				return
			}
			n.Add(1)
		}
	}()
	var once sync.Once
	stop = func() int64 {
		once.Do(func() {
			if c, err := net.Dial("udp", pc.LocalAddr().String()); err == nil {
				c.Write([]byte(last))
				c.Close()
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second): // the last datagram was lost
			}
			pc.Close()
			<-done
		})
		return n.Load()
	}
	t.Cleanup(func() { stop() })
	return pc.LocalAddr().(*net.UDPAddr).Port, stop
}
