// Package toolserve serves what real tools fetch, for tests on loopback
// only: a PyPI-style simple index with one wheel, an npm registry with one
// package and a GOPROXY with one module. Tests reach them under made-up
// host names that the gate's proxy maps to 127.0.0.1 (its resolver
// override), never through /etc/hosts. Each server counts the requests it
// answered, so a test can hold them against the report's network list.
package toolserve

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Server is one local server.
type Server struct {
	srv  *httptest.Server
	hits atomic.Int64
}

// Port is the server's loopback port.
func (s *Server) Port() string {
	_, p, _ := net.SplitHostPort(s.srv.Listener.Addr().String())
	return p
}

// Hits counts the requests the server answered.
func (s *Server) Hits() int64 { return s.hits.Load() }

// serve starts h on loopback, counting requests; t's cleanup closes it.
func serve(t testing.TB, h http.Handler) *Server {
	s := &Server{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// Refusing serves 404 for everything: the refused host of a test, whose
// Hits must stay 0.
func Refusing(t testing.TB) *Server {
	return serve(t, http.NotFoundHandler())
}

// TarGz builds a gzipped tar of files (name -> content), in names' order.
func TarGz(t testing.TB, names []string, files map[string]string) []byte {
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
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Zip builds a zip archive of files (name -> content), in names' order.
func Zip(t testing.TB, names []string, files map[string]string) []byte {
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

// PyPIPackage is the package PyPI serves: tinypkg 0.1, whose module
// tinypkg has VALUE = 42.
const PyPIPackage = "tinypkg"

// PyPI serves a simple index (/simple/tinypkg/) with one pure-Python
// wheel, hashed as pip checks it.
func PyPI(t testing.TB) *Server {
	names := []string{"tinypkg/__init__.py", "tinypkg-0.1.dist-info/METADATA", "tinypkg-0.1.dist-info/WHEEL", "tinypkg-0.1.dist-info/RECORD"}
	files := map[string]string{
		"tinypkg/__init__.py":            "VALUE = 42\n",
		"tinypkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
		"tinypkg-0.1.dist-info/WHEEL":    "Wheel-Version: 1.0\nGenerator: diffgate-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	var record bytes.Buffer
	for _, n := range names[:3] {
		sum := sha256.Sum256([]byte(files[n]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[n]))
	}
	record.WriteString("tinypkg-0.1.dist-info/RECORD,,\n")
	files[names[3]] = record.String()
	wheel := Zip(t, names, files)
	sum := sha256.Sum256(wheel)
	const whl = "tinypkg-0.1-py3-none-any.whl"
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/tinypkg/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!DOCTYPE html><html><body><a href="/files/%s#sha256=%s">%s</a></body></html>`, whl, hex.EncodeToString(sum[:]), whl)
	})
	mux.HandleFunc("/files/"+whl, func(w http.ResponseWriter, r *http.Request) { w.Write(wheel) })
	return serve(t, mux)
}

// NPMPackage is the package NPM serves: tiny 1.0.0, whose index.js
// exports 42.
const NPMPackage = "tiny"

// NPMTarball is the path of the package's tarball on an NPM server.
const NPMTarball = "/tiny/-/tiny-1.0.0.tgz"

// NPM serves a registry with one package: its packument (/tiny, the
// tarball's URL on the host the request named) and its tarball, with the
// integrity npm checks.
func NPM(t testing.TB) *Server {
	tgz := TarGz(t, []string{"package/package.json", "package/index.js"}, map[string]string{
		"package/package.json": `{"name": "tiny", "version": "1.0.0", "main": "index.js"}`,
		"package/index.js":     "module.exports = 42;\n",
	})
	sha1sum := sha1.Sum(tgz)
	sha512sum := sha512.Sum512(tgz)
	mux := http.NewServeMux()
	mux.HandleFunc("/tiny", func(w http.ResponseWriter, r *http.Request) {
		doc := map[string]any{
			"name": "tiny", "dist-tags": map[string]string{"latest": "1.0.0"},
			"versions": map[string]any{"1.0.0": map[string]any{
				"name": "tiny", "version": "1.0.0", "main": "index.js",
				"dist": map[string]string{
					"tarball":   "http://" + r.Host + NPMTarball,
					"shasum":    hex.EncodeToString(sha1sum[:]),
					"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sha512sum[:]),
				},
			}},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	})
	mux.HandleFunc(NPMTarball, func(w http.ResponseWriter, r *http.Request) { w.Write(tgz) })
	return serve(t, mux)
}

// GoProxy serves a GOPROXY with one module, mod at ver: one package whose
// constant Value is 42.
func GoProxy(t testing.TB, mod, ver string) *Server {
	gomod := "module " + mod + "\n\ngo 1.21\n"
	zipped := Zip(t, []string{mod + "@" + ver + "/go.mod", mod + "@" + ver + "/tiny.go"}, map[string]string{
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
	return serve(t, mux)
}
