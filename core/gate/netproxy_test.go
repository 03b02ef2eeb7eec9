package gate_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
)

// TestNetAllow: a contained script reaches an allowed host name through
// the gate's proxy with curl and python's urllib; a refused host name and
// a direct connect get nothing, fail the run and are recorded; each
// request is in the report with its process. As root and as a user.
func TestNetAllow(t *testing.T) {
	testenv.SelfAndUser(t, netAllow)
}

func netAllow(t *testing.T) {
	for _, tool := range []string{"curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	var okHits, noHits atomic.Int64
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		okHits.Add(1)
		io.WriteString(w, "package "+r.URL.Path+"\n")
	}))
	defer ok.Close()
	okTLS := httptest.NewTLSServer(ok.Config.Handler)
	defer okTLS.Close()
	_, tlsPort, _ := net.SplitHostPort(okTLS.Listener.Addr().String())
	no := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noHits.Add(1)
		io.WriteString(w, "secret\n")
	}))
	defer no.Close()
	_, okPort, _ := net.SplitHostPort(ok.Listener.Addr().String())
	_, noPort, _ := net.SplitHostPort(no.Listener.Addr().String())
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	cfg := func() gate.Config {
		return gate.Config{Timeout: time.Minute, Allow: []string{"got/"},
			Contain:  contain.Policy{Mode: contain.Auto, NetAllow: []string{"allowed.test"}},
			NetHosts: map[string][]netip.Addr{"allowed.test": lo, "refused.test": lo}}
	}
	allowed := `set -e; mkdir -p got
curl -sS -f -o got/curl.txt http://allowed.test:` + okPort + `/curl
python3 -c 'import sys, urllib.request; open("got/py.txt", "wb").write(urllib.request.urlopen(sys.argv[1]).read())' http://allowed.test:` + okPort + `/py
curl -sS -f -k -o got/tls.txt https://allowed.test:` + tlsPort + `/tls
# urllib3's IPv6 probe: a loopback bind to port 0 is no network use.
python3 -c 'import socket
s = socket.socket(socket.AF_INET6)
try:
    s.bind(("::1", 0))
except OSError:
    pass'
`
	res, ws := gateRun(t, allowed, cfg())
	rep := res.Report
	if c := rep.Containment; c == nil || !c.Observed {
		t.Skipf("blocked actions not observed here: %+v", c)
	}
	if rep.Verdict != report.Pass {
		t.Fatalf("allowed hosts only: %s %v\n%s\n%s%s", rep.Verdict, rep.Reasons, lines(rep), rep.Process.StderrHead, rep.Process.StderrTail)
	}
	for name, want := range map[string]string{"curl.txt": "package /curl\n", "py.txt": "package /py\n", "tls.txt": "package /tls\n"} {
		if b, _ := os.ReadFile(filepath.Join(ws, "got", name)); string(b) != want {
			t.Errorf("%s: %q, want %q", name, b, want)
		}
	}
	if len(rep.Network) != 3 {
		t.Fatalf("network: %+v", rep.Network)
	}
	if n := rep.Network[2]; n.Method != "CONNECT" || !n.Allowed || n.Port == 0 || n.BytesIn < 100 || n.BytesOut < 100 || !strings.Contains(n.Cmd, "curl") {
		t.Errorf("the tunnel: %+v", n)
	}
	for i, cmd := range []string{"curl", "python3"} {
		n := rep.Network[i]
		if n.Host != "allowed.test" || n.Method != "GET" || !n.Allowed || n.BytesIn == 0 || n.PID <= 0 || !strings.Contains(n.Cmd, cmd) || n.Addr != "127.0.0.1" {
			t.Errorf("network[%d]: %+v", i, n)
		}
	}
	if s := rep.NetworkSummary(); s != "network: 3 requests to allowed.test" {
		t.Errorf("summary %q", s)
	}

	refused := `curl -sS -f http://refused.test:` + noPort + `/steal > /dev/null; echo "curl proxy: $?" >&2
curl -sS --noproxy '*' http://127.0.0.1:` + noPort + `/direct > /dev/null; echo "curl direct: $?" >&2
python3 -c 'import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(sys.argv[1])
except urllib.error.HTTPError as e:
    sys.exit(0 if e.code == 403 and e.headers["x-diffgate-reason"] == "host not allowed" else 1)
sys.exit(2)' http://refused.test:` + noPort + `/py
`
	res, _ = gateRun(t, refused, cfg())
	rep = res.Report
	out := rep.Process.StderrHead + rep.Process.StderrTail
	if rep.Process.ExitCode != 0 || !strings.Contains(out, "curl proxy: 22") || !strings.Contains(out, "curl direct: 7") {
		t.Errorf("exit %d, stderr:\n%s", rep.Process.ExitCode, out)
	}
	if rep.Verdict != report.Fail {
		t.Errorf("verdict %s", rep.Verdict)
	}
	l := lines(rep)
	for _, want := range []string{"BLOCKED net refused.test:" + noPort + " (2 times)", "BLOCKED net 127.0.0.1:" + noPort} {
		if !strings.Contains(l, want) {
			t.Errorf("no %q in\n%s", want, l)
		}
	}
	if len(rep.Network) != 2 || rep.Network[0].Allowed || rep.Network[0].Reason != "host not allowed" || rep.Network[0].PID <= 0 {
		t.Errorf("network: %+v", rep.Network)
	}
	if s := rep.NetworkSummary(); s != "network: 2 requests, 2 refused: refused.test" {
		t.Errorf("summary %q", s)
	}
	if n := noHits.Load(); n != 0 {
		t.Errorf("the refused host's server was asked %d times", n)
	}
	if n := okHits.Load(); n != 3 {
		t.Errorf("the allowed server was asked %d times", n)
	}
	_ = context.Background
}

// TestDNSNamed: with the network off, a name lookup a contained script
// sends to port 53 is recorded by the name it looked up (BLOCKED dns
// NAME), not as the name server's address; the lookup fails at once. As
// root and as a user.
func TestDNSNamed(t *testing.T) {
	testenv.SelfAndUser(t, dnsNamed)
}

func dnsNamed(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	script := `python3 -c 'import socket, sys
try:
    socket.getaddrinfo("lookup-one.example.org", 80)
    sys.exit("resolved")
except socket.gaierror:
    pass'
if command -v getent >/dev/null; then getent hosts lookup-two.example.org && exit 3; fi
exit 0
`
	start := time.Now()
	res, _ := gateRun(t, script, gate.Config{Timeout: time.Minute, Contain: contain.Policy{Mode: contain.Auto}})
	rep := res.Report
	if c := rep.Containment; c == nil || !c.Observed {
		t.Skipf("blocked actions not observed here: %+v", c)
	}
	l := lines(rep)
	if rep.Process.ExitCode != 0 || !strings.Contains(l, "BLOCKED dns lookup-one.example.org") {
		t.Errorf("exit %d, lines:\n%s\n%s%s", rep.Process.ExitCode, l, rep.Process.StderrHead, rep.Process.StderrTail)
	}
	// getent sends its single query with send(), which the supervisor does
	// not see: the lookup is recorded by its server, as DNS.
	if _, err := exec.LookPath("getent"); err == nil && !strings.Contains(l, "BLOCKED dns lookup-two.example.org") &&
		!regexp.MustCompile(`(?m)^BLOCKED dns \S+:53`).MatchString(l) {
		t.Errorf("getent's lookup not recorded as DNS:\n%s", l)
	}
	if strings.Contains(l, "BLOCKED net") {
		t.Errorf("a lookup recorded as net:\n%s", l)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the refused lookups took %v", d)
	}
}
