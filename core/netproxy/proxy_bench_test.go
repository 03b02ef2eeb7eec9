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

// BenchmarkProxy200x100KB: the proxy's cost (make bench; target <= 1.5x
// direct): 200 requests of 100 KB each from one client on loopback,
// direct and through the proxy (a name mapped to 127.0.0.1), in turn each
// iteration so that a busy machine slows both alike. It reports each
// batch's time and x-direct, the median of the iterations' ratios.
func BenchmarkProxy200x100KB(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 100<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	rs, _ := ParseRules([]string{"bench.test"})
	p, err := Start(Config{Rules: rs, Hosts: map[string][]netip.Addr{"bench.test": {netip.MustParseAddr("127.0.0.1")}}, MaxRecords: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	u, _ := url.Parse(srv.URL)
	direct := &http.Client{Transport: &http.Transport{Proxy: nil}}
	proxied := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(mustURL(p.URL()))}}
	batch := func(cl *http.Client, url string) time.Duration {
		start := time.Now()
		for range 200 {
			resp, err := cl.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n != int64(len(body)) {
				b.Fatalf("%d bytes", n)
			}
		}
		return time.Since(start)
	}
	// A warm-up of each: connections open, buffers allocated.
	batch(direct, srv.URL+"/x")
	batch(proxied, "http://bench.test:"+u.Port()+"/x")
	b.SetBytes(2 * 200 * int64(len(body)))
	var ratios []float64
	var dSum, pSum time.Duration
	b.ResetTimer()
	for range b.N {
		d := batch(direct, srv.URL+"/x")
		pr := batch(proxied, "http://bench.test:"+u.Port()+"/x")
		dSum, pSum = dSum+d, pSum+pr
		ratios = append(ratios, float64(pr)/float64(d))
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(dSum.Milliseconds())/float64(b.N), "direct-ms")
	b.ReportMetric(float64(pSum.Milliseconds())/float64(b.N), "proxy-ms")
	b.ReportMetric(ratios[len(ratios)/2], "x-direct")
}

// BenchmarkProxyCurl200x100KB: the same through a real download tool: one
// curl fetching 200 URLs of 100 KB each (one connection, kept alive),
// direct and through the proxy, in turn; x-direct is the median of the
// iterations' ratios.
func BenchmarkProxyCurl200x100KB(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("no curl")
	}
	body := bytes.Repeat([]byte("x"), 100<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	rs, _ := ParseRules([]string{"bench.test"})
	p, err := Start(Config{Rules: rs, Hosts: map[string][]netip.Addr{"bench.test": {netip.MustParseAddr("127.0.0.1")}}, MaxRecords: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	u, _ := url.Parse(srv.URL)
	config := func(name, base string) string {
		var c strings.Builder
		for i := range 200 {
			fmt.Fprintf(&c, "url = \"%s/x%d\"\noutput = \"/dev/null\"\n", base, i)
		}
		f := filepath.Join(b.TempDir(), name)
		if err := os.WriteFile(f, []byte(c.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		return f
	}
	direct, proxied := config("direct", srv.URL), config("proxied", "http://bench.test:"+u.Port())
	batch := func(cfg string, proxy string) time.Duration {
		cmd := exec.Command(curl, "-q", "-s", "-S", "-f", "-K", cfg)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		if proxy != "" {
			cmd.Args = append(cmd.Args, "-x", proxy)
		}
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("curl: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	batch(direct, "")
	batch(proxied, p.URL())
	var ratios []float64
	var dSum, pSum time.Duration
	b.ResetTimer()
	for range b.N {
		d := batch(direct, "")
		pr := batch(proxied, p.URL())
		dSum, pSum = dSum+d, pSum+pr
		ratios = append(ratios, float64(pr)/float64(d))
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(dSum.Milliseconds())/float64(b.N), "direct-ms")
	b.ReportMetric(float64(pSum.Milliseconds())/float64(b.N), "proxy-ms")
	b.ReportMetric(ratios[len(ratios)/2], "x-direct")
}
