package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Request is one request the proxy served or refused: a plain HTTP
// request (Method is its method) or a CONNECT tunnel. BytesOut and
// BytesIn count what went to and came from the server: the body of a
// plain request and of its response, everything through a tunnel.
type Request struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Method   string `json:"method"`
	Addr     string `json:"addr,omitempty"`
	BytesOut int64  `json:"bytes_out"`
	BytesIn  int64  `json:"bytes_in"`
	Allowed  bool   `json:"allowed"`
	Reason   string `json:"reason,omitempty"`
	PID      int    `json:"pid,omitempty"`
	Cmd      string `json:"cmd,omitempty"`
}

// Config is what a proxy allows and how it names its clients.
type Config struct {
	// Rules is the allow list; the zero value refuses everything.
	Rules Rules
	// Hosts maps names to addresses in place of the system's resolver (a
	// test hook for local servers). Only a name mapped here (and allowed
	// by an exact rule) may reach a loopback address.
	Hosts map[string][]netip.Addr
	// Unix, when set, is a path the proxy listens on besides its loopback
	// TCP port (the supervisor connects a contained script's sockets
	// there).
	Unix string
	// Peer names the process behind an accepted connection (pid 0 when
	// unknown).
	Peer func(c net.Conn) (pid int, cmd string)
	// MaxRecords bounds the requests kept (default 10000); those beyond
	// are counted (Dropped).
	MaxRecords int
	// DialTimeout bounds a connection to a server (default 30s).
	DialTimeout time.Duration
	// Log receives structured logs; the zero Logger discards them.
	Log zerolog.Logger
}

// Proxy is a running proxy.
type Proxy struct {
	cfg       Config
	tcp, unix net.Listener
	srv       *http.Server
	transport *http.Transport
	done      chan struct{}

	mu      sync.Mutex
	reqs    []*Request
	dropped int
	tunnels map[net.Conn]struct{}
	wg      sync.WaitGroup

	// dns keeps the resolver's answers for dnsTTL (under dnsMu); resolver
	// is the system's (tests put a counting one in its place).
	dnsMu    sync.Mutex
	dns      map[string]dnsAnswer
	resolver func(ctx context.Context, host string) ([]netip.Addr, error)
}

// dnsAnswer is a name's addresses and when the resolver gave them.
type dnsAnswer struct {
	addrs []netip.Addr
	at    time.Time
}

// dnsTTL is how long an answer is reused: a tool fetching hundreds of
// files from one registry asks the resolver once, not once a request.
// Each use checks the addresses again (Addr), and the dial goes to a
// checked one, so a reused answer lets nothing through a fresh one would
// not. maxDNS bounds the names kept.
const (
	dnsTTL = 15 * time.Second
	maxDNS = 1024
)

type peerKey struct{}

type peer struct {
	pid int
	cmd string
}

type dialKey struct{}

// Start listens on 127.0.0.1 (a port of the kernel's choice) and, when
// cfg.Unix is set, on that path, and serves until Close.
func Start(cfg Config) (*Proxy, error) {
	if cfg.MaxRecords <= 0 {
		cfg.MaxRecords = 10000
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 30 * time.Second
	}
	p := &Proxy{cfg: cfg, tunnels: map[net.Conn]struct{}{}, done: make(chan struct{}), dns: map[string]dnsAnswer{},
		resolver: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}}
	var err error
	if p.tcp, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	if cfg.Unix != "" {
		if p.unix, err = net.Listen("unix", cfg.Unix); err != nil {
			p.tcp.Close()
			return nil, fmt.Errorf("netproxy: %w", err)
		}
	}
	d := &net.Dialer{Timeout: cfg.DialTimeout}
	p.transport = &http.Transport{
		Proxy:              nil, // never the environment's proxy
		DisableCompression: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			a, ok := ctx.Value(dialKey{}).(netip.AddrPort)
			if !ok {
				return nil, errors.New("netproxy: no checked address")
			}
			return d.DialContext(ctx, "tcp", a.String())
		},
		MaxIdleConnsPerHost:   8,
		ReadBufferSize:        64 << 10,
		WriteBufferSize:       64 << 10,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          nil,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if cfg.Peer == nil {
				return ctx
			}
			pid, cmd := cfg.Peer(c)
			return context.WithValue(ctx, peerKey{}, peer{pid, cmd})
		},
	}
	for _, l := range []net.Listener{p.tcp, p.unix} {
		if l == nil {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			_ = p.srv.Serve(l)
		}()
	}
	return p, nil
}

// Addr is the loopback address the proxy listens on.
func (p *Proxy) Addr() netip.AddrPort {
	return p.tcp.Addr().(*net.TCPAddr).AddrPort()
}

