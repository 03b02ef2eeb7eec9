// Package gcpause turns the garbage collector's pacer off while a phase
// runs that allocates almost only what it keeps: a walk building a
// manifest, a hash cache being decoded.
//
// The pacer starts a collection each time the heap doubles. While a
// manifest of 125,000 entries grows from nothing to its 60 MB, that is
// three or four collections, each marking everything allocated so far and
// finding next to nothing to free (28 → 36 → 36 MB, 64 → 69 → 65 MB in
// gctrace on the real tree): about 45 ms of a 0.5 s gated run, on the core
// the walk's other worker needed. Held off, the heap reaches the same peak
// (what a walk allocates is its result) and is collected once, where the
// phase ends (a gate collects there anyway, see core/gate's release).
//
// A hold is process-wide (debug.SetGCPercent) and counted: the percent set
// before the first hold comes back when the last one ends. A GOGC that
// was off stays off. It is for phases, not for a whole run: garbage made
// by other goroutines while a hold lasts (the desktop app's) waits for its
// end.
package gcpause

import (
	"runtime/debug"
	"sync"
)

var (
	mu    sync.Mutex
	holds int
	saved int
)

// Hold turns the pacer off until every hold taken has been ended by
// calling its release (once; a second call does nothing).
func Hold() (release func()) {
	mu.Lock()
	if holds == 0 {
		saved = debug.SetGCPercent(-1)
	}
	holds++
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			holds--
			if holds == 0 {
				debug.SetGCPercent(saved)
			}
			mu.Unlock()
		})
	}
}
