package netproxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"
)

// BenchmarkProxy200x100KB: the proxy's cost (make bench; target <= 1.5x
// direct): 200 requests of 100 KB each from one client on loopback,
// direct and through the proxy (a name mapped to 127.0.0.1).
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
	proxied := "http://bench.test:" + u.Port() + "/x"
	for _, c := range []struct {
		name string
		url  string
		tr   *http.Transport
	}{
		{"direct", srv.URL + "/x", &http.Transport{Proxy: nil}},
		{"proxy", proxied, &http.Transport{Proxy: http.ProxyURL(mustURL(p.URL()))}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cl := &http.Client{Transport: c.tr}
			b.SetBytes(200 * int64(len(body)))
			for range b.N {
				for range 200 {
					resp, err := cl.Get(c.url)
					if err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if n != int64(len(body)) {
						b.Fatalf("%d bytes", n)
					}
				}
			}
			c.tr.CloseIdleConnections()
		})
	}
}
