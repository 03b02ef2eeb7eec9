//go:build !linux

package proc

import "net"

// ProxyPeer names the process behind a connection to the gate's proxy;
// only Linux's supervisor makes such connections.
func ProxyPeer(net.Conn) (int, string) { return 0, "" }
