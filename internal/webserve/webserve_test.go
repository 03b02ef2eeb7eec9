package webserve

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// site writes a small web build: a page, a wasm with a gzip variant, a
// script with a stale one, a directory and a symlink out of the root.
func site(t *testing.T) (dir string, wasm []byte) {
	t.Helper()
	dir = t.TempDir()
	wasm = bytes.Repeat([]byte("\x00asm\x01\x00\x00\x00 some code "), 500)
	write := func(name string, data []byte, mod time.Time) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	built := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	write("index.html", []byte("<!doctype html><title>t</title>"), built)
	write("app.wasm", wasm, built)
	write("app.wasm.gz", gz(t, wasm), built)
	write("wasm_exec.js", []byte("new script"), built.Add(time.Hour))
	write("wasm_exec.js.gz", gz(t, []byte("old script")), built)
	write("sub/index.html", []byte("sub page"), built)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	return dir, wasm
}

func gz(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func server(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	h, err := Handler(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// get sends a request without Go's transparent gzip, so that the test sees
// the bytes on the wire.
func get(t *testing.T, method, url, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestTypesAndPrecompressedVariants(t *testing.T) {
	dir, wasm := site(t)
	srv := server(t, dir)

	resp, body := get(t, "GET", srv.URL+"/app.wasm", "gzip, deflate, br, zstd")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/wasm" ||
		resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("wasm, gzip accepted: %s %v", resp.Status, resp.Header)
	}
	r, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(plain, wasm) {
		t.Fatalf("the gzip body is not the wasm (%v)", err)
	}
	if len(body) >= len(wasm) {
		t.Fatalf("the gzip body is %d bytes, the wasm %d", len(body), len(wasm))
	}

	for _, ae := range []string{"", "identity", "gzip;q=0, br;q=0", "deflate"} {
		resp, body = get(t, "GET", srv.URL+"/app.wasm", ae)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, wasm) ||
			resp.Header.Get("Vary") != "Accept-Encoding" || resp.Header.Get("Content-Type") != "application/wasm" {
			t.Fatalf("wasm, Accept-Encoding %q: %s %v (%d bytes)", ae, resp.Status, resp.Header, len(body))
		}
	}

	// A variant older than its file is stale: never served, not announced.
	resp, body = get(t, "GET", srv.URL+"/wasm_exec.js", "gzip")
	if string(body) != "new script" || resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Vary") != "" ||
		resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("stale variant: %q %v", body, resp.Header)
	}

	resp, body = get(t, "GET", srv.URL+"/", "gzip")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || string(body) != "<!doctype html><title>t</title>" {
		t.Fatalf("/: %s %v %q", resp.Status, resp.Header, body)
	}
	if resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
	if _, body = get(t, "GET", srv.URL+"/sub/", ""); string(body) != "sub page" {
		t.Fatalf("/sub/: %q", body)
	}

	// HEAD: the headers of the variant, no body.
	resp, body = get(t, "HEAD", srv.URL+"/app.wasm", "gzip")
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("HEAD: %s %v %d bytes", resp.Status, resp.Header, len(body))
	}
}

func TestRevalidation(t *testing.T) {
	dir, _ := site(t)
	srv := server(t, dir)
	resp, _ := get(t, "GET", srv.URL+"/app.wasm", "gzip")
	tag := resp.Header.Get("ETag")
	resp2, _ := get(t, "GET", srv.URL+"/app.wasm", "")
	if tag == "" || tag == resp2.Header.Get("ETag") {
		t.Fatalf("ETags gzip %q, identity %q: want two different ones", tag, resp2.Header.Get("ETag"))
	}
	req, _ := http.NewRequest("GET", srv.URL+"/app.wasm", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("If-None-Match", tag)
	r, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation: %s, want 304", r.Status)
	}
}

func TestRefusals(t *testing.T) {
	dir, _ := site(t)
	srv := server(t, dir)
	for path, want := range map[string]int{
		"/missing.wasm":             404,
		"/sub":                      404, // a directory: no listing
		"/link.txt":                 404, // a symlink out of the directory
		"/../secret.txt":            404,
		"/%2e%2e/%2e%2e/etc/passwd": 404,
	} {
		resp, body := get(t, "GET", srv.URL+path, "")
		if resp.StatusCode != want {
			t.Errorf("%s: %s %q, want %d", path, resp.Status, body, want)
		}
		if bytes.Contains(body, []byte("secret")) {
			t.Errorf("%s: served the file outside the directory", path)
		}
	}
	resp, _ := get(t, "POST", srv.URL+"/index.html", "")
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %s %v", resp.Status, resp.Header)
	}
	if _, err := Handler(filepath.Join(dir, "nope")); err == nil {
		t.Error("Handler of a missing directory: no error")
	}
}

func TestAcceptedEncodings(t *testing.T) {
	for in, want := range map[string][]string{
		"gzip, deflate, br, zstd": {"gzip", "br"},
		"GZIP;q=0.5":              {"gzip"},
		"br;q=0, gzip;q=0.001":    {"gzip"},
		"*":                       {},
		"":                        {},
	} {
		got := acceptedEncodings(in)
		for _, e := range Encodings {
			should := false
			for _, w := range want {
				should = should || w == e.Name
			}
			if got[e.Name] != should {
				t.Errorf("%q: %s accepted = %v, want %v", in, e.Name, got[e.Name], should)
			}
		}
	}
}
