package netproxy

import (
	"net/netip"
	"testing"
)

func TestParseRule(t *testing.T) {
	for in, want := range map[string]string{
		"registry.npmjs.org":      "registry.npmjs.org",
		"Example.ORG.":            "example.org",
		"*.example.org":           "*.example.org",
		"*.example.org:8443":      "*.example.org:8443",
		"example.org:443":         "example.org:443",
		"!evil.example.org":       "!evil.example.org",
		"10.0.0.5":                "10.0.0.5",
		"[::1]:80":                "[::1]:80",
		"::ffff:127.0.0.1":        "127.0.0.1",
		"files.pythonhosted.org":  "files.pythonhosted.org",
		"proxy.golang.org:443":    "proxy.golang.org:443",
		"under_score.example.org": "under_score.example.org",
	} {
		r, err := ParseRule(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if r.String() != want {
			t.Errorf("%q: %q, want %q", in, r.String(), want)
		}
	}
	for _, bad := range []string{"", "exa mple.org", "example.org:0", "example.org:99999", "example.org:x",
		"*.10.0.0.1", "http://example.org", "-bad.org", "a..b"} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestRulesHost(t *testing.T) {
	rs, err := ParseRules([]string{"registry.npmjs.org,*.example.org:443", "!bad.example.org", "10.0.0.5:8080"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host   string
		port   int
		ok     bool
		exact  bool
		reason string
	}{
		{"registry.npmjs.org", 443, true, true, ""},
		{"REGISTRY.npmjs.org.", 80, true, true, ""},
		{"npmjs.org", 443, false, false, ReasonNotAllowed},
		{"a.example.org", 443, true, false, ""},
		{"a.b.example.org", 443, true, false, ""},
		{"example.org", 443, false, false, ReasonNotAllowed}, // the wildcard is subdomains only
		{"a.example.org", 80, false, false, ReasonNotAllowed},
		{"bad.example.org", 443, false, false, ReasonDenied}, // deny wins
		{"10.0.0.5", 8080, true, true, ""},
		{"10.0.0.5", 80, false, false, ReasonNotAllowed},
		{"evilexample.org", 443, false, false, ReasonNotAllowed},
	} {
		ok, exact, reason := rs.Host(c.host, c.port)
		if ok != c.ok || exact != c.exact || reason != c.reason {
			t.Errorf("%s:%d: %v %v %q, want %v %v %q", c.host, c.port, ok, exact, reason, c.ok, c.exact, c.reason)
		}
	}
	var empty Rules
	if ok, _, _ := empty.Host("example.org", 443); ok || !empty.Empty() {
		t.Error("an empty list allows")
	}
}

func TestAddr(t *testing.T) {
	for _, c := range []struct {
		addr                   string
		exact, literalOrMapped bool
		ok                     bool
	}{
		{"93.184.215.14", false, false, true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", false, false, true},
		{"10.1.2.3", false, false, false},
		{"10.1.2.3", true, false, true}, // a private host named exactly
		{"192.168.1.1", true, false, true},
		{"127.0.0.1", false, false, false},
		{"127.0.0.1", true, false, false}, // a name that resolves to loopback, named: still refused
		{"127.0.0.1", true, true, true},   // mapped by the override (or the literal) and named
		{"127.0.0.1", false, true, false}, // mapped but only by a wildcard
		{"169.254.169.254", true, false, false},
		{"169.254.169.254", true, true, true},
		{"169.254.1.1", false, false, false},
		{"fd00::1", false, false, false},
		{"fd00:ec2::254", true, false, false},
		{"::1", true, false, false},
		{"::ffff:127.0.0.1", true, false, false},
		{"0.0.0.0", true, false, false},
		{"100.64.0.1", false, false, false},
		{"fe80::1", false, false, false},
	} {
		a := netip.MustParseAddr(c.addr)
		if ok, why := Addr(a, c.exact, c.literalOrMapped); ok != c.ok {
			t.Errorf("%s exact=%v mapped=%v: %v (%s), want %v", c.addr, c.exact, c.literalOrMapped, ok, why, c.ok)
		}
	}
}
