package netproxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// servers starts an allowed and a refused local server (each counting
// what it is asked), plain HTTP and TLS.
type servers struct {
	ok, okTLS, no *httptest.Server
	noHits        atomic.Int64
}

func startServers(t *testing.T) *servers {
	s := &servers{}
	body := bytes.Repeat([]byte("x"), 100<<10)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Got", strings.Repeat("1", int(min(n, 1))))
		_, _ = w.Write(body)
	})
	s.ok = httptest.NewServer(h)
	s.okTLS = httptest.NewTLSServer(h)
	s.no = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.noHits.Add(1)
		_, _ = io.WriteString(w, "secret")
	}))
	t.Cleanup(func() { s.ok.Close(); s.okTLS.Close(); s.no.Close() })
	return s
}

func port(t *testing.T, s *httptest.Server) string {
	_, p, err := net.SplitHostPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func startProxy(t *testing.T, allow ...string) *Proxy {
	rs, err := ParseRules(allow)
	if err != nil {
		t.Fatal(err)
	}
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	p, err := Start(Config{Rules: rs, Hosts: map[string][]netip.Addr{"allowed.test": lo, "refused.test": lo, "wild.allowed.test": lo, "meta.test": {netip.MustParseAddr("169.254.169.254")},
		"mixed.test": {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")}},
		Unix: filepath.Join(t.TempDir(), "proxy.sock"),
		Peer: func(c net.Conn) (int, string) { return 42, "test-peer" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestProxyCurlAndUrllib(t *testing.T) {
	s := startServers(t)
	p := startProxy(t, "allowed.test", "*.allowed.test")
	okURL := "http://allowed.test:" + port(t, s.ok) + "/pkg"
	noURL := "http://refused.test:" + port(t, s.no) + "/steal"
	env := Env(p.URL())
	var want []Request
	if curl, err := exec.LookPath("curl"); err == nil {
		run := func(args ...string) (string, error) {
			cmd := exec.Command(curl, append([]string{"-sS", "-f", "-D", "-", "-o", "/dev/null"}, args...)...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		if out, err := run(okURL); err != nil || !strings.Contains(out, "200") {
			t.Fatalf("curl allowed: %v\n%s", err, out)
		}
		// POST: bytes out are counted.
		if out, err := run("--data-binary", "hello", okURL); err != nil {
			t.Fatalf("curl POST: %v\n%s", err, out)
		}
		out, err := run(noURL)
		if err == nil || !strings.Contains(out, "403") || !strings.Contains(strings.ToLower(out), "x-diffgate-reason: host not allowed") {
			t.Fatalf("curl refused host: %v\n%s", err, out)
		}
		// HTTPS through CONNECT, to the allowed host and to a wildcard name.
		tls := "https://allowed.test:" + port(t, s.okTLS) + "/tls"
		if out, err := run("-k", tls); err != nil {
			t.Fatalf("curl https: %v\n%s", err, out)
		}
		// CONNECT to a refused host: curl reports the proxy's 403.
		if out, err := run("-k", "https://refused.test:"+port(t, s.okTLS)+"/"); err == nil || !strings.Contains(out, "403") {
			t.Fatalf("curl https refused: %v\n%s", err, out)
		}
		want = append(want,
			Request{Host: "allowed.test", Method: "GET", Allowed: true, BytesIn: 100 << 10},
			Request{Host: "allowed.test", Method: "POST", Allowed: true, BytesOut: 5, BytesIn: 100 << 10},
			Request{Host: "refused.test", Method: "GET", Reason: ReasonNotAllowed},
			Request{Host: "allowed.test", Method: "CONNECT", Allowed: true},
			Request{Host: "refused.test", Method: "CONNECT", Reason: ReasonNotAllowed},
		)
	} else {
		t.Log("no curl: its part is left out")
	}
	if py, err := exec.LookPath("python3"); err == nil {
		script := `import sys, urllib.request, urllib.error
print(len(urllib.request.urlopen(sys.argv[1]).read()))
try:
    urllib.request.urlopen(sys.argv[2])
    print("refused host reached")
except urllib.error.HTTPError as e:
    print(e.code, e.headers["x-diffgate-reason"])
`
		cmd := exec.Command(py, "-c", script, okURL, noURL)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "102400\n403 host not allowed\n" {
			t.Fatalf("python urllib: %v\n%s", err, out)
		}
		want = append(want,
			Request{Host: "allowed.test", Method: "GET", Allowed: true, BytesIn: 100 << 10},
			Request{Host: "refused.test", Method: "GET", Reason: ReasonNotAllowed})
	} else {
		t.Log("no python3: its part is left out")
	}
	got, dropped := p.Close()
	if dropped != 0 || len(got) != len(want) {
		t.Fatalf("records %d (+%d dropped), want %d: %+v", len(got), dropped, len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Host != w.Host || g.Method != w.Method || g.Allowed != w.Allowed || g.Reason != w.Reason || g.PID != 42 || g.Cmd != "test-peer" {
			t.Errorf("record %d: %+v, want %+v", i, g, w)
		}
		if w.Method != "CONNECT" && (g.BytesIn != w.BytesIn || g.BytesOut != w.BytesOut) {
			t.Errorf("record %d: bytes out %d in %d, want %d %d", i, g.BytesOut, g.BytesIn, w.BytesOut, w.BytesIn)
		}
		if w.Method == "CONNECT" && w.Allowed && (g.BytesIn < 100<<10 || g.BytesOut == 0) {
			t.Errorf("record %d: tunnel bytes out %d in %d", i, g.BytesOut, g.BytesIn)
		}
		if w.Allowed && g.Addr != "127.0.0.1" {
			t.Errorf("record %d: addr %q", i, g.Addr)
		}
	}
	if n := s.noHits.Load(); n != 0 {
		t.Errorf("the refused host's server was asked %d times", n)
	}
}

// TestProxyRefusesSpecial: a name that is not mapped by the override
// never reaches loopback, nor does one allowed only by a wildcard, nor a
// metadata address; the empty list refuses all; over the unix socket too.
func TestProxyRefusesSpecial(t *testing.T) {
	s := startServers(t)
	p := startProxy(t, "*.allowed.test", "localhost", "*.test")
	empty := startProxy(t)
	client := func(px *Proxy, unix bool) *http.Client {
		tr := &http.Transport{Proxy: http.ProxyURL(mustURL(px.URL()))}
		if unix {
			tr.DialContext = nil
			tr.Dial = func(string, string) (net.Conn, error) { return net.Dial("unix", px.cfg.Unix) }
		}
		return &http.Client{Transport: tr}
	}
	for _, c := range []struct {
		px     *Proxy
		url    string
		reason string
	}{
		{p, "http://localhost:" + port(t, s.no) + "/", "address not public (loopback)"},
		{p, "http://wild.allowed.test:" + port(t, s.no) + "/", "address not public (loopback)"},
		{p, "http://meta.test/latest/meta-data/", "address not public (metadata)"},
		{p, "http://169.254.169.254/latest/meta-data/", ReasonNotAllowed},
		// One private answer among public ones: refused before any dial.
		{p, "http://mixed.test/", "address not public (private)"},
		{empty, "http://allowed.test:" + port(t, s.no) + "/", ReasonNotAllowed},
	} {
		if strings.HasPrefix(c.url, "http://localhost:") {
			if _, err := net.LookupHost("localhost"); err != nil {
				// A minimal chroot has no /etc/hosts: nothing resolves it.
				t.Logf("localhost does not resolve here (%v): its case is not run", err)
				continue
			}
		}
		for _, unix := range []bool{false, true} {
			resp, err := client(c.px, unix).Get(c.url)
			if err != nil {
				t.Fatalf("%s: %v", c.url, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 403 || resp.Header.Get(ReasonHeader) != c.reason {
				t.Errorf("%s (unix %v): %d %q, want 403 %q", c.url, unix, resp.StatusCode, resp.Header.Get(ReasonHeader), c.reason)
			}
		}
	}
	if n := s.noHits.Load(); n != 0 {
		t.Errorf("the refused server was asked %d times", n)
	}
	// The proxy itself, even allowed by its address, is never dialled.
	self := startProxy(t, "127.0.0.1")
	resp, err := client(self, false).Get("http://127.0.0.1:" + strconv.Itoa(int(self.Addr().Port())) + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get(ReasonHeader) != ReasonSelf {
		t.Errorf("the proxy itself: %d %q", resp.StatusCode, resp.Header.Get(ReasonHeader))
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestProxyReusesLookups: two requests to one name ask the resolver once
// (the answer is reused for dnsTTL) and each use checks the addresses
// again; a name that did not resolve is asked again. No request leaves the
// machine: the answer is a loopback address, refused for a name the
// override did not map.
func TestProxyReusesLookups(t *testing.T) {
	p := startProxy(t, "reg.example", "gone.example")
	var asked atomic.Int64
	p.resolver = func(_ context.Context, host string) ([]netip.Addr, error) {
		asked.Add(1)
		if host == "gone.example" {
			return nil, errors.New("no such host")
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	cl := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(mustURL(p.URL()))}}
	for _, c := range []struct {
		url, reason string
		asked       int64
	}{
		{"http://reg.example/a", "address not public (loopback)", 1},
		{"http://reg.example/b", "address not public (loopback)", 1},
		{"http://gone.example/a", ReasonResolve, 2},
		{"http://gone.example/b", ReasonResolve, 3},
	} {
		resp, err := cl.Get(c.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 || resp.Header.Get(ReasonHeader) != c.reason || asked.Load() != c.asked {
			t.Errorf("%s: %d %q, resolver asked %d times; want 403 %q, %d", c.url, resp.StatusCode, resp.Header.Get(ReasonHeader), asked.Load(), c.reason, c.asked)
		}
	}
}
