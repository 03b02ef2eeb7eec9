package main

import (
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/diffgate/diffgate/core/snapshot"
)

// isTerminal reports whether w is a terminal (progress goes to stderr only then).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress returns a snapshot progress callback drawing on stderr when it is
// a terminal, or nil.
func (c *cli) progress(label string) func(snapshot.Progress) {
	if !isTerminal(c.stderr) {
		return nil
	}
	return func(p snapshot.Progress) {
		fmt.Fprintf(c.stderr, "\r%s: %s, %.1f MB\x1b[K", label, entries(p.Entries), float64(p.Bytes)/1e6)
	}
}
