package netproxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchServer serves 100 KB for every path (over TLS with tlsOn), and
// starts a proxy that allows bench.test, mapped to 127.0.0.1; it returns
// the body, the server, the server's port and the proxy.
func benchServer(b *testing.B, tlsOn bool) (body []byte, srv *httptest.Server, port string, p *Proxy) {
	body = bytes.Repeat([]byte("x"), 100<<10)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	if tlsOn {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	b.Cleanup(srv.Close)
	rs, _ := ParseRules([]string{"bench.test"})
	p, err := Start(Config{Rules: rs, Hosts: map[string][]netip.Addr{"bench.test": {netip.MustParseAddr("127.0.0.1")}}, MaxRecords: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	u, _ := url.Parse(srv.URL)
	return body, srv, u.Port(), p
}

// batch is 200 GETs of url by cl, each checked to bring want bytes; it
// returns how long they took.
func batch(b *testing.B, cl *http.Client, url string, want int) func() time.Duration {
	return func() time.Duration {
		start := time.Now()
		for range 200 {
			resp, err := cl.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n != int64(want) {
				b.Fatalf("%d bytes", n)
			}
		}
		return time.Since(start)
	}
}

// paired times direct and proxied in turn, after a warm-up of each
// (connections open, buffers allocated), so that a busy machine slows both
// alike; it reports each one's mean and x-direct, the median of the
// iterations' ratios.
func paired(b *testing.B, direct, proxied func() time.Duration) {
	direct()
	proxied()
	var ratios []float64
	var dSum, pSum time.Duration
	b.ResetTimer()
	for range b.N {
		d, pr := direct(), proxied()
		dSum, pSum = dSum+d, pSum+pr
		ratios = append(ratios, float64(pr)/float64(d))
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(dSum.Milliseconds())/float64(b.N), "direct-ms")
	b.ReportMetric(float64(pSum.Milliseconds())/float64(b.N), "proxy-ms")
	b.ReportMetric(ratios[len(ratios)/2], "x-direct")
}

// BenchmarkProxy200x100KB: the proxy's cost (make bench; target <= 1.5x
// direct): 200 requests of 100 KB each from one Go client on loopback,
// direct and through the proxy (a name mapped to 127.0.0.1).
func BenchmarkProxy200x100KB(b *testing.B) {
	body, srv, port, p := benchServer(b, false)
	b.SetBytes(2 * 200 * int64(len(body)))
	paired(b, batch(b, &http.Client{Transport: &http.Transport{Proxy: nil}}, srv.URL+"/x", len(body)),
		batch(b, &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(mustURL(p.URL()))}}, "http://bench.test:"+port+"/x", len(body)))
}

// BenchmarkProxyCurl200x100KB: the same through a real download tool: one
// curl fetching 200 URLs of 100 KB each (one connection, kept alive).
func BenchmarkProxyCurl200x100KB(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("no curl")
	}
	_, srv, port, p := benchServer(b, false)
	curlBatch := func(name, base, proxy string) func() time.Duration {
		var c strings.Builder
		for i := range 200 {
			fmt.Fprintf(&c, "url = \"%s/x%d\"\noutput = \"/dev/null\"\n", base, i)
		}
		cfg := filepath.Join(b.TempDir(), name)
		if err := os.WriteFile(cfg, []byte(c.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		args := []string{"-q", "-s", "-S", "-f", "-K", cfg}
		if proxy != "" {
			args = append(args, "-x", proxy)
		}
		return func() time.Duration {
			cmd := exec.Command(curl, args...)
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("curl: %v\n%s", err, out)
			}
			return time.Since(start)
		}
	}
	paired(b, curlBatch("direct", srv.URL, ""), curlBatch("proxied", "http://bench.test:"+port, p.URL()))
}

// BenchmarkProxyTLS200x100KB: the proxy's cost as the tools' registries
// see it (make bench's target row, <= 1.5x direct): PyPI, npm and the Go
// module proxy are HTTPS, so a tool reaches them through a CONNECT tunnel
// and the proxy copies TLS records without reading them. 200 requests of
// 100 KB from one Go client (connections kept alive), direct and through
// the proxy, on loopback.
func BenchmarkProxyTLS200x100KB(b *testing.B) {
	body, srv, port, p := benchServer(b, true)
	client := func(proxy func(*http.Request) (*url.URL, error)) *http.Client {
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.Proxy = proxy
		tr.TLSClientConfig.ServerName = "example.com" // httptest's certificate names it
		return &http.Client{Transport: tr}
	}
	b.SetBytes(2 * 200 * int64(len(body)))
	paired(b, batch(b, client(nil), srv.URL+"/x", len(body)),
		batch(b, client(http.ProxyURL(mustURL(p.URL()))), "https://bench.test:"+port+"/x", len(body)))
}