// URL is the proxy's URL, for the *_PROXY variables.
func (p *Proxy) URL() string { return "http://" + p.Addr().String() }

// Env returns the variables that send a script's HTTP and HTTPS traffic
// through the proxy at url, in both cases (curl reads only http_proxy),
// with NO_PROXY empty so that no host bypasses it.
func Env(url string) []string {
	var out []string
	for _, n := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		out = append(out, n+"="+url, strings.ToLower(n)+"="+url)
	}
	return append(out, "NO_PROXY=", "no_proxy=")
}

// Close stops the proxy, ends the tunnels still open and returns every
// request it recorded, in the order they came, and how many were left
// out past MaxRecords.
func (p *Proxy) Close() ([]Request, int) {
	select {
	case <-p.done:
	default:
		close(p.done)
		_ = p.srv.Close()
		p.mu.Lock()
		for c := range p.tunnels {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
		p.transport.CloseIdleConnections()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Request, len(p.reqs))
	for i, r := range p.reqs {
		out[i] = *r
	}
	return out, p.dropped
}

// record starts a request's record (nil past MaxRecords).
func (p *Proxy) record(ctx context.Context, host string, port int, method string) *Request {
	r := &Request{Host: host, Port: port, Method: method}
	if pe, ok := ctx.Value(peerKey{}).(peer); ok {
		r.PID, r.Cmd = pe.pid, pe.cmd
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.reqs) >= p.cfg.MaxRecords {
		p.dropped++
		return &Request{} // counted, not kept
	}
	p.reqs = append(p.reqs, r)
	return r
}

func (p *Proxy) finish(r *Request, f func(r *Request)) {
	p.mu.Lock()
	f(r)
	p.mu.Unlock()
}

// check decides on host:port and returns the address to dial.
func (p *Proxy) check(ctx context.Context, host string, port int) (netip.AddrPort, string) {
	host = normHost(host)
	ok, exact, reason := p.cfg.Rules.Host(host, port)
	if !ok {
		return netip.AddrPort{}, reason
	}
	var addrs []netip.Addr
	literal := false
	mapped, isMapped := p.cfg.Hosts[host]
	switch ip, err := netip.ParseAddr(host); {
	case err == nil:
		addrs, literal = []netip.Addr{ip}, true
	case isMapped:
		addrs = mapped
	default:
		if addrs = p.lookup(ctx, host); len(addrs) == 0 {
			return netip.AddrPort{}, ReasonResolve
		}
	}
	// Every address the name has must pass: one public answer beside a
	// private one is still a way into the private network.
	for _, a := range addrs {
		if ok, why := Addr(a, exact, literal || isMapped); !ok {
			return netip.AddrPortFrom(a.Unmap(), uint16(port)), why
		}
	}
	dial := netip.AddrPortFrom(addrs[0].Unmap(), uint16(port))
	if own := p.Addr(); dial.Port() == own.Port() && (dial.Addr() == own.Addr() || dial.Addr().IsUnspecified() || dial.Addr().IsLoopback()) {
		return dial, ReasonSelf // a request to the proxy itself would go round for ever
	}
	return dial, ""
}

// lookup resolves host (nil when it does not resolve), reusing an answer
// younger than dnsTTL.
func (p *Proxy) lookup(ctx context.Context, host string) []netip.Addr {
	p.dnsMu.Lock()
	a, ok := p.dns[host]
	p.dnsMu.Unlock()
	if ok && time.Since(a.at) < dnsTTL {
		return a.addrs
	}
	rctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	addrs, err := p.resolver(rctx, host)
	if err != nil || len(addrs) == 0 {
		return nil
	}
	p.dnsMu.Lock()
	if len(p.dns) >= maxDNS {
		clear(p.dns)
	}
	p.dns[host] = dnsAnswer{addrs: addrs, at: time.Now()}
	p.dnsMu.Unlock()
	return addrs
}

// ServeHTTP serves one proxy request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Hostname() == "" {
		rec := p.record(r.Context(), r.Host, 0, r.Method)
		p.finish(rec, func(rec *Request) { rec.Reason = ReasonBadRequest })
		refuse(w, http.StatusBadRequest, ReasonBadRequest+": not an absolute http:// URL")
		return
	}
	host := r.URL.Hostname()
	port := 80
	if s := r.URL.Port(); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 65535 {
			refuse(w, http.StatusBadRequest, ReasonBadRequest+": port")
			return
		}
		port = n
	}
	rec, addr, ok := p.admit(w, r, host, port, r.Method)
	if !ok {
		return
	}
	out := r.Clone(context.WithValue(r.Context(), dialKey{}, addr))
	out.RequestURI = ""
	removeHop(out.Header)
	var sent, got atomic.Int64
	if r.Body != nil && r.Body != http.NoBody {
		out.Body = &countReader{r: r.Body, n: &sent}
	}
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		p.finish(rec, func(rec *Request) {
			rec.Allowed, rec.Reason, rec.BytesOut = true, "upstream: "+err.Error(), sent.Load()
		})
		refuse(w, http.StatusBadGateway, "upstream: "+err.Error())
		return
	}
	defer resp.Body.Close()
	removeHop(resp.Header)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	buf := copyBufs.Get().(*[]byte)
	_, _ = io.CopyBuffer(writerOnly{w}, &countReader{r: resp.Body, n: &got}, *buf)
	copyBufs.Put(buf)
	p.finish(rec, func(rec *Request) {
		rec.Allowed, rec.BytesOut, rec.BytesIn = true, sent.Load(), got.Load()
	})
}

