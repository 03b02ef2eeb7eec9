// Command histprobe times the history database's part of a gated run with
// history on: open, load the hash cache, record a run with a new cache.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

func main() {
	ctx := context.Background()
	root, dbPath := os.Args[1], os.Args[2]
	m, err := snapshot.Take(ctx, root, snapshot.Options{})
	if err != nil {
		panic(err)
	}
	ws, _ := history.WorkspaceKey(root)
	for i := 0; i < 4; i++ {
		t0 := time.Now()
		db, err := history.Open(dbPath, zerolog.Nop())
		if err != nil {
			panic(err)
		}
		t1 := time.Now()
		c, err := db.HashCache(ctx, ws)
		if err != nil {
			panic(err)
		}
		t2 := time.Now()
		rep := &report.Report{Schema: report.Schema, Workspace: ws, Verdict: "pass", StartedAt: time.Now().UTC(), FinishedAt: time.Now().UTC(), Script: report.Script{Path: "/x", SHA256: "00"}}
		rep.Reasons = []string{}
		if _, err := db.Record(ctx, &history.Run{Report: rep}, nil, m); err != nil {
			panic(err)
		}
		t3 := time.Now()
		db.Close()
		t4 := time.Now()
		n := 0
		if c != nil {
			n = len(c.Entries)
		}
		fmt.Printf("open %v  hashcache(%d) %v  record %v  close %v\n", t1.Sub(t0), n, t2.Sub(t1), t3.Sub(t2), t4.Sub(t3))
	}
}
