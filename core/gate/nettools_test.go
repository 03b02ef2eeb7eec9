package gate_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
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

// tgzOf builds a gzipped tar of files (name -> content), in name order.
func tgzOf(t *testing.T, names []string, files map[string]string) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, files[n])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	return b.Bytes()
}

func netNpm(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm")
	}
	tgz := tgzOf(t, []string{"package/package.json", "package/index.js"}, map[string]string{
		"package/package.json": `{"name": "tiny", "version": "1.0.0", "main": "index.js"}`,
		"package/index.js":     "module.exports = 42;\n",
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/tiny/-/tiny-1.0.0.tgz", func(w http.ResponseWriter, r *http.Request) { w.Write(tgz) })
	f := serveHosts(t, mux)
	// The refused registry first (npm view fails), then the tarball.
	script := `export npm_config_cache="$TMPDIR/npm" npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
` + npm + ` view tiny --registry http://refused.test:` + f.noPort + `/ >/dev/null 2>&1 && exit 3
echo '{"name": "ws", "version": "0.0.0"}' > package.json
` + npm + ` install --no-package-lock http://npm.test:` + f.okPort + `/tiny/-/tiny-1.0.0.tgz || exit 1
node -e 'if (require("tiny") !== 42) process.exit(2)'
`
	res, ws := gateRun(t, script, f.config("npm.test", "node_modules/", "package.json"))
	f.check(t, res.Report, "npm.test")
	if _, err := os.Stat(filepath.Join(ws, "node_modules", "tiny", "index.js")); err != nil {
		t.Errorf("not installed: %v", err)
	}
}

// zipOf builds a zip archive of files (name -> content), in name order.
func zipOf(t *testing.T, names []string, files map[string]string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, n := range names {
		w, err := z.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, files[n])
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hosts serves h as the allowed host and counts what the refused one is
// asked; it returns the gate config's network part and the two ports.
type netFixture struct {
	okPort, noPort string
	noHits         atomic.Int64
}

func serveHosts(t *testing.T, h http.Handler) *netFixture {
	f := &netFixture{}
	ok := httptest.NewServer(h)
	no := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.noHits.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(func() { ok.Close(); no.Close() })
	_, f.okPort, _ = net.SplitHostPort(ok.Listener.Addr().String())
	_, f.noPort, _ = net.SplitHostPort(no.Listener.Addr().String())
	return f
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
	if n := f.noHits.Load(); n != 0 {
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
	names := []string{"tinypkg/__init__.py", "tinypkg-0.1.dist-info/METADATA", "tinypkg-0.1.dist-info/WHEEL", "tinypkg-0.1.dist-info/RECORD"}
	files := map[string]string{
		"tinypkg/__init__.py":            "VALUE = 42\n",
		"tinypkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
		"tinypkg-0.1.dist-info/WHEEL":    "Wheel-Version: 1.0\nGenerator: diffgate-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	var record strings.Builder
	for _, n := range names[:3] {
		sum := sha256.Sum256([]byte(files[n]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[n]))
	}
	record.WriteString("tinypkg-0.1.dist-info/RECORD,,\n")
	files[names[3]] = record.String()
	wheel := zipOf(t, names, files)
	sum := sha256.Sum256(wheel)
	const whl = "tinypkg-0.1-py3-none-any.whl"
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/tinypkg/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!DOCTYPE html><html><body><a href="/files/%s#sha256=%s">%s</a></body></html>`, whl, hex.EncodeToString(sum[:]), whl)
	})
	mux.HandleFunc("/files/"+whl, func(w http.ResponseWriter, r *http.Request) { w.Write(wheel) })
	f := serveHosts(t, mux)
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
	gomod := "module " + mod + "\n\ngo 1.21\n"
	zipped := zipOf(t, []string{mod + "@" + ver + "/go.mod", mod + "@" + ver + "/tiny.go"}, map[string]string{
		mod + "@" + ver + "/go.mod":  gomod,
		mod + "@" + ver + "/tiny.go": "package tiny\n\nconst Value = 42\n",
	})
	mux := http.NewServeMux()
	base := "/" + mod + "/@v/"
	mux.HandleFunc(base+"list", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, ver+"\n") })
	mux.HandleFunc(base+ver+".info", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"Version":%q,"Time":"2024-01-01T00:00:00Z"}`, ver)
	})
	mux.HandleFunc(base+ver+".mod", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, gomod) })
	mux.HandleFunc(base+ver+".zip", func(w http.ResponseWriter, r *http.Request) { w.Write(zipped) })
	f := serveHosts(t, mux)
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
