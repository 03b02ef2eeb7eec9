package proc

import (
	"testing"
)

// TestSocketLayer: what the socket filter lets through, by network and
// watcher. With the network off and no watcher, no AF_INET/AF_INET6
// socket reaches the kernel and no connect is made at all.
func TestSocketLayer(t *testing.T) {
	cases := []struct {
		noNet, observed          bool
		inet, noConnect, sockets bool
	}{
		{noNet: false, observed: false, inet: true, noConnect: false, sockets: false},
		{noNet: false, observed: true, inet: true, noConnect: false, sockets: true},
		{noNet: true, observed: false, inet: false, noConnect: true, sockets: true},
		{noNet: true, observed: true, inet: true, noConnect: false, sockets: true},
	}
	for _, c := range cases {
		inet, noConnect, sockets := socketLayer(c.noNet, c.observed)
		if inet != c.inet || noConnect != c.noConnect || sockets != c.sockets {
			t.Errorf("noNet %v, observed %v: inet %v, noConnect %v, sockets %v; want %v, %v, %v",
				c.noNet, c.observed, inet, noConnect, sockets, c.inet, c.noConnect, c.sockets)
		}
	}
}

// TestGaps: a missing layer is noted, and is an error (with its reason)
// only when the layers are required; the reasons join those already said.
func TestGaps(t *testing.T) {
	for _, required := range []bool{false, true} {
		g := &gaps{required: required}
		e1, e2 := g.miss("metadata: off"), g.miss("sockets: off")
		if required != (e1 != nil) || required != (e2 != nil) {
			t.Errorf("required %v: errors %v, %v", required, e1, e2)
		}
		if required && (e1.Error() != "proc: containment: metadata: off" || e2.Error() != "proc: containment: sockets: off") {
			t.Errorf("errors %q, %q", e1, e2)
		}
		if got := joinWhy("", g.why); got != "metadata: off; sockets: off" {
			t.Errorf("joinWhy: %q", got)
		}
		if got := joinWhy("mounts: none", g.why); got != "mounts: none; metadata: off; sockets: off" {
			t.Errorf("joinWhy after a reason: %q", got)
		}
	}
	for _, c := range []struct {
		prev string
		why  []string
		want string
	}{
		{"", nil, ""},
		{"a", nil, "a"},
		{"", []string{"b"}, "b"},
	} {
		if got := joinWhy(c.prev, c.why); got != c.want {
			t.Errorf("joinWhy(%q, %q): %q, want %q", c.prev, c.why, got, c.want)
		}
	}
}
