// Package webserve serves the web build (build/web) as a static site, for
// `make serve` (tools/webserve) and the browser tests (tests/web): every
// file with its media type (the wasm as application/wasm, which the browser
// needs to compile it while it downloads), and a precompressed copy next to
// a file (NAME.br, NAME.gz, written by `make web`) in its place when the
// browser accepts that encoding.
//
// It serves what is in one directory and nothing outside it (os.Root: no
// "..", no symlink out), GET and HEAD only, no directory listings.
package webserve

import (
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// Types are the media types of the files a web build holds; other files get
// mime.TypeByExtension's, or a sniffed one.
var Types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
	".wasm": "application/wasm",
	".png":  "image/png",
	".svg":  "image/svg+xml",
	".txt":  "text/plain; charset=utf-8",
	".md":   "text/markdown; charset=utf-8",
}

// Encodings are the precompressed variants looked for, in order of
// preference: the Content-Encoding and the suffix of the file holding it.
var Encodings = []struct{ Name, Suffix string }{{"br", ".br"}, {"gzip", ".gz"}}

// Handler serves the files of dir. A variant NAME.gz (or NAME.br) is served
// for NAME, with Content-Encoding, when the request accepts that encoding
// and the variant is not older than NAME (a stale one is never served);
// every response for a file that has a variant says Vary: Accept-Encoding.
// Responses say Cache-Control: no-cache (the browser revalidates, so a new
// build is picked up at the next load and an unchanged one costs a 304).
func Handler(dir string) (http.Handler, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &handler{root: root}, nil
}

type handler struct{ root *os.Root }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" || strings.HasSuffix(r.URL.Path, "/") {
		name = path.Join(name, "index.html")
	}
	f, st, err := h.open(name)
	if err != nil {
		// Missing, not a regular file, or outside the directory.
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	defer f.Close()

	header := w.Header()
	header.Set("Cache-Control", "no-cache")
	header.Set("X-Content-Type-Options", "nosniff")
	if t := typeOf(name); t != "" {
		header.Set("Content-Type", t)
	}
	modTime := st.ModTime()
	v, vst, enc, hasVariant := h.variant(name, modTime, r)
	if hasVariant {
		header.Add("Vary", "Accept-Encoding")
	}
	if v != nil {
		defer v.Close()
		header.Set("Content-Encoding", enc)
		header.Set("ETag", etag(vst, enc)) // a representation of its own
		http.ServeContent(w, r, name, modTime, v)
		return
	}
	header.Set("ETag", etag(st, ""))
	http.ServeContent(w, r, name, modTime, f)
}

// open opens a regular file of the root.
func (h *handler) open(name string) (*os.File, fs.FileInfo, error) {
	f, err := h.root.Open(name)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fs.ErrNotExist
	}
	return f, st, nil
}

// variant reports whether name has a precompressed variant not older than
// modTime (ok), and opens the preferred one the request accepts (v, with
// its encoding; nil when it accepts none).
func (h *handler) variant(name string, modTime time.Time, r *http.Request) (v *os.File, st fs.FileInfo, enc string, ok bool) {
	accepted := acceptedEncodings(r.Header.Get("Accept-Encoding"))
	for _, e := range Encodings {
		f, fst, err := h.open(name + e.Suffix)
		if err != nil {
			continue
		}
		if fst.ModTime().Before(modTime) {
			f.Close()
			continue
		}
		ok = true
		if accepted[e.Name] && enc == "" {
			v, st, enc = f, fst, e.Name
			continue
		}
		f.Close()
	}
	return v, st, enc, ok
}

// acceptedEncodings parses Accept-Encoding: the codings with a non-zero
// quality ("*" is not taken for a precompressed file).
func acceptedEncodings(s string) map[string]bool {
	out := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding == "" {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, val, found := strings.Cut(strings.TrimSpace(p), "=")
			if found && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					q = f
				}
			}
		}
		out[coding] = q > 0
	}
	return out
}

func typeOf(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := Types[ext]; ok {
		return t
	}
	return mime.TypeByExtension(ext)
}

func etag(st fs.FileInfo, enc string) string {
	tag := strconv.FormatInt(st.ModTime().UnixNano(), 36) + "-" + strconv.FormatInt(st.Size(), 36)
	if enc != "" {
		tag += "-" + enc
	}
	return `"` + tag + `"`
}
