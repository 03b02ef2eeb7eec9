package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/netproxy"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/wslock"
	"github.com/diffgate/diffgate/internal/bytesize"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/oneline"
	"github.com/diffgate/diffgate/internal/quote"
)

// runVerb: diffgate run --workspace DIR [...] -- SCRIPT [ARG...].
func (c *cli) runVerb(args []string) error {
	f, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	// Before the script runs: a report that cannot be written later would
	// lose the run's outcome. Its directory is held open from now on, so
	// that the script cannot redirect it (a symlink in its place).
	targets, err := openReports(f.reports)
	defer closeReports(targets)
	if err != nil {
		return err
	}
	opts, err := c.runOptions(f)
	if err != nil {
		return err
	}
	// The pipeline checks the run (the workspace, the history database's
	// place and writability) and hides the database from the script.
	plan, err := pipeline.Preflight(opts)
	if err != nil {
		return usagef("%v", err)
	}
	defer plan.Close()
	res, err := c.runPlan(plan, opts.Config.Progress != nil, f.lockWait)
	if err != nil {
		return err
	}
	c.printRun(res, plan, f.dbPath)
	return runExit(res, targets)
}

// runFlags holds the run verb's flags and the script with its arguments.
type runFlags struct {
	ws, allowFile, dbPath, stageMech, containMode, memory       string
	fromHistory, noHistory, rehash, staged, netOn, noWatch      bool
	timeout, lockWait                                           time.Duration
	allow, reports, netAllow, envs, writable, denyRead, watched listFlag
	script                                                      []string
}

// parseRunFlags parses the run verb's arguments and checks the flags
// against each other.
func parseRunFlags(args []string) (*runFlags, error) {
	f := &runFlags{}
	_, rest, err := parse(f.flagSet(), args, true)
	if err != nil {
		return nil, err
	}
	f.script = rest
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// flagSet defines the run verb's flags, bound to f.
func (f *runFlags) flagSet() *flag.FlagSet {
	fs := newFlags("run")
	fs.StringVar(&f.ws, "workspace", "", "the `DIR` the script runs in and the gate watches")
	fs.Var(&f.allow, "allow", "comma-separated allowlist `LIST` (repeatable)")
	fs.StringVar(&f.allowFile, "allowlist", "", "allowlist `FILE`, one entry per line (- reads standard input)")
	fs.BoolVar(&f.fromHistory, "allowlist-from-history", false, "use the workspace's latest approved allowlist")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "limit for the script (`DUR`); 0 means none")
	fs.Var(&f.reports, "report", "write a report to `FILE` (.json, .html, .md; repeatable)")
	fs.StringVar(&f.dbPath, "db", "", "history database `PATH`")
	fs.BoolVar(&f.noHistory, "no-history", false, "do not record the run")
	fs.BoolVar(&f.rehash, "rehash", false, "hash every file, reusing no cached hash")
	fs.DurationVar(&f.lockWait, "lock-wait", 0, "wait up to `DUR` for another run on the workspace to finish; 0 fails at once")
	fs.BoolVar(&f.staged, "stage", false, "run against a stage of the workspace: nothing lands in it until diffgate apply")
	fs.StringVar(&f.stageMech, "stage-mechanism", "", "stage by `MECH`: auto (the default: an overlay where the kernel allows one, else a copy), overlay or copy; implies --stage")
	fs.StringVar(&f.containMode, "contain", "auto", "containment: `auto` (what the platform supports), on (refuse to run without every layer) or off")
	fs.BoolVar(&f.netOn, "net", false, "leave the network on for a contained script")
	fs.Var(&f.netAllow, "net-allow", "let a contained script reach `HOST[:PORT]` (*.DOMAIN: its subdomains; !HOST denies) through the gate's recording proxy (repeatable)")
	fs.Var(&f.envs, "env", "pass the variable `NAME` on to a contained script, or set NAME=VALUE (repeatable)")
	fs.Var(&f.writable, "writable", "let a contained script write below `DIR` too (repeatable)")
	fs.Var(&f.denyRead, "deny-read", "keep a contained script from reading `PATH` (repeatable)")
	fs.StringVar(&f.memory, "memory", "", "cap the memory of a contained script's processes at `SIZE` (bytes, or with K, M, G: 512M)")
	fs.Var(&f.watched, "watch", "also watch `PATH` outside the workspace (stat only, before and after): a change there fails the run (repeatable)")
	fs.BoolVar(&f.noWatch, "no-watch", false, "do not watch the default paths outside the workspace (shell startup files, ~/.ssh/authorized_keys, the crontab, autostart, systemd user units)")
	return fs
}

