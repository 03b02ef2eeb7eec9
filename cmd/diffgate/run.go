package main

import (
	"errors"
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
	"github.com/diffgate/diffgate/internal/oneline"
	"github.com/diffgate/diffgate/internal/quote"
)

// runVerb: diffgate run --workspace DIR [...] -- SCRIPT [ARG...].
func (c *cli) runVerb(args []string) error {
	fs := newFlags("run")
	ws := fs.String("workspace", "", "the `DIR` the script runs in and the gate watches")
	var allow, reports listFlag
	fs.Var(&allow, "allow", "comma-separated allowlist `LIST` (repeatable)")
	allowFile := fs.String("allowlist", "", "allowlist `FILE`, one entry per line (- reads standard input)")
	fromHistory := fs.Bool("allowlist-from-history", false, "use the workspace's latest approved allowlist")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit for the script (`DUR`); 0 means none")
	fs.Var(&reports, "report", "write a report to `FILE` (.json, .html, .md; repeatable)")
	dbPath := fs.String("db", "", "history database `PATH`")
	noHistory := fs.Bool("no-history", false, "do not record the run")
	rehash := fs.Bool("rehash", false, "hash every file, reusing no cached hash")
	lockWait := fs.Duration("lock-wait", 0, "wait up to `DUR` for another run on the workspace to finish; 0 fails at once")
	staged := fs.Bool("stage", false, "run against a stage of the workspace: nothing lands in it until diffgate apply")
	stageMech := fs.String("stage-mechanism", "", "stage by `MECH`: auto (the default: an overlay where the kernel allows one, else a copy), overlay or copy; implies --stage")
	containMode := fs.String("contain", "auto", "containment: `auto` (what the platform supports), on (refuse to run without every layer) or off")
	netOn := fs.Bool("net", false, "leave the network on for a contained script")
	var netAllow listFlag
	fs.Var(&netAllow, "net-allow", "let a contained script reach `HOST[:PORT]` (*.DOMAIN: its subdomains; !HOST denies) through the gate's recording proxy (repeatable)")
	var envs, writable, denyRead listFlag
	fs.Var(&envs, "env", "pass the variable `NAME` on to a contained script, or set NAME=VALUE (repeatable)")
	fs.Var(&writable, "writable", "let a contained script write below `DIR` too (repeatable)")
	fs.Var(&denyRead, "deny-read", "keep a contained script from reading `PATH` (repeatable)")
	memory := fs.String("memory", "", "cap the memory of a contained script's processes at `SIZE` (bytes, or with K, M, G: 512M)")
	var watched listFlag
	fs.Var(&watched, "watch", "also watch `PATH` outside the workspace (stat only, before and after): a change there fails the run (repeatable)")
	noWatch := fs.Bool("no-watch", false, "do not watch the default paths outside the workspace (shell startup files, ~/.ssh/authorized_keys, the crontab, autostart, systemd user units)")
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
	switch *stageMech {
	case "":
	case string(pipeline.StageAuto), string(pipeline.StageOverlay), string(pipeline.StageCopy):
		*staged = true
	default:
		return usagef("run: --stage-mechanism %q: want auto, overlay or copy", *stageMech)
	}
	if *noHistory && *staged {
		return usagef("run: --stage needs the history (diffgate apply and discard read the run's record); drop --no-history")
	}
	// Before the script runs: a report that cannot be written later would
	// lose the run's outcome. Its directory is held open from now on, so
	// that the script cannot redirect it (a symlink in its place).
	var targets []*reportTarget
	defer func() {
		for _, t := range targets {
			t.close()
		}
	}()
	for _, r := range reports {
		t, err := openReport(r)
		if err != nil {
			return usagef("%v", err)
		}
		targets = append(targets, t)
	}
	if st, err := os.Stat(*ws); err != nil || !st.IsDir() {
		if err == nil {
			return usagef("workspace %s: not a directory", quote.Path(*ws))
		}
		return usagef("workspace %s: %s", quote.Path(*ws), oneline.Reason(err))
	}
	allowList, err := allowEntries(allow, *allowFile)
	if err != nil {
		return err
	}
	mode, err := pipeline.ParseContainMode(*containMode)
	if err != nil {
		return usagef("run: %v", err)
	}
	if err := pipeline.CheckContainEnv(envs); err != nil {
		return usagef("run: %v", err)
	}
	if err := checkWritable(*ws, writable); err != nil {
		return err
	}
	if _, err := netproxy.ParseRules(netAllow); err != nil {
		return usagef("run: %v", err)
	}
	pol := pipeline.ContainPolicy{Mode: mode, Net: *netOn, NetAllow: netAllow, Env: envs, Writable: writable, DenyRead: denyRead}
	containTestHooks(&pol)
	if *memory != "" {
		n, ok := bytesize.Parse(*memory)
		if !ok || n < 1<<20 {
			return usagef("run: --memory %q: want a size of at least 1M (bytes, or with K, M, G: 512M)", *memory)
		}
		pol.Memory = n
	}
	cfg := pipeline.Config{Workspace: *ws, Script: rest[0], Args: rest[1:], Allow: allowList, Timeout: *timeout, Rehash: *rehash, LockWait: *lockWait, Log: c.logger(), Contain: pol,
		Watch: watched, NoDefaultWatch: *noWatch, Granularity: granularityTestHook(), NetHosts: netHostsTestHook()}
	opts := pipeline.Options{FromHistory: *fromHistory, Stage: *staged, StageMechanism: pipeline.StageMechanism(*stageMech)}
	if !*noHistory {
		if opts.HistoryPath = *dbPath; opts.HistoryPath == "" {
			if opts.HistoryPath, err = history.DefaultPath(); err != nil {
				return usagef("%v", err)
			}
		}
	}

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
	progress := cfg.Progress != nil
	opts.Config = cfg
	// The pipeline checks the run (the workspace, the history database's
	// place and writability) and hides the database from the script.
	plan, err := pipeline.Preflight(opts)
	if err != nil {
		return usagef("%v", err)
	}
	defer plan.Close()
	res, err := pipeline.Run(c.ctx, plan)
	if progress {
		fmt.Fprint(c.stderr, "\r\x1b[K")
	}
	var held *wslock.HeldError
	if errors.As(err, &held) && *lockWait == 0 {
		return usagef("%v (--lock-wait DUR waits for it)", err)
	}
	if errors.Is(err, pipeline.ErrNotExecutable) {
		return err
	}
	if err != nil {
		return usagef("%v", err)
	}
	rep := res.Report
	for _, line := range rep.Lines() {
		fmt.Fprintln(c.stdout, line)
	}
	lines := append([]string{containSummary(rep.Containment)}, grantLines(rep.Containment)...)
	if err := appendStepSummary(rep); err != nil {
		// The verdict stands: say so above the summary.
		lines = append(lines, quote.Text(truncate("diffgate: "+err.Error()+" (the verdict stands)", 300)))
	}
	if a := rep.AllowlistApproved; a != nil {
		lines = append([]string{truncate(a.Line(), 300)}, lines...)
	}
	for _, line := range append(lines, quote.Text(rep.Containment.NotObservable()), rep.BlockedDroppedNote(), watchSummary(rep.Watch), quote.Text(truncate(rep.NetworkSummary(), 300))) {
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
		if *dbPath != "" {
			db = " --db " + quoteArg(*dbPath)
		}
		fmt.Fprintf(c.stderr, "staged as run %d: diffgate apply %d%s | diffgate discard %d%s\n", res.RunID, res.RunID, db, res.RunID, db)
	}
	if res.Offline != "" && res.RunID > 0 {
		fmt.Fprintf(c.stderr, "diffgate: team store %s unreachable: run recorded locally as run %d in %s; send it with: diffgate history push --db %s\n",
			history.Redact(res.Offline), res.RunID, plan.History().Path(), quoteArg(history.Redact(res.Offline)))
	}
	fmt.Fprintln(c.stderr, summary(rep))
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
		line = fmt.Sprintf("PASS: %s, all allowed", report.Plural(n, "change"))
	default:
		line = "FAIL: " + strings.Join(rep.Reasons, ", ")
		if n > 0 {
			line += fmt.Sprintf(" (%s, %d allowed)", report.Plural(n, "change"), allowed)
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
