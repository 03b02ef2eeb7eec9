// Command webserve serves the web build for `make serve`: the files of a
// directory (build/web) on a local address, with the wasm's media type and
// the precompressed copies `make web` writes (see internal/webserve).
//
//	go run ./tools/webserve [-dir build/web] [-addr 127.0.0.1:8765]
//
// -addr 127.0.0.1:0 picks a free port. The first line on standard output is
// the page's URL; errors are one line on standard error, exit status 2.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/diffgate/diffgate/internal/webserve"
)

func main() {
	dir := flag.String("dir", "build/web", "the directory to serve")
	addr := flag.String("addr", "127.0.0.1:8765", "the address to listen on (host:port; port 0 picks a free one)")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("unexpected argument %q (usage: webserve [-dir DIR] [-addr HOST:PORT])", flag.Arg(0)))
	}
	if _, err := os.Stat(*dir + "/index.html"); err != nil {
		fail(fmt.Errorf("%s has no index.html (make web builds it): %v", *dir, err))
	}
	h, err := webserve.Handler(*dir)
	if err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fail(err)
	}
	fmt.Printf("diffgate web: http://%s/  (demo: http://%s/?report=demo-report.json)\n", ln.Addr(), ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fail(srv.Serve(ln))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "webserve:", err)
	os.Exit(2)
}
