package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/wslock"
	"github.com/diffgate/diffgate/internal/oneline"
	"github.com/diffgate/diffgate/internal/quote"
)

// allowlistFlags declares --workspace and --db.
func allowlistFlags(name string) (fs *flag.FlagSet, ws, db *string) {
	fs = newFlags("allowlist " + name)
	ws = fs.String("workspace", "", "the workspace `DIR`")
	db = fs.String("db", "", "history database `PATH`")
	return fs, ws, db
}

// workspaceArg returns the stored form of --workspace (required).
func workspaceArg(name, ws string) (string, error) {
	if ws == "" {
		return "", usagef("allowlist %s: --workspace DIR is required", name)
	}
	key, err := history.WorkspaceKey(ws)
	if err != nil {
		return "", usagef("allowlist %s: workspace %s: %v", name, ws, err)
	}
	return key, nil
}

// versionArg parses an allowlist version number.
func versionArg(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		return 0, usagef("allowlist: version %q: want a number from 1", s)
	}
	return v, nil
}

// loadAllowlist returns version v of ws's allowlist (0: the latest).
func (c *cli) loadAllowlist(h *history.DB, ws string, v int) (*history.Allowlist, error) {
	if v == 0 {
		a, err := h.LatestAllowlist(c.ctx, ws)
		if err == nil && a == nil {
			err = usagef("allowlist: no approved allowlist for %s (approve one with: diffgate allowlist approve)", ws)
		}
		return a, err
	}
	a, err := h.Allowlist(c.ctx, ws, v)
	if errors.Is(err, history.ErrNotFound) {
		return nil, usagef("allowlist: %s has no version %d (see diffgate allowlist list)", ws, v)
	}
	return a, err
}

// allowlistShow: diffgate allowlist show --workspace DIR [--version N].
// The entries go to stdout, one per line (an --allowlist FILE); a header
// goes to stderr.
func (c *cli) allowlistShow(args []string) error {
	fs, wsFlag, db := allowlistFlags("show")
	version := fs.Int("version", 0, "show version `N` (default: the latest)")
	if _, err := parseN(fs, args, 0); err != nil {
		return err
	}
	if *version < 0 {
		return usagef("allowlist show: --version %d: want a number from 1", *version)
	}
	ws, err := workspaceArg("show", *wsFlag)
	if err != nil {
		return err
	}
	h, err := openHistory(*db)
	if err != nil {
		return err
	}
	defer h.Close()
	a, err := c.loadAllowlist(h, ws, *version)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "allowlist of %s, version %d, approved %s", tabSafe(a.Workspace), a.Version,
		a.CreatedAt.Local().Format("2006-01-02 15:04:05"))
	if a.Note != "" {
		fmt.Fprintf(c.stderr, ": %s", oneline.First(a.Note))
	}
	fmt.Fprintln(c.stderr)
	for _, e := range a.Entries {
		fmt.Fprintln(c.stdout, e)
	}
	return nil
}

// allowlistList: diffgate allowlist list --workspace DIR: every version.
func (c *cli) allowlistList(args []string) error {
	fs, wsFlag, db := allowlistFlags("list")
	if _, err := parseN(fs, args, 0); err != nil {
		return err
	}
	ws, err := workspaceArg("list", *wsFlag)
	if err != nil {
		return err
	}
	h, err := openHistory(*db)
	if err != nil {
		return err
	}
	defer h.Close()
	all, err := h.Allowlists(c.ctx, ws)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		fmt.Fprintf(c.stderr, "diffgate: no approved allowlist for %s\n", ws)
		return nil
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tAPPROVED\tENTRIES\tNOTE")
	for _, a := range all {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", a.Version, a.CreatedAt.Local().Format("2006-01-02 15:04:05"),
			len(a.Entries), oneline.First(a.Note))
	}
	return tw.Flush()
}

// allowlistApprove: diffgate allowlist approve --workspace DIR
// [--allow LIST]... [--allowlist FILE] --note TEXT.
func (c *cli) allowlistApprove(args []string) error {
	fs, wsFlag, db := allowlistFlags("approve")
	var allow listFlag
	fs.Var(&allow, "allow", "comma-separated allowlist `LIST` (repeatable)")
	allowFile := fs.String("allowlist", "", "allowlist `FILE`, one entry per line (- reads standard input)")
	note := fs.String("note", "", "why these entries are fine: `TEXT` (required)")
	if _, err := parseN(fs, args, 0); err != nil {
		return err
	}
	if pipeline.InGatedRun() {
		return usagef("allowlist approve: %v", history.ErrInGatedRun)
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "allow" || f.Name == "allowlist" })
	if !given {
		return usagef("allowlist approve: give the entries with --allow LIST or --allowlist FILE (--allow '' approves an empty list)")
	}
	if *note == "" {
		return usagef("allowlist approve: --note TEXT is required (say why these entries are fine)")
	}
	if *wsFlag != "" {
		if fi, err := os.Stat(*wsFlag); err != nil || !fi.IsDir() {
			return usagef("allowlist approve: workspace %s: not a directory", *wsFlag)
		}
	}
	ws, err := workspaceArg("approve", *wsFlag)
	if err != nil {
		return err
	}
	allowList, err := allowEntries(allow, *allowFile)
	if err != nil {
		return err
	}
	if _, err := policy.Parse(allowList); err != nil {
		return usagef("allowlist approve: %v", err)
	}
	lock, err := c.holdWorkspace("allowlist approve", ws)
	if err != nil {
		return err
	}
	defer lock.Release()
	h, err := openHistory(*db)
	if err != nil {
		return err
	}
	defer h.Close()
	prev, err := h.LatestAllowlist(c.ctx, ws)
	if err != nil {
		return err
	}
	a, err := h.Approve(c.ctx, ws, allowList, *note)
	if err != nil {
		return err
	}
	added, removed := history.DiffAllowlists(prev, a)
	fmt.Fprintf(c.stdout, "approved allowlist version %d for %s: %s (%d added, %d removed)\n",
		a.Version, tabSafe(ws), entries(len(a.Entries)), len(added), len(removed))
	return nil
}

