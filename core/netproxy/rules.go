// Package netproxy is the gate's network by host: an HTTP proxy (plain
// requests and HTTPS CONNECT tunnels) that lets a contained script reach
// only the hosts it was allowed, and records every request. It resolves
// names itself and dials the address it checked (no DNS rebinding between
// the check and the dial). It knows nothing of processes, the gate or the
// history: the gate starts it and hands it a way to name a connection's
// process.
package netproxy

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is one --net-allow entry: a host name, a "*.domain" wildcard (its
// subdomains, not the domain itself) or an IP address, with a port (0:
// any). Deny marks a "!" entry; a deny beats every allow.
type Rule struct {
	Host     string
	Port     int
	Wildcard bool
	Deny     bool
}

// String renders the rule as it is written.
func (r Rule) String() string {
	s := r.Host
	if r.Wildcard {
		s = "*." + s
	}
	if r.Port != 0 {
		s = net.JoinHostPort(s, strconv.Itoa(r.Port))
	}
	if r.Deny {
		s = "!" + s
	}
	return s
}

// ParseRule parses HOST, HOST:PORT, *.DOMAIN[:PORT], an IP address
// ([v6]:PORT with a port), each optionally prefixed with "!" (deny).
func ParseRule(s string) (Rule, error) {
	var r Rule
	in := s
	if strings.HasPrefix(s, "!") {
		r.Deny, s = true, s[1:]
	}
	host := s
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Rule{}, fmt.Errorf("--net-allow %q: port %q is not 1-65535", in, p)
		}
		host, r.Port = h, n
	} else if strings.Count(s, ":") == 1 {
		return Rule{}, fmt.Errorf("--net-allow %q: %v", in, err)
	}
	if strings.HasPrefix(host, "*.") {
		r.Wildcard, host = true, host[2:]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		if r.Wildcard {
			return Rule{}, fmt.Errorf("--net-allow %q: a wildcard of an address", in)
		}
		host = ip.Unmap().String()
	} else if !validName(host) {
		return Rule{}, fmt.Errorf("--net-allow %q: not a host name, *.domain or IP address", in)
	}
	r.Host = host
	return r, nil
}

func validName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// Rules is a parsed allow list. The zero value allows nothing.
type Rules struct{ list []Rule }

// ParseRules parses entries (each may hold several, comma-separated).
func ParseRules(entries []string) (Rules, error) {
	var rs Rules
	for _, e := range entries {
		for _, s := range strings.Split(e, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			r, err := ParseRule(s)
			if err != nil {
				return Rules{}, err
			}
			rs.list = append(rs.list, r)
		}
	}
	return rs, nil
}

// List returns the rules as written.
func (rs Rules) List() []string {
	out := make([]string, len(rs.list))
	for i, r := range rs.list {
		out[i] = r.String()
	}
	return out
}

// Empty reports whether no rule allows anything.
func (rs Rules) Empty() bool {
	for _, r := range rs.list {
		if !r.Deny {
			return false
		}
	}
	return true
}

func (r Rule) matches(host string, port int) (exact, ok bool) {
	if r.Port != 0 && r.Port != port {
		return false, false
	}
	if r.Wildcard {
		return false, strings.HasSuffix(host, "."+r.Host)
	}
	return true, host == r.Host
}

// Reasons a request is refused (the x-diffgate-reason header).
const (
	ReasonNotAllowed = "host not allowed"
	ReasonDenied     = "host denied"
	ReasonSpecial    = "address not public"
	ReasonResolve    = "name not resolved"
	ReasonBadRequest = "bad request"
	ReasonSelf       = "the proxy itself"
)

// Host decides on a host name (or address literal) and port before any
// resolution. exact says an entry named the host itself (not a wildcard),
// which the address check needs. An empty list refuses everything; a
// deny beats an allow.
func (rs Rules) Host(host string, port int) (ok, exact bool, reason string) {
	host = normHost(host)
	for _, r := range rs.list {
		if _, m := r.matches(host, port); m && r.Deny {
			return false, false, ReasonDenied
		}
	}
	for _, r := range rs.list {
		if e, m := r.matches(host, port); m && !r.Deny {
			ok = true
			exact = exact || e
		}
	}
	if !ok {
		return false, false, ReasonNotAllowed
	}
	return true, exact, ""
}

func normHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().String()
	}
	return h
}

// metadata are the cloud instance-metadata addresses.
var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("169.254.170.2"),
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("fd00:ec2::254"),
}

var special = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("fc00::/7"), // unique local, fd00::/8 in it
	netip.MustParsePrefix("64:ff9b::/96"),
}

// Special names why addr is not a public address ("" when it is):
// loopback, private, link-local, metadata, unspecified, multicast, or
// another reserved range.
func Special(addr netip.Addr) string {
	addr = addr.Unmap()
	for _, m := range metadata {
		if addr == m {
			return "metadata"
		}
	}
	switch {
	case addr.IsLoopback():
		return "loopback"
	case addr.IsPrivate():
		return "private"
	case addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast():
		return "link-local"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsMulticast(), addr.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, p := range special {
		if p.Contains(addr) {
			return "reserved"
		}
	}
	return ""
}

// Addr decides on an address a host resolved to (or is). A public
// address passes. A special one (Special) passes only when the host was
// named by an exact entry (not a wildcard) and, for loopback and
// metadata, only when the host is the address itself or a name the
// resolver override mapped (a test's local server): a public name that
// resolves to 127.0.0.1 or 169.254.169.254 never reaches the gate's own
// machine or the cloud's metadata.
func Addr(addr netip.Addr, exact, literalOrMapped bool) (bool, string) {
	kind := Special(addr)
	switch {
	case kind == "":
		return true, ""
	case !exact:
		return false, ReasonSpecial + " (" + kind + ")"
	case (kind == "loopback" || kind == "metadata" || kind == "unspecified") && !literalOrMapped:
		return false, ReasonSpecial + " (" + kind + ")"
	}
	return true, ""
}
