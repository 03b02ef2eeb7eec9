package stage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/stage"
)

var (
	benchOnce sync.Once
	benchWS   string
	benchErr  error
)

// benchTree is a 50,000-file workspace (500 directories of 100 small
// files), made once per benchmark binary.
func benchTree(b *testing.B) string {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "diffgate-stage-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchWS = filepath.Join(dir, "ws")
		for d := 0; d < 500 && benchErr == nil; d++ {
			sub := filepath.Join(benchWS, fmt.Sprintf("d%03d", d))
			if benchErr = os.MkdirAll(sub, 0o755); benchErr != nil {
				return
			}
			for f := 0; f < 100; f++ {
				if benchErr = os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.txt", f)), []byte(fmt.Sprintf("file %d %d\n", d, f)), 0o644); benchErr != nil {
					return
				}
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchWS
}

// stageTen runs a script changing 10 files of the tree over an overlay.
func stageTen(b *testing.B, ws string) *stage.Stage {
	st, err := stage.New(b.TempDir(), ws, stage.Overlay)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Discard() })
	script := filepath.Join(b.TempDir(), "ten.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nfor i in 0 1 2 3 4 5 6 7 8 9; do echo changed >> d10$i/f050.txt; done\n"), 0o755)
	res, err := proc.Run(context.Background(), proc.Spec{Dir: ws, Path: script, Timeout: time.Minute,
		Overlay: &proc.Overlay{Lower: ws, Upper: st.Upper(), Work: st.Work(), UserXattr: st.UserXattr}})
	if err != nil || res.ExitCode != 0 {
		b.Fatalf("staged run: %v %+v", err, res)
	}
	return st
}

// BenchmarkReadStage10of50k: the after-phase of a staged run that changed
// 10 files of a 50k-file tree: read the upper layer and the lower
// counterparts, and compare.
func BenchmarkReadStage10of50k(b *testing.B) {
	if p := stage.Probe(context.Background(), b.TempDir()); p.Mechanism != stage.Overlay {
		b.Skip(p.Why)
	}
	ws := benchTree(b)
	st := stageTen(b, ws)
	b.ResetTimer()
	for b.Loop() {
		d, err := st.Read(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if n := len(diff.Compare(d.Before, d.After, diff.Options{Root: ws})); n != 10 {
			b.Fatalf("%d changes, want 10", n)
		}
	}
}

// BenchmarkWalk50kStatOnly: a direct run's after-phase on the same tree
// with a warm hash cache (stat every entry, reuse every hash).
func BenchmarkWalk50kStatOnly(b *testing.B) {
	ws := benchTree(b)
	prior, err := snapshot.Take(context.Background(), ws, snapshot.Options{Granularity: time.Nanosecond})
	if err != nil {
		b.Fatal(err)
	}
	prior.CreatedAt = time.Now().Add(time.Hour)
	b.ResetTimer()
	for b.Loop() {
		if _, err := snapshot.Take(context.Background(), ws, snapshot.Options{Prior: prior}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRun(b *testing.B, overlay bool) {
	if overlay {
		if p := stage.Probe(context.Background(), b.TempDir()); p.Mechanism != stage.Overlay {
			b.Skip(p.Why)
		}
	}
	ws := b.TempDir()
	script := filepath.Join(ws, "true.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
	b.ResetTimer()
	for b.Loop() {
		spec := proc.Spec{Dir: ws, Path: script, Timeout: time.Minute}
		if overlay {
			b.StopTimer()
			st, err := stage.New(b.TempDir(), ws, stage.Overlay)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Discard() })
			spec.Overlay = &proc.Overlay{Lower: ws, Upper: st.Upper(), Work: st.Work(), UserXattr: st.UserXattr}
			b.StartTimer()
		}
		if res, err := proc.Run(context.Background(), spec); err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkRunDirect and BenchmarkRunOverlay: a no-op script through the
// supervisor, without and with the overlay; the difference is the
// overlay's setup cost per run.
func BenchmarkRunDirect(b *testing.B)  { benchRun(b, false) }
func BenchmarkRunOverlay(b *testing.B) { benchRun(b, true) }

// BenchmarkProbe: what Probe costs once per run.
func BenchmarkProbe(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		stage.Probe(context.Background(), dir)
	}
}
