package gate

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"

	"github.com/diffgate/diffgate/core/netproxy"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/report"
)

// startProxy starts the proxy of --net-allow when the network is off
// but hosts are allowed: the script's *_PROXY variables name its loopback
// port, and the supervisor connects a stand-in socket's connect to that
// port to the proxy's abstract unix socket (the script can reach no
// other address). The returned stop ends it and puts its requests in
// the report.
func (g *run) startProxy(spec *proc.Spec) (stop func(), err error) {
	pol := g.cfg.Contain
	if pol.Net || len(pol.NetAllow) == 0 {
		return func() {}, nil
	}
	rules, err := netproxy.ParseRules(pol.NetAllow)
	if err != nil {
		return nil, setupf("%v", err)
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	unixName := "@diffgate-netproxy-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(nonce[:])
	p, err := netproxy.Start(netproxy.Config{Rules: rules, Hosts: g.cfg.NetHosts, Unix: unixName,
		Peer: proc.ProxyPeer, Log: g.cfg.Log})
	if err != nil {
		return nil, setupf("--net-allow: %v", err)
	}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	spec.Env = append(withoutProxyEnv(env), netproxy.Env(p.URL())...)
	if spec.Containment.Enabled {
		spec.Containment.Proxy, spec.Containment.ProxyUnix = p.Addr().String(), unixName
	}
	g.cfg.Log.Info().Str("proxy", p.URL()).Strs("allow", rules.List()).Msg("network by host: proxy started")
	return func() {
		reqs, dropped := p.Close()
		rep := g.res.Report
		rep.NetworkDropped = dropped
		for _, q := range reqs {
			n := report.NetRequest{Host: q.Host, Port: q.Port, Method: q.Method, BytesOut: q.BytesOut, BytesIn: q.BytesIn,
				Allowed: q.Allowed, Reason: q.Reason, PID: q.PID, Cmd: q.Cmd, Addr: q.Addr}
			rep.Network = append(rep.Network, n)
			if !q.Allowed {
				rep.Blocked = addBlocked(rep.Blocked, report.Blocked{Kind: "net", Target: n.Target(), PID: q.PID, Cmd: q.Cmd, Op: "proxy " + q.Method, Count: 1})
			}
		}
	}, nil
}

// addBlocked adds b to bs, counted with an earlier one of the same kind
// and target.
func addBlocked(bs []report.Blocked, b report.Blocked) []report.Blocked {
	for i := range bs {
		if bs[i].Kind == b.Kind && bs[i].Target == b.Target {
			bs[i].Count += max(b.Count, 1)
			return bs
		}
	}
	return append(bs, b)
}

// withoutProxyEnv drops the proxy variables the script would otherwise
// inherit (--env, or an uncontained run's environment).
func withoutProxyEnv(env []string) []string {
	drop := map[string]bool{}
	for _, kv := range netproxy.Env("") {
		name, _, _ := strings.Cut(kv, "=")
		drop[name] = true
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !drop[name] {
			out = append(out, kv)
		}
	}
	return out
}
