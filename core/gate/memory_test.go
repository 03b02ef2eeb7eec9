package gate_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/snapshot"
)

// TestPriorReleasedBeforeScript checks that the gate holds the prior
// manifest (a history's hash cache: on a large tree a third of the run's
// memory) only for the before-snapshot: by the time the script runs it can
// be collected.
func TestPriorReleasedBeforeScript(t *testing.T) {
	ws, script := workspace(t, "echo hi > out.txt")
	var freed atomic.Bool
	released := -1 // 1: collected by the time the script started, 0: not
	cfg := gate.Config{Workspace: ws, Script: script, Progress: func(p gate.Progress) {
		if p.Phase == gate.Execute && released < 0 {
			for range 3 {
				runtime.GC()
			}
			released = map[bool]int{true: 1, false: 0}[freed.Load()]
		}
	}}
	cfg.Prior = priorOf(t, ws, &freed)
	res, err := gate.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Verdict != "fail" || len(res.Report.Changes) != 1 {
		t.Fatalf("verdict %s, %d changes; want fail, 1", res.Report.Verdict, len(res.Report.Changes))
	}
	if released != 1 {
		t.Fatal("the prior manifest was still referenced when the script ran")
	}
}

// priorOf takes a manifest of ws that sets freed once it is collected.
func priorOf(t *testing.T, ws string, freed *atomic.Bool) *snapshot.Manifest {
	m, err := snapshot.Take(context.Background(), ws, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.AddCleanup(m, func(b *atomic.Bool) { b.Store(true) }, freed)
	return m
}