// allowlistDiff: diffgate allowlist diff --workspace DIR A B. Prints "+entry"
// for what B adds to A and "-entry" for what it removes.
func (c *cli) allowlistDiff(args []string) error {
	fs, wsFlag, db := allowlistFlags("diff")
	pos, err := parseN(fs, args, 2)
	if err != nil {
		return err
	}
	va, err := versionArg(pos[0])
	if err != nil {
		return err
	}
	vb, err := versionArg(pos[1])
	if err != nil {
		return err
	}
	ws, err := workspaceArg("diff", *wsFlag)
	if err != nil {
		return err
	}
	h, err := openHistory(*db)
	if err != nil {
		return err
	}
	defer h.Close()
	a, err := c.loadAllowlist(h, ws, va)
	if err != nil {
		return err
	}
	b, err := c.loadAllowlist(h, ws, vb)
	if err != nil {
		return err
	}
	added, removed := history.DiffAllowlists(a, b)
	for _, e := range removed {
		fmt.Fprintln(c.stdout, "-"+e)
	}
	for _, e := range added {
		fmt.Fprintln(c.stdout, "+"+e)
	}
	return nil
}

// allowlistSuggest: diffgate allowlist suggest RUN|last. Prints the fewest
// entries that would allow the run's violations (policy.Suggest, as the
// review's Suggest allowlist button drafts them), one per line; a change a
// ! entry denied cannot be allowed and is named on stderr.
func (c *cli) allowlistSuggest(args []string) error {
	fs := newFlags("allowlist suggest")
	db := fs.String("db", "", "history database `PATH`")
	pos, err := parseN(fs, args, 1)
	if err != nil {
		return err
	}
	run, err := c.loadRun(*db, pos[0])
	if err != nil {
		return err
	}
	for _, ch := range run.Report.Changes {
		if !ch.Allowed && ch.Rule != "" {
			fmt.Fprintf(c.stderr, "diffgate: %s stays a violation: denied by %s\n", tabSafe(ch.Path), quote.Text(ch.Rule))
		}
	}
	for _, e := range policy.Suggest(run.Report.Changes) {
		fmt.Fprintln(c.stdout, e)
	}
	for _, line := range suggestGrants(run.Report) {
		fmt.Fprintln(c.stdout, line)
	}
	return nil
}

// holdWorkspace takes workspace's lock (core/wslock) for a verb that
// writes the history for it, refusing while a gated run holds it: a script
// must not approve its own allowlist, however its process tree looks (a new
// PID namespace hides the gate from pipeline.InGatedRun, never from the lock).
func (c *cli) holdWorkspace(verb, workspace string) (*wslock.Lock, error) {
	lock, err := wslock.Acquire(c.ctx, workspace, 0, c.logger())
	if err != nil {
		return nil, usagef("%s: %v", verb, err)
	}
	return lock, nil
}

// suggestGrants are what allowlist suggest adds for the run's blocked
// actions (pipeline.ContainHints): a profile not yet in the run's allowlist as an
// entry, a flag or a refusal as a comment line ("# ..."), so that the
// output stays an allowlist.
func suggestGrants(rep *report.Report) []string {
	home, _ := os.UserHomeDir()
	have := map[string]bool{}
	for _, e := range rep.Allowlist {
		have[strings.TrimSpace(e)] = true
	}
	// The entries first, then the comments (each in the order of the
	// blocked actions, which the supervisor ranks).
	var entries, comments []string
	for _, h := range pipeline.ContainHints(rep, home) {
		switch {
		case h.Entry != "" && !have[h.Entry]:
			entries = append(entries, h.Entry)
		case h.Entry != "":
			// Already given: the profile did not cover it.
		case h.Flag != "":
			comments = append(comments, quote.Text("# run with "+h.Flag+" (BLOCKED "+h.Example+"): "+h.Text))
		default:
			comments = append(comments, quote.Text("# BLOCKED "+h.Example+": "+h.Text))
		}
	}
	return append(entries, comments...)
}
