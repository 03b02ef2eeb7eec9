// Command stageprobe times the after-phase of a staged gated run in-process:
// reading the script's changes back from the stage and laying them over the
// before-snapshot (gate.Result.StageCost.Read, the gate's own timing). The
// script appends a line to -touch files of the tree; staged, the workspace
// itself stays as generated, so every run sees the same tree. Each run's
// after-manifest is the next run's hash cache (history warm), and the first
// run's shape (gate.Result.Shape) the next runs' Config.Shape, as the
// pipeline keeps it: an overlay-staged run then takes no before-snapshot
// and its after-phase reads only the upper layer (-walk: every run walks,
// as without a known shape). It writes its timings in hyperfine's
// --export-json shape so bench.sh reads them alike.
//
//	stageprobe -touch 10 -runs 10 -base STAGES -json out.json DIR
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/stage"
)

func main() {
	proc.Supervise()
	touch := flag.Int("touch", 10, "files the script changes")
	runs := flag.Int("runs", 10, "timed runs (after one untimed warmup)")
	base := flag.String("base", "", "directory for the stages (required; emptied after each run)")
	out := flag.String("json", "", "write hyperfine-style JSON results here")
	force := flag.String("mechanism", "", "stage by overlay or copy instead of probing (as run --stage-mechanism)")
	walk := flag.Bool("walk", false, "walk the workspace before every run (no known shape)")
	flag.Parse()
	if flag.NArg() != 1 || *base == "" || *runs < 1 || *touch < 1 {
		fmt.Fprintln(os.Stderr, "usage: stageprobe [-touch N] [-runs N] -base DIR [-json FILE] DIR")
		os.Exit(2)
	}
	root, err := filepath.Abs(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	prior, err := snapshot.Take(ctx, root, snapshot.Options{})
	if err != nil {
		fail(err)
	}
	// The script: relative paths, so it writes into whatever root the stage
	// runs it in (the overlay at the workspace's path, or the copy).
	var b strings.Builder
	b.WriteString("#!/bin/sh\nset -e\n")
	n := 0
	for _, e := range prior.Entries {
		if e.Type == snapshot.File && n < *touch {
			fmt.Fprintf(&b, "echo changed >>'%s'\n", strings.ReplaceAll(e.Path, "'", `'\''`))
			n++
		}
	}
	if n < *touch {
		fail(fmt.Errorf("the tree has %d files, fewer than -touch %d", n, *touch))
	}
	script := filepath.Join(*base, "stageprobe.sh")
	if err := os.MkdirAll(*base, 0o755); err != nil {
		fail(err)
	}
	if err := os.WriteFile(script, []byte(b.String()), 0o755); err != nil {
		fail(err)
	}
	p := stage.ProbeFor(ctx, *base, root)
	mech := p.Mechanism
	if *force != "" {
		mech = stage.Mechanism(*force)
	}
	var times []float64
	var shape *stage.Shape
	for i := 0; i <= *runs; i++ {
		st, err := stage.New(*base, root, mech)
		if err != nil {
			fail(err)
		}
		res, err := gate.Run(ctx, gate.Config{Workspace: root, Script: script, Prior: prior, Stage: st, Shape: shape})
		if err != nil {
			fail(err)
		}
		if got := len(res.Report.Changes); got != *touch {
			fail(fmt.Errorf("the staged run reported %d changes, want %d", got, *touch))
		}
		if err := st.Discard(); err != nil {
			fail(err)
		}
		if res.After != nil {
			prior = res.After
		}
		if res.Shape != nil && !*walk {
			shape = res.Shape
		}
		if i > 0 { // the first run warms the hash cache
			times = append(times, res.StageCost.Read.Seconds())
		}
	}
	mean, sd := stats(times)
	how := "no before-snapshot"
	if shape == nil || mech != stage.Overlay {
		how = "before-snapshot"
	}
	fmt.Printf("stageprobe (%s stage, %s): after-phase %.1f ms ± %.1f ms (%d runs, %d files changed)\n",
		mech, how, mean*1e3, sd*1e3, len(times), *touch)
	if *out != "" {
		res := map[string]any{"results": []map[string]any{{
			"command": "stageprobe " + string(mech), "mean": mean, "stddev": sd, "times": times,
			"min": slices.Min(times), "max": slices.Max(times),
		}}}
		data, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*out, data, 0o644); err != nil {
			fail(err)
		}
	}
}

func stats(ts []float64) (mean, sd float64) {
	for _, t := range ts {
		mean += t
	}
	mean /= float64(len(ts))
	if len(ts) > 1 {
		for _, t := range ts {
			sd += (t - mean) * (t - mean)
		}
		sd = math.Sqrt(sd / float64(len(ts)-1))
	}
	return mean, sd
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "stageprobe:", err)
	os.Exit(1)
}
