// Command histprobe times the phases of a gated no-op run with history on,
// as cmd/diffgate's run verb does them (temporary exploration tool).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/proc"
)

func main() {
	proc.Supervise()
	ctx := context.Background()
	root, dbPath, script := os.Args[1], os.Args[2], os.Args[3]
	for i := 0; i < 5; i++ {
		t0 := time.Now()
		db, err := history.Open(dbPath, zerolog.Nop())
		if err != nil {
			panic(err)
		}
		ws, _ := history.WorkspaceKey(root)
		t1 := time.Now()
		c, _ := db.HashCache(ctx, ws)
		t2 := time.Now()
		var tb, ta, te time.Time
		var bb, ab int64
		res, err := gate.Run(ctx, gate.Config{Workspace: root, Script: script, Prior: c, Progress: func(p gate.Progress) {
			switch p.Phase {
			case gate.Before:
				bb = p.Bytes
			case gate.After:
				ab = p.Bytes
			}
			switch p.Phase {
			case gate.Execute:
				if tb.IsZero() {
					tb = time.Now()
				}
			case gate.After:
				if ta.IsZero() {
					ta = time.Now()
				}
			case gate.Compare:
				if te.IsZero() {
					te = time.Now()
				}
			}
		}})
		if err != nil {
			panic(err)
		}
		t3 := time.Now()
		if _, err := db.Record(ctx, &history.Run{Report: res.Report, ScriptText: res.ScriptText}, res.Contents, res.After); err != nil {
			panic(err)
		}
		t4 := time.Now()
		db.Close()
		t5 := time.Now()
		ms := func(d time.Duration) string { return fmt.Sprintf("%5.1f", float64(d.Microseconds())/1000) }
		fmt.Printf("hashed before %d after %d bytes; ", bb, ab)
		fmt.Printf("open %s cache %s before %s script %s after %s diff+verdict %s record %s close %s | total %s ms\n",
			ms(t1.Sub(t0)), ms(t2.Sub(t1)), ms(tb.Sub(t2)), ms(ta.Sub(tb)), ms(te.Sub(ta)), ms(t3.Sub(te)), ms(t4.Sub(t3)), ms(t5.Sub(t4)), ms(t5.Sub(t0)))
	}
}
