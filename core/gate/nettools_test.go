package gate_test

import (
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
	"github.com/diffgate/diffgate/internal/toolserve"
)

// TestNetAllowTools: real tools fetch through the gate's proxy from local
// servers under made-up names (the proxy's resolver override): pip from a
// PyPI-style simple index, go mod download from a GOPROXY. Each also asks
// a refused host first, which gets nothing. As root and as a user.
func TestNetAllowTools(t *testing.T) {
	testenv.SelfAndUser(t, netAllowTools)
}

func netAllowTools(t *testing.T) {
	t.Run("pip", netPip)
	t.Run("go", netGoModDownload)
	t.Run("npm", netNpm)
}

func netNpm(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm")
	}
	f := serveHosts(t, toolserve.NPM(t))
	// The refused registry first (npm view fails), then the tarball.
	script := `export npm_config_cache="$TMPDIR/npm" npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
` + npm + ` view tiny --registry http://refused.test:` + f.noPort + `/ >/dev/null 2>&1 && exit 3
echo '{"name": "ws", "version": "0.0.0"}' > package.json
` + npm + ` install --no-package-lock http://npm.test:` + f.okPort + `` + toolserve.NPMTarball + ` || exit 1
node -e 'if (require("tiny") !== 42) process.exit(2)'
`
	res, ws := gateRun(t, script, f.config("npm.test", "node_modules/", "package.json"))
	f.check(t, res.Report, "npm.test")
	if _, err := os.Stat(filepath.Join(ws, "node_modules", "tiny", "index.js")); err != nil {
		t.Errorf("not installed: %v", err)
	}
}

// netFixture is the allowed host's server and the refused one's, which
// must never be asked.
type netFixture struct {
	okPort, noPort string
	no             *toolserve.Server
}

func serveHosts(t *testing.T, ok *toolserve.Server) *netFixture {
	no := toolserve.Refusing(t)
	return &netFixture{okPort: ok.Port(), noPort: no.Port(), no: no}
}

func (f *netFixture) config(host string, allow ...string) gate.Config {
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	return gate.Config{Timeout: 5 * time.Minute, Allow: allow,
		Contain:  contain.Policy{Mode: contain.Auto, NetAllow: []string{host}},
		NetHosts: map[string][]netip.Addr{host: lo, "refused.test": lo}}
}

// checkNet checks the tool's exit, that the refused host got nothing, and
// that the report holds the allowed requests to host and the refused one.
func (f *netFixture) check(t *testing.T, rep *report.Report, host string) {
	t.Helper()
	out := rep.Process.StderrHead + rep.Process.StderrTail
	if c := rep.Containment; c == nil || !c.Observed {
		t.Skipf("blocked actions not observed here: %+v", c)
	}
	if rep.Process.ExitCode != 0 {
		t.Fatalf("the tool failed: exit %d\n%s\n%s", rep.Process.ExitCode, lines(rep), out)
	}
	if n := f.no.Hits(); n != 0 {
		t.Errorf("the refused host's server was asked %d times", n)
	}
	allowed, refused := 0, 0
	for _, q := range rep.Network {
		switch {
		case q.Host == host && q.Allowed && q.PID > 0 && q.BytesIn > 0:
			allowed++
		case q.Host == "refused.test" && !q.Allowed && q.Reason == "host not allowed":
			refused++
		default:
			t.Errorf("unexpected request %+v", q)
		}
	}
	if allowed == 0 || refused == 0 {
		t.Errorf("network: %d allowed, %d refused: %+v", allowed, refused, rep.Network)
	}
	if !strings.Contains(lines(rep), "BLOCKED net refused.test:"+f.noPort) {
		t.Errorf("no BLOCKED line for the refused host:\n%s", lines(rep))
	}
	t.Logf("%s\n%s", rep.NetworkSummary(), lines(rep))
}

func netPip(t *testing.T) {
	if err := exec.Command("python3", "-m", "pip", "--version").Run(); err != nil {
		t.Skipf("no pip: %v", err)
	}
	// The interpreter itself, not a shim (pyenv's fails a pip install it
	// cannot rehash after).
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	py := strings.TrimSpace(string(exe))
	f := serveHosts(t, toolserve.PyPI(t))
	script := py + ` -m pip install --no-cache-dir --disable-pip-version-check --no-deps --target out \
  --index-url http://refused.test:` + f.noPort + `/simple/ --extra-index-url http://pypi.test:` + f.okPort + `/simple/ \
  --trusted-host pypi.test --trusted-host refused.test tinypkg; s=$?; echo "pip: $s" >&2; ls -R out >&2; [ $s = 0 ] || exit 1
` + py + ` -c 'import sys; sys.path.insert(0, "out"); import tinypkg; assert tinypkg.VALUE == 42'
`
	res, ws := gateRun(t, script, f.config("pypi.test", "out/"))
	f.check(t, res.Report, "pypi.test")
	if _, err := os.Stat(filepath.Join(ws, "out", "tinypkg", "__init__.py")); err != nil {
		t.Errorf("not installed: %v", err)
	}
}

func netGoModDownload(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go")
	}
	const mod, ver = "example.test/tiny", "v0.1.0"
	f := serveHosts(t, toolserve.GoProxy(t, mod, ver))
	// The refused proxy first: "|" goes on to the next on any error.
	script := `export GOPROXY='http://refused.test:` + f.noPort + `|http://goproxy.test:` + f.okPort + `'
export GOFLAGS=-mod=mod GONOSUMDB='*' GONOSUMCHECK=1 GOSUMDB=off GOTOOLCHAIN=local GOTELEMETRY=off
export GOMODCACHE="$TMPDIR/mod" GOCACHE="$TMPDIR/cache" XDG_CONFIG_HOME="$TMPDIR/config"
printf 'module ws\n\ngo 1.21\n' > go.mod
` + goBin + ` mod download -json ` + mod + `@` + ver + ` || exit 1
test -f "$GOMODCACHE/cache/download/` + mod + `/@v/` + ver + `.zip" || exit 2
`
	res, _ := gateRun(t, script, f.config("goproxy.test", "go.mod", "go.sum"))
	f.check(t, res.Report, "goproxy.test")
}