// check checks the flags against each other; --stage-mechanism sets staged.
func (f *runFlags) check() error {
	if f.ws == "" {
		return usagef("run: --workspace DIR is required")
	}
	if len(f.script) == 0 {
		return usagef("run: no script given (diffgate run --workspace DIR -- SCRIPT [ARG...])")
	}
	if f.timeout < 0 {
		return usagef("run: --timeout must not be negative")
	}
	if f.noHistory && (f.dbPath != "" || f.fromHistory) {
		return usagef("run: --no-history excludes --db and --allowlist-from-history")
	}
	switch f.stageMech {
	case "":
	case string(pipeline.StageAuto), string(pipeline.StageOverlay), string(pipeline.StageCopy):
		f.staged = true
	default:
		return usagef("run: --stage-mechanism %q: want auto, overlay or copy", f.stageMech)
	}
	if f.noHistory && f.staged {
		return usagef("run: --stage needs the history (diffgate apply and discard read the run's record); drop --no-history")
	}
	return nil
}

// openReports opens every --report target; on an error it returns those
// opened so far, for closeReports.
func openReports(reports []string) ([]*reportTarget, error) {
	var targets []*reportTarget
	for _, r := range reports {
		t, err := openReport(r)
		if err != nil {
			return targets, usagef("%v", err)
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// closeReports closes the report targets.
func closeReports(targets []*reportTarget) {
	for _, t := range targets {
		t.close()
	}
}

// runOptions checks the workspace and the containment flags and builds
// the pipeline's options from the flags.
func (c *cli) runOptions(f *runFlags) (pipeline.Options, error) {
	if st, err := os.Stat(f.ws); err != nil || !st.IsDir() {
		if err == nil {
			return pipeline.Options{}, usagef("workspace %s: not a directory", quote.Path(f.ws))
		}
		return pipeline.Options{}, usagef("workspace %s: %s", quote.Path(f.ws), oneline.Reason(err))
	}
	allowList, err := allowEntries(f.allow, f.allowFile)
	if err != nil {
		return pipeline.Options{}, err
	}
	pol, err := f.containPolicy()
	if err != nil {
		return pipeline.Options{}, err
	}
	cfg := pipeline.Config{Workspace: f.ws, Script: f.script[0], Args: f.script[1:], Allow: allowList, Timeout: f.timeout, Rehash: f.rehash, LockWait: f.lockWait, Log: c.logger(), Contain: pol,
		Watch: f.watched, NoDefaultWatch: f.noWatch, Granularity: granularityTestHook(), NetHosts: netHostsTestHook()}
	opts := pipeline.Options{FromHistory: f.fromHistory, Stage: f.staged, StageMechanism: pipeline.StageMechanism(f.stageMech)}
	if !f.noHistory {
		if opts.HistoryPath = f.dbPath; opts.HistoryPath == "" {
			if opts.HistoryPath, err = history.DefaultPath(); err != nil {
				return pipeline.Options{}, usagef("%v", err)
			}
		}
	}
	c.runOutput(&cfg)
	opts.Config = cfg
	return opts, nil
}

// containPolicy checks the containment flags and builds the policy.
func (f *runFlags) containPolicy() (pipeline.ContainPolicy, error) {
	mode, err := pipeline.ParseContainMode(f.containMode)
	if err != nil {
		return pipeline.ContainPolicy{}, usagef("run: %v", err)
	}
	if err := pipeline.CheckContainEnv(f.envs); err != nil {
		return pipeline.ContainPolicy{}, usagef("run: %v", err)
	}
	if err := checkWritable(f.ws, f.writable); err != nil {
		return pipeline.ContainPolicy{}, err
	}
	if _, err := netproxy.ParseRules(f.netAllow); err != nil {
		return pipeline.ContainPolicy{}, usagef("run: %v", err)
	}
	pol := pipeline.ContainPolicy{Mode: mode, Net: f.netOn, NetAllow: f.netAllow, Env: f.envs, Writable: f.writable, DenyRead: f.denyRead}
	containTestHooks(&pol)
	if f.memory != "" {
		n, ok := bytesize.Parse(f.memory)
		if !ok || n < 1<<20 {
			return pipeline.ContainPolicy{}, usagef("run: --memory %q: want a size of at least 1M (bytes, or with K, M, G: 512M)", f.memory)
		}
		pol.Memory = n
	}
	return pol, nil
}

// runOutput sends the script's output to stderr and, on a terminal, the
// snapshots' progress; one lock keeps their writes apart.
func (c *cli) runOutput(cfg *pipeline.Config) {
	var mu sync.Mutex
	cfg.Output = func(_ pipeline.Stream, p []byte) {
		mu.Lock()
		c.stderr.Write(p)
		mu.Unlock()
	}
	if draw := c.progress("snapshot"); draw != nil {
		cfg.Progress = func(p pipeline.Progress) {
			if p.Phase == pipeline.PhaseBefore || p.Phase == pipeline.PhaseAfter {
				mu.Lock()
				fmt.Fprintf(c.stderr, "\r%s: %s, %.1f MB\x1b[K", p.Phase, entries(p.Entries), float64(p.Bytes)/1e6)
				mu.Unlock()
			}
		}
	}
}

// runPlan runs the preflighted plan, clears the progress line and turns
// the pipeline's error into the CLI's.
func (c *cli) runPlan(plan pipeline.Plan, progress bool, lockWait time.Duration) (*pipeline.Result, error) {
	res, err := pipeline.Run(c.ctx, plan)
	if progress {
		fmt.Fprint(c.stderr, "\r\x1b[K")
	}
	var held *wslock.HeldError
	if errors.As(err, &held) && lockWait == 0 {
		return nil, usagef("%v (--lock-wait DUR waits for it)", err)
	}
	if errors.Is(err, pipeline.ErrNotExecutable) {
		return nil, err
	}
	if err != nil {
		return nil, usagef("%v", err)
	}
	return res, nil
}

// printRun prints the report's lines on stdout and the notes, hints and
// the summary (the last line, the contract) on stderr.
func (c *cli) printRun(res *pipeline.Result, plan pipeline.Plan, dbPath string) {
	rep := res.Report
	for _, line := range rep.Lines() {
		fmt.Fprintln(c.stdout, line)
	}
	for _, line := range runNotes(rep) {
		if line != "" {
			fmt.Fprintln(c.stderr, line)
		}
	}
	// The hints just above the summary, which stays the last line.
	for _, line := range hintLines(rep) {
		fmt.Fprintln(c.stderr, line)
	}
	if n := rep.Stage.RunAtNote(); n != "" {
		fmt.Fprintln(c.stderr, quote.Text(truncate("diffgate: stage: "+n, 300)))
	}
	if rep.Stage != nil && res.RunID > 0 {
		// Above the summary, which stays the last line (the contract).
		db := ""
		if dbPath != "" {
			db = " --db " + quoteArg(dbPath)
		}
		fmt.Fprintf(c.stderr, "staged as run %d: diffgate apply %d%s | diffgate discard %d%s\n", res.RunID, res.RunID, db, res.RunID, db)
	}
	if res.Offline != "" && res.RunID > 0 {
		fmt.Fprintf(c.stderr, "diffgate: team store %s unreachable: run recorded locally as run %d in %s; send it with: diffgate history push --db %s\n",
			history.Redact(res.Offline), res.RunID, plan.History().Path(), quoteArg(history.Redact(res.Offline)))
	}
	fmt.Fprintln(c.stderr, summary(rep))
}

// runNotes are the stderr lines about the run before its hints: the
// approved allowlist, containment and grants, a step summary that could
// not be written, what was not observable, blocked calls, watched paths
// and the network; empty ones are not printed.
func runNotes(rep *report.Report) []string {
	lines := append([]string{containSummary(rep.Containment)}, grantLines(rep.Containment)...)
	if err := appendStepSummary(rep); err != nil {
		// The verdict stands: say so above the summary.
		lines = append(lines, quote.Text(truncate("diffgate: "+err.Error()+" (the verdict stands)", 300)))
	}
	if a := rep.AllowlistApproved; a != nil {
		lines = append([]string{truncate(a.Line(), 300)}, lines...)
	}
	return append(lines, quote.Text(rep.Containment.NotObservable()), rep.BlockedDroppedNote(), watchSummary(rep.Watch), quote.Text(truncate(rep.NetworkSummary(), 300)))
}

// runExit writes the reports and turns the run into the verb's error: a
// lost report or record is a setup error, else a failed verdict errFailed.
func runExit(res *pipeline.Result, targets []*reportTarget) error {
	rep := res.Report
	var problems []error
	for _, t := range targets {
		if err := t.write(rep); err != nil {
			problems = append(problems, err)
		}
	}
	if res.RecordErr != nil {
		problems = append(problems, res.RecordErr)
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

// summary is the run's verdict in one bounded line for stderr, e.g.
// "PASS: 746 changes, all allowed (node_modules/ 740, package-lock.json 6)"
// or "FAIL: 1 unexpected change, script exited 3 (12 changes, 11 allowed)".
func summary(rep *report.Report) string {
	const maxGroups, maxRule, maxLine = 4, 40, 200
	n, allowed := len(rep.Changes), 0
	byRule := map[string]int{}
	for i := range rep.Changes {
		if c := &rep.Changes[i]; c.Allowed {
			allowed++
			byRule[summaryGroup(c.Rule)]++
		}
	}
	var line string
	switch {
	case rep.Verdict == report.Pass && n == 0:
		return "PASS: no changes"
	case rep.Verdict == report.Pass:
		line = fmt.Sprintf("PASS: %s, all allowed", count.Of(n, "change"))
	default:
		line = "FAIL: " + strings.Join(rep.Reasons, ", ")
		if n > 0 {
			line += fmt.Sprintf(" (%s, %d allowed)", count.Of(n, "change"), allowed)
		}
		return quote.Text(truncate(line, maxLine))
	}
	rules := make([]string, 0, len(byRule))
	for r := range byRule {
		rules = append(rules, r)
	}
	sort.Slice(rules, func(i, j int) bool {
		if byRule[rules[i]] != byRule[rules[j]] {
			return byRule[rules[i]] > byRule[rules[j]]
		}
		return rules[i] < rules[j]
	})
	var groups []string
	for i, r := range rules {
		if i == maxGroups {
			groups = append(groups, fmt.Sprintf("+%d more", len(rules)-i))
			break
		}
		groups = append(groups, fmt.Sprintf("%s %d", truncate(quote.Path(r), maxRule), byRule[r]))
	}
	return quote.Text(truncate(line+" ("+strings.Join(groups, ", ")+")", maxLine))
}

// summaryGroup is the entry a change is counted under in the summary: the
// preset itself for an entry a preset expanded to ("x (preset:node)").
func summaryGroup(rule string) string {
	if i := strings.LastIndex(rule, " (preset:"); i >= 0 && strings.HasSuffix(rule, ")") {
		return rule[i+len(" (") : len(rule)-1]
	}
	return rule
}

// truncate bounds s to max bytes (on a rune boundary), marking a cut with "…".
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// containSummary is the containment line of the stderr summary (see
// report.Containment.Summary), printable and bounded.
func containSummary(c *report.Containment) string {
	if c == nil {
		return ""
	}
	return quote.Text(truncate(c.Summary(), 300))
}

// watchSummary is the watch's line on stderr (see report.Watch.Summary),
// printable and bounded.
func watchSummary(w *report.Watch) string {
	if w == nil {
		return ""
	}
	return quote.Text(truncate(w.Summary(), 300))
}

// appendStepSummary appends the run's Markdown report to the file named by
// GITHUB_STEP_SUMMARY, when it is set (a GitHub Actions job step: the
// report shows on the run's summary page).
func appendStepSummary(rep *report.Report) error {
	path := os.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %v", err)
	}
	err = rep.WriteMarkdown(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY %s: %v", quote.Path(path), err)
	}
	return nil
}
