// Command snapprobe times snapshot.Take in-process, for what the CLI cannot
// show on its own: the after-snapshot of a gated run (Prior = the
// before-manifest) when the script changed only a few files. It writes its
// timings in hyperfine's --export-json shape so bench.sh reads both alike.
//
//	snapprobe -mode after -touch 10 -runs 10 -json out.json DIR
//	snapprobe -mode full|prior -cpuprofile cpu.prof DIR
//
// Modes: full hashes everything; prior reuses every hash of a snapshot taken
// just before (nothing changed); after rewrites -touch files with their own
// content (new ctime and mtime, same bytes: the tree stays as generated) and
// then takes the snapshot with the before-manifest as Prior, as the gate does.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/diffgate/diffgate/core/snapshot"
)

func main() {
	mode := flag.String("mode", "after", "full, prior or after")
	runs := flag.Int("runs", 10, "timed runs")
	warmup := flag.Int("warmup", 1, "untimed runs first")
	touch := flag.Int("touch", 10, "files rewritten before each after-snapshot")
	workers := flag.Int("workers", 0, "snapshot.Options.Workers (0: the default)")
	out := flag.String("json", "", "write hyperfine-style JSON results here")
	cpuprof := flag.String("cpuprofile", "", "write a CPU profile of the timed runs")
	memprof := flag.String("memprofile", "", "write a heap profile after the runs")
	flag.Parse()
	if flag.NArg() != 1 || (*mode != "full" && *mode != "prior" && *mode != "after") || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: snapprobe [-mode full|prior|after] [flags] DIR")
		os.Exit(2)
	}
	root := flag.Arg(0)
	take := func(prior *snapshot.Manifest) *snapshot.Manifest {
		m, err := snapshot.Take(context.Background(), root, snapshot.Options{Prior: prior, Workers: *workers})
		if err != nil {
			fail(err)
		}
		return m
	}

	var before *snapshot.Manifest
	var victims []string
	if *mode != "full" {
		before = take(nil)
		for _, e := range before.Entries {
			if e.Type == snapshot.File && len(victims) < *touch && e.Size > 0 {
				victims = append(victims, filepath.Join(root, filepath.FromSlash(e.Path)))
			}
		}
	}
	if *mode == "prior" {
		// Only for measuring the reuse path alone: pretend the prior is old
		// enough that no ctime is racy.
		before.CreatedAt = time.Now().Add(time.Hour)
	}
	one := func() time.Duration {
		if *mode == "after" {
			for _, p := range victims {
				data, err := os.ReadFile(p)
				if err == nil {
					err = os.WriteFile(p, data, 0o644)
				}
				if err != nil {
					fail(err)
				}
			}
		}
		runtime.GC()
		t := time.Now()
		take(before)
		return time.Since(t)
	}
	for i := 0; i < *warmup; i++ {
		one()
	}
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			fail(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	var times []float64
	cpu0 := cpuTime()
	for i := 0; i < *runs; i++ {
		times = append(times, one().Seconds())
	}
	cpu := (cpuTime() - cpu0).Seconds() / float64(*runs)
	mean, sd := stats(times)
	fmt.Printf("snapprobe %s: %.1f ms ± %.1f ms (%d runs), CPU %.1f ms per run\n", *mode, mean*1e3, sd*1e3, len(times), cpu*1e3)
	if *out != "" {
		res := map[string]any{"results": []map[string]any{{
			"command": "snapprobe -mode " + *mode, "mean": mean, "stddev": sd, "times": times,
			"median": median(times), "min": slicesMin(times), "max": slicesMax(times),
		}}}
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			fail(err)
		}
	}
	if *memprof != "" {
		f, err := os.Create(*memprof)
		if err != nil {
			fail(err)
		}
		pprof.WriteHeapProfile(f)
		f.Close()
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "snapprobe:", err)
	os.Exit(1)
}

// cpuTime is the process's user and system time: steadier than wall time
// on a busy machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func stats(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	if len(xs) > 1 {
		sd = math.Sqrt(sd / float64(len(xs)-1))
	}
	return mean, sd
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s { // insertion sort: a handful of values
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func slicesMin(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func slicesMax(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
