package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/report"
)

// runVerb: diffgate run --workspace DIR [...] -- SCRIPT [ARG...].
func (c *cli) runVerb(args []string) error {
	fs := newFlags("run")
	ws := fs.String("workspace", "", "the `DIR` the script runs in and the gate watches")
	var allow, reports listFlag
	fs.Var(&allow, "allow", "comma-separated allowlist `LIST` (repeatable)")
	allowFile := fs.String("allowlist", "", "allowlist `FILE`, one entry per line")
	fromHistory := fs.Bool("allowlist-from-history", false, "use the workspace's latest approved allowlist")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit for the script (`DUR`); 0 means none")
	fs.Var(&reports, "report", "write a report to `FILE` (.json, .html, .md; repeatable)")
	dbPath := fs.String("db", "", "history database `PATH`")
	noHistory := fs.Bool("no-history", false, "do not record the run")
	rehash := fs.Bool("rehash", false, "hash every file, reusing no cached hash")
	lockWait := fs.Duration("lock-wait", 0, "wait up to `DUR` for another run on the workspace to finish (default: fail at once)")
	_, rest, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if *ws == "" {
		return usagef("run: --workspace DIR is required")
	}
	if len(rest) == 0 {
		return usagef("run: no script given (diffgate run --workspace DIR -- SCRIPT [ARG...])")
	}
	if *timeout < 0 {
		return usagef("run: --timeout must not be negative")
	}
	if *noHistory && (*dbPath != "" || *fromHistory) {
		return usagef("run: --no-history excludes --db and --allowlist-from-history")
	}
	for _, r := range reports {
		if err := report.CheckPath(r); err != nil {
			return usagef("%v", err)
		}
		// Before the script runs: a report that cannot be written later
		// would lose the run's outcome.
		if err := report.CheckWritable(r); err != nil {
			return usagef("%v", err)
		}
	}
	if st, err := os.Stat(*ws); err != nil || !st.IsDir() {
		if err == nil {
			return usagef("workspace %s: not a directory", report.QuotePath(*ws))
		}
		return usagef("workspace %s: %s", report.QuotePath(*ws), errText(err))
	}
	entries, err := allowEntries(allow, *allowFile)
	if err != nil {
		return err
	}

	cfg := gate.Config{Workspace: *ws, Script: rest[0], Args: rest[1:], Timeout: *timeout, Rehash: *rehash, LockWait: *lockWait, Log: c.logger()}
	var hist *historyRun
	if !*noHistory {
		if hist, err = c.openRunHistory(*dbPath, *ws); err != nil {
			return err
		}
		defer hist.close()
		if *fromHistory {
			more, err := hist.latestAllowlist(c.ctx)
			if err != nil {
				return err
			}
			entries = append(entries, more...)
		}
		if !*rehash {
			cfg.Prior = hist.hashCache(c.ctx)
		}
		cfg.Stored = hist.content(c.ctx)
	}
	cfg.Allow = entries

	var mu sync.Mutex
	cfg.Output = func(_ proc.Stream, p []byte) {
		mu.Lock()
		c.stderr.Write(p)
		mu.Unlock()
	}
	if draw := c.progress("snapshot"); draw != nil {
		cfg.Progress = func(p gate.Progress) {
			if p.Phase == gate.Before || p.Phase == gate.After {
				mu.Lock()
				fmt.Fprintf(c.stderr, "\r%s: %d entries, %.1f MB\x1b[K", p.Phase, p.Entries, float64(p.Bytes)/1e6)
				mu.Unlock()
			}
		}
	}
	// cfg (and the hash cache it holds) is not used after the gate starts:
	// the gate drops the cache once the before-snapshot is taken.
	progress := cfg.Progress != nil
	res, err := gate.Run(c.ctx, cfg)
	if progress {
		fmt.Fprint(c.stderr, "\r\x1b[K")
	}
	if err != nil {
		return usagef("%v", err)
	}
	rep := res.Report
	for _, line := range rep.Lines() {
		fmt.Fprintln(c.stdout, line)
	}
	var problems []error
	for _, r := range reports {
		if err := rep.WriteFile(r); err != nil {
			problems = append(problems, err)
		}
	}
	if hist != nil {
		if err := hist.record(c.ctx, res); err != nil {
			problems = append(problems, err)
		}
	}
	if err := errors.Join(problems...); err != nil {
		// The gate's verdict stands; a lost report or record is a setup error.
		return usagef("%v", err)
	}
	if rep.Verdict != report.Pass {
		return errFailed
	}
	return nil
}

// logger returns the CLI's logger: console output at debug level when
// DIFFGATE_DEV is set, otherwise warnings only, as JSON on stderr.
func (c *cli) logger() zerolog.Logger {
	if os.Getenv("DIFFGATE_DEV") != "" {
		return zerolog.New(zerolog.ConsoleWriter{Out: c.stderr}).With().Timestamp().Logger().Level(zerolog.DebugLevel)
	}
	return zerolog.New(c.stderr).With().Timestamp().Logger().Level(zerolog.WarnLevel)
}

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
