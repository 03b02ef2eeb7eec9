// Command histprobe times the phases of a gated run in-process, as the CLI's
// run verb performs them: open the history database, load the workspace's
// hash cache, before-snapshot, script, after-snapshot, diff and verdict,
// record the run (with the new hash cache), close. The first run is in a
// fresh process (every page of memory new, as for the CLI); later ones reuse
// the process's heap.
//
//	histprobe -db PATH -runs 5 DIR SCRIPT       # history on
//	histprobe -no-history -runs 5 DIR SCRIPT
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/snapshot"
)

var phases = []string{"open db", "load cache", "before", "script", "after", "diff", "record", "close"}

func main() {
	proc.Supervise()
	dbPath := flag.String("db", "", "history database")
	noHistory := flag.Bool("no-history", false, "run without history")
	runs := flag.Int("runs", 5, "runs")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of runs 2 and later to this file")
	flag.Parse()
	if flag.NArg() != 2 || (*dbPath == "") == !*noHistory || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: histprobe (-db PATH | -no-history) [-runs N] DIR SCRIPT")
		os.Exit(2)
	}
	root, script := flag.Arg(0), flag.Arg(1)
	var all [][]time.Duration
	for i := 0; i < *runs; i++ {
		if i == 1 && *cpuprofile != "" {
			stop, err := profile(*cpuprofile)
			if err != nil {
				fmt.Fprintln(os.Stderr, "histprobe:", err)
				os.Exit(1)
			}
			defer stop()
		}
		d, err := once(root, script, *dbPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "histprobe:", err)
			os.Exit(1)
		}
		all = append(all, d)
	}
	show := func(label string, rows [][]time.Duration) {
		var b strings.Builder
		var total time.Duration
		for k, name := range phases {
			var sum time.Duration
			for _, r := range rows {
				sum += r[k]
			}
			sum /= time.Duration(len(rows))
			total += sum
			fmt.Fprintf(&b, "  %s %.1f", name, float64(sum.Microseconds())/1000)
		}
		fmt.Printf("%-24s total %6.1f ms:%s\n", label, float64(total.Microseconds())/1000, b.String())
	}
	show("first run (fresh process)", all[:1])
	if len(all) > 1 {
		show(fmt.Sprintf("runs 2-%d (mean)", len(all)), all[1:])
	}
}

// profile starts a CPU profile written to path; stop ends it.
func profile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// once performs one gated run as cmd/diffgate does and returns the phases'
// durations.
func once(root, script, dbPath string) ([]time.Duration, error) {
	ctx := context.Background()
	marks := []time.Time{time.Now()}
	mark := func() { marks = append(marks, time.Now()) }
	var db *history.DB
	var prior *snapshot.Manifest
	ws, err := history.WorkspaceKey(root)
	if err != nil {
		return nil, err
	}
	if dbPath != "" {
		if db, err = history.Open(dbPath, zerolog.Nop()); err != nil {
			return nil, err
		}
	}
	mark()
	if db != nil {
		prior, _ = db.HashCache(ctx, ws) // a cache problem only costs a full hash
	}
	mark()
	seen := map[gate.Phase]bool{}
	res, err := gate.Run(ctx, gate.Config{Workspace: root, Script: script, Prior: prior, Progress: func(p gate.Progress) {
		switch p.Phase {
		case gate.Execute, gate.Leftovers, gate.Compare:
			if !seen[p.Phase] {
				seen[p.Phase] = true
				mark()
			}
		}
	}})
	if err != nil {
		return nil, err
	}
	if len(marks) != 6 {
		return nil, fmt.Errorf("missing progress events")
	}
	mark()
	if db != nil {
		if _, err := db.Record(ctx, &history.Run{Report: res.Report, ScriptText: res.ScriptText}, res.Contents, res.After); err != nil {
			return nil, err
		}
	}
	mark()
	if db != nil {
		db.Close()
	}
	mark()
	d := make([]time.Duration, len(phases))
	for k := range d {
		d[k] = marks[k+1].Sub(marks[k])
	}
	return d, nil
}
