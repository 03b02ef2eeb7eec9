package gcpause

import (
	"runtime/debug"
	"sync"
	"testing"
)

// TestHoldNestsAndRestores: the pacer is off while any hold lasts, and the
// percent set before the first comes back after the last (concurrent
// holds, and a release called twice, included).
func TestHoldNestsAndRestores(t *testing.T) {
	old := debug.SetGCPercent(137)
	defer debug.SetGCPercent(old)
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	outer := Hold()
	if p := percent(); p != -1 {
		t.Fatalf("percent %d during a hold, want -1 (off)", p)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := Hold()
			r()
			r()
		}()
	}
	wg.Wait()
	if p := percent(); p != -1 {
		t.Fatalf("percent %d while the outer hold lasts, want -1", p)
	}
	outer()
	outer()
	if p := percent(); p != 137 {
		t.Fatalf("percent %d after the last hold, want 137", p)
	}

	debug.SetGCPercent(-1) // GOGC=off stays off
	Hold()()
	if p := percent(); p != -1 {
		t.Fatalf("percent %d after a hold with GOGC off, want -1", p)
	}
}