// admit records a request (method) for host:port and checks it: the
// address to dial, or false once the client has its 403 (recorded with
// the reason).
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request, host string, port int, method string) (*Request, netip.AddrPort, bool) {
	rec := p.record(r.Context(), normHost(host), port, method)
	addr, reason := p.check(r.Context(), host, port)
	if addr.IsValid() {
		p.finish(rec, func(rec *Request) { rec.Addr = addr.Addr().String() })
	}
	if reason != "" {
		p.finish(rec, func(rec *Request) { rec.Reason = reason })
		refuse(w, http.StatusForbidden, reason)
		p.cfg.Log.Info().Str("host", host).Int("port", port).Str("reason", reason).Msg("netproxy: refused")
		return rec, addr, false
	}
	return rec, addr, true
}

func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host, ps, err := net.SplitHostPort(r.Host)
	port, perr := strconv.Atoi(ps)
	if err != nil || perr != nil || port < 1 || port > 65535 {
		rec := p.record(r.Context(), r.Host, 0, r.Method)
		p.finish(rec, func(rec *Request) { rec.Reason = ReasonBadRequest })
		refuse(w, http.StatusBadRequest, ReasonBadRequest+": CONNECT needs host:port")
		return
	}
	rec, addr, ok := p.admit(w, r, host, port, http.MethodConnect)
	if !ok {
		return
	}
	d := net.Dialer{Timeout: p.cfg.DialTimeout}
	server, err := d.DialContext(r.Context(), "tcp", addr.String())
	if err != nil {
		p.finish(rec, func(rec *Request) { rec.Allowed, rec.Reason = true, "upstream: "+err.Error() })
		refuse(w, http.StatusBadGateway, "upstream: "+err.Error())
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		server.Close()
		refuse(w, http.StatusInternalServerError, "no hijack")
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		server.Close()
		return
	}
	if !p.track(client, server) {
		return
	}
	defer p.untrack(client, server)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	var sent, got int64
	var cw sync.WaitGroup
	cw.Go(func() {
		sent, _ = io.Copy(server, buf.Reader) // buffered bytes first, then the connection
		closeWrite(server)
	})
	got, _ = io.Copy(client, server)
	closeWrite(client)
	cw.Wait()
	p.finish(rec, func(rec *Request) { rec.Allowed, rec.BytesOut, rec.BytesIn = true, sent, got })
}

// track registers a tunnel's connections so that Close can end them; it
// reports false (and closes them) when the proxy is closing.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		for _, c := range cs {
			c.Close()
		}
		return false
	default:
	}
	p.wg.Add(1)
	for _, c := range cs {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	for _, c := range cs {
		c.Close()
		delete(p.tunnels, c)
	}
	p.mu.Unlock()
	p.wg.Done()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// ReasonHeader carries why the proxy refused a request.
const ReasonHeader = "X-Diffgate-Reason"

func refuse(w http.ResponseWriter, code int, reason string) {
	w.Header().Set(ReasonHeader, reason)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, "diffgate: "+reason+"\n")
}

var hop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHop(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, k := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(k))
		}
	}
	for _, k := range hop {
		h.Del(k)
	}
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

type countReader struct {
	r io.ReadCloser
	n *atomic.Int64
}

func (c *countReader) Read(b []byte) (int, error) {
	k, err := c.r.Read(b)
	c.n.Add(int64(k))
	return k, err
}

func (c *countReader) Close() error { return c.r.Close() }

// writerOnly hides a writer's ReadFrom: the response writer's would copy
// through a 32 KB buffer of its own, twice the system calls of copyBufs'.
type writerOnly struct{ io.Writer }
