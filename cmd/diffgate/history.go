package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/oneline"
	"github.com/diffgate/diffgate/internal/quote"
)

// openHistory opens the history database named by --db, else $DIFFGATE_DB,
// else the default location; failures are usage errors (exit 2).
func openHistory(dbFlag string) (*history.DB, error) {
	path := dbFlag
	if path == "" {
		var err error
		if path, err = history.DefaultPath(); err != nil {
			return nil, usagef("%v", err)
		}
	}
	db, err := history.Open(path, zerolog.Nop())
	if err != nil {
		return nil, usagef("%v", err)
	}
	return db, nil
}

// historyList: diffgate history [--workspace DIR] [--verdict pass|fail] [--limit N].
func (c *cli) historyList(args []string) error {
	fs := newFlags("history")
	db := fs.String("db", "", "history database `PATH`")
	ws := fs.String("workspace", "", "only runs of the workspace `DIR`")
	verdict := fs.String("verdict", "", "only runs with this verdict (pass or fail)")
	limit := fs.Int("limit", 50, "show at most `N` runs (0: all)")
	if _, err := parseN(fs, args, 0); err != nil {
		return err
	}
	if *verdict != "" && *verdict != report.Pass && *verdict != report.Fail {
		return usagef("history: --verdict %q: want pass or fail", *verdict)
	}
	if *limit < 0 {
		return usagef("history: --limit %d: want 0 or more", *limit)
	}
	f := history.Filter{Verdict: *verdict, Limit: *limit}
	if *ws != "" {
		var err error
		if f.Workspace, err = history.WorkspaceKey(*ws); err != nil {
			return usagef("history: workspace %s: %v", *ws, err)
		}
	}
	h, err := openHistory(*db)
	if err != nil {
		return err
	}
	defer h.Close()
	runs, err := h.List(c.ctx, f)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintln(c.stderr, "diffgate: no runs recorded")
		return nil
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tVERDICT\tCONTAINED\tADDED\tREMOVED\tCHANGED\tVIOLATIONS\tBLOCKED\tOUTSIDE\tSTAGE\tWORKSPACE\tSCRIPT")
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	for _, r := range runs {
		// A staged run's state: "pending" marks one still to apply or
		// discard. CONTAINED: yes, NO (a layer missing), off, - (recorded
		// before containment).
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", r.ID, r.StartedAt.Local().Format("2006-01-02 15:04:05"),
			r.Verdict, dash(r.Contained), r.Added, r.Removed, r.Changed, r.Violations, r.Blocked, r.Outside, dash(r.Stage),
			tabSafe(r.Workspace), tabSafe(r.ScriptLine))
	}
	return tw.Flush()
}

// tabSafe quotes a path as the CLI does, and also when a tab would break
// the table's alignment.
func tabSafe(p string) string {
	if strings.ContainsRune(p, '\t') {
		return strconv.Quote(p)
	}
	return quote.Path(p)
}

// runArg parses a RUN argument: a run id, or "last" for the newest run.
func (c *cli) runArg(h *history.DB, s string) (int64, error) {
	if s == "last" || s == "latest" {
		id, err := h.Latest(c.ctx)
		if err != nil {
			return 0, err
		}
		if id == 0 {
			return 0, usagef("history: no runs recorded")
		}
		return id, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("history: RUN %q: want a run id (see diffgate history) or last", s)
	}
	return id, nil
}

// loadRun opens the history database --db names and loads one run (a
// number or "last"); an unknown id is a usage error.
func (c *cli) loadRun(dbFlag, arg string) (*history.Run, error) {
	h, err := openHistory(dbFlag)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	id, err := c.runArg(h, arg)
	if err != nil {
		return nil, err
	}
	run, err := h.Get(c.ctx, id)
	if errors.Is(err, history.ErrNotFound) {
		return nil, usagef("history: run %d not found (see diffgate history)", id)
	}
	return run, err
}

// historyShow: diffgate history show RUN. Prints every change of the run,
// in the run verb's line format, the allowed ones marked "allowed by RULE",
// then the process findings, and a header on stderr; with --violations only
// what the run verb printed. Exit 1 if the run failed.
func (c *cli) historyShow(args []string) error {
	fs := newFlags("history show")
	db := fs.String("db", "", "history database `PATH`")
	violations := fs.Bool("violations", false, "print only the violations, as the run printed them")
	pos, err := parseN(fs, args, 1)
	if err != nil {
		return err
	}
	run, err := c.loadRun(*db, pos[0])
	if err != nil {
		return err
	}
	writeRunHeader(c.stderr, run)
	lines := run.Report.Lines()
	if !*violations {
		lines = allChangeLines(run.Report)
	}
	for _, l := range lines {
		fmt.Fprintln(c.stdout, l)
	}
	if run.Report.Verdict != report.Pass {
		return errFailed
	}
	return nil
}

// allChangeLines renders every change of r as the run verb renders a
// violation, an allowed one with "allowed by RULE" added to its detail, then
// the other findings (unreadable entries, blocked actions, changes outside
// the workspace) and the process findings.
func allChangeLines(r *report.Report) []string {
	var out []string
	for i := range r.Changes {
		c := &r.Changes[i]
		if !c.Allowed {
			out = append(out, report.ChangeLine(c))
			continue
		}
		mark := "allowed"
		if c.Rule != "" {
			mark += " by " + quote.Path(c.Rule)
		}
		if d := report.ChangeDetail(c); d != "" {
			mark = d + ", " + mark
		}
		out = append(out, strings.ToUpper(string(c.Kind))+" "+quote.Path(c.Path)+" ("+mark+")")
	}
	out = append(out, r.OtherLines()...)
	return append(out, report.ProcessLines(r)...)
}

// writeRunHeader writes a short description of a run.
func writeRunHeader(w io.Writer, run *history.Run) {
	r := run.Report
	fmt.Fprintf(w, "run %d: %s", run.ID, r.Verdict)
	if len(r.Reasons) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(r.Reasons, ", "))
	}
	fmt.Fprintf(w, ", %s, took %s\n", r.StartedAt.Local().Format("2006-01-02 15:04:05"),
		r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond))
	fmt.Fprintf(w, "workspace %s, script %s", quote.Path(r.Workspace), quote.Path(r.Script.Path))
	for _, a := range r.Script.Args {
		fmt.Fprintf(w, " %s", quoteArg(a))
	}
	fmt.Fprintln(w)
	if run.AllowlistVersion > 0 {
		fmt.Fprintf(w, "allowlist: approved version %d, %s\n", run.AllowlistVersion, entries(len(r.Allowlist)))
	} else {
		fmt.Fprintf(w, "allowlist: %s, not an approved version\n", entries(len(r.Allowlist)))
	}
	if st := r.Stage; st != nil {
		fmt.Fprintf(w, "stage: %s, %s", st.Mechanism, st.State)
		if st.State == report.StagePending {
			fmt.Fprintf(w, " (diffgate apply %d | diffgate discard %d)", run.ID, run.ID)
		}
		fmt.Fprintln(w)
	}
	for _, line := range append(append([]string{containSummary(r.Containment)}, grantLines(r.Containment)...), quote.Text(r.Containment.NotObservable()), r.BlockedDroppedNote(), watchSummary(r.Watch), quote.Text(truncate(r.NetworkSummary(), 300))) {
		if line != "" {
			fmt.Fprintln(w, line)
		}
	}
	if run.Decision != "" {
		fmt.Fprintf(w, "decision: %s", run.Decision)
		if run.DecisionNote != "" {
			fmt.Fprintf(w, " (%s)", oneline.First(run.DecisionNote))
		}
		fmt.Fprintln(w)
	}
}

func entries[N ~int | ~int64](n N) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

func quoteArg(a string) string {
	if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") || quote.Path(a) != a {
		return strconv.Quote(a)
	}
	return a
}

// historyExport: diffgate history export RUN -o FILE (.json, .html or .md).
func (c *cli) historyExport(args []string) error {
	fs := newFlags("history export")
	db := fs.String("db", "", "history database `PATH`")
	out := fs.String("o", "", "write the report to `FILE` (.json, .html or .md)")
	pos, err := parseN(fs, args, 1)
	if err != nil {
		return err
	}
	if *out == "" {
		return errArgs
	}
	if err := report.CheckPath(*out); err != nil {
		return usagef("%v", err)
	}
	run, err := c.loadRun(*db, pos[0])
	if err != nil {
		return err
	}
	if run.AllowlistVersion > 0 && run.Report.AllowlistApproved == nil {
		// The history keeps the version the run used, not the approval.
		run.Report.AllowlistApproved = &report.ApprovedAllowlist{Version: run.AllowlistVersion}
	}
	if err := run.Report.WriteFile(*out); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// historyVerify: diffgate history verify. Exit 1 when the chain is broken.
func (c *cli) historyVerify(args []string) error {
	fs := newFlags("history verify")
	db := fs.String("db", "", "history database `PATH`")
	if _, err := parseN(fs, args, 0); err != nil {
		return err
	}
	h, err := openHistory(*db)
	if err != nil {
		return err
	}
	defer h.Close()
	broken, err := h.Verify(c.ctx)
	if err != nil {
		return err
	}
	if broken != nil {
		fmt.Fprintf(c.stdout, "broken at %s: %s\n", oneline.First(broken.What), broken.Reason)
		return errFailed
	}
	n, err := h.Count(c.ctx, history.Filter{})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "ok: %s, chain intact\n", count.Of(n, "run"))
	return nil
}

// historyPush: diffgate history push --db URL [--from PATH]. Sends the
// runs the local history (--from, else the local default) holds for the
// team store at URL, oldest first; each becomes a new run there and stops
// being pending here. Both chains stay valid.
func (c *cli) historyPush(args []string) error {
	fs := newFlags("history push")
	dbFlag := fs.String("db", "", "the team store's `URL` (default: $"+history.EnvDB+")")
	from := fs.String("from", "", "the local history `PATH` (default: the local default)")
	if _, err := parseN(fs, args, 0); err != nil {
		return err
	}
	url := *dbFlag
	if url == "" {
		url, _ = history.DefaultPath()
	}
	if !history.IsURL(url) {
		return usagef("history push: --db postgres://... (a team store) is required")
	}
	local := *from
	if local == "" {
		var err error
		if local, err = history.LocalPath(); err != nil {
			return usagef("%v", err)
		}
	}
	ldb, err := openHistory(local)
	if err != nil {
		return err
	}
	defer ldb.Close()
	ids, err := ldb.Pending(c.ctx, url)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		fmt.Fprintf(c.stderr, "diffgate: no runs wait for %s in %s\n", history.Redact(url), ldb.Path())
		return nil
	}
	team, err := openHistory(url)
	if err != nil {
		return err
	}
	defer team.Close()
	for _, id := range ids {
		tid, err := ldb.Push(c.ctx, team, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "pushed run %d as run %d\n", id, tid)
	}
	return nil
}
