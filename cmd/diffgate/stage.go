package main

import (
	"errors"
	"fmt"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// applyVerb: diffgate apply RUN|last [--only-allowed | --force] [--db PATH].
// A conflict prints one CONFLICT line per path on stdout and exits 1 with
// nothing applied; so does a run that failed its gate, without
// --only-allowed or --force (one line on stderr); a run already applied or
// discarded exits 2.
func (c *cli) applyVerb(args []string) error {
	fs := newFlags("apply")
	db := fs.String("db", "", "history database `PATH`")
	onlyAllowed := fs.Bool("only-allowed", false, "apply only the changes the run's allowlist allowed")
	force := fs.Bool("force", false, "apply every change of a run that failed its gate (recorded as forced)")
	pos, err := parseN(fs, args, 1)
	if err != nil {
		return err
	}
	if *onlyAllowed && *force {
		return usagef("apply: --only-allowed and --force exclude each other")
	}
	h, id, err := c.openStaged("apply", *db, pos[0])
	if err != nil {
		return err
	}
	defer h.Close()
	res, err := pipeline.Apply(c.ctx, h, id, pipeline.ApplyOptions{OnlyAllowed: *onlyAllowed, Force: *force, AfterOp: applyTestHook()})
	if errors.Is(err, pipeline.ErrFailedRun) {
		fmt.Fprintf(c.stderr, "diffgate: apply: %v\n", err)
		return errFailed
	}
	var ce *pipeline.ConflictError
	if errors.As(err, &ce) {
		for _, cf := range ce.Conflicts {
			fmt.Fprintf(c.stdout, "CONFLICT %s\n", quote.Path(cf.Path))
		}
		fmt.Fprintf(c.stderr, "diffgate: apply: run %d: %s changed in the workspace since the run; nothing applied\n", id, count.Of(len(ce.Conflicts), "path"))
		return errFailed
	}
	if err != nil {
		return usagef("apply: %v", err)
	}
	resumed := ""
	if res.Resumed {
		resumed = " (resumed an interrupted apply)"
	}
	for _, p := range res.Held {
		fmt.Fprintf(c.stderr, "diffgate: apply: held back %s: a change below it was not chosen\n", quote.Path(p))
	}
	fmt.Fprintf(c.stderr, "diffgate: applied %s of run %d (%s)%s: run %s\n", count.Of(len(res.Paths), "change"), id, res.Decision, resumed, res.State)
	return nil
}

// discardVerb: diffgate discard RUN|last [--db PATH].
func (c *cli) discardVerb(args []string) error {
	fs := newFlags("discard")
	db := fs.String("db", "", "history database `PATH`")
	pos, err := parseN(fs, args, 1)
	if err != nil {
		return err
	}
	h, id, err := c.openStaged("discard", *db, pos[0])
	if err != nil {
		return err
	}
	defer h.Close()
	// Not while a gated run holds the run's workspace: its script must
	// not decide its own stages (apply takes the same lock).
	if r, err := h.Get(c.ctx, id); err == nil && r.Report != nil && r.Report.Workspace != "" {
		lock, err := c.holdWorkspace("discard", r.Report.Workspace)
		if err != nil {
			return err
		}
		defer lock.Release()
	}
	half, err := h.Applying(c.ctx, id)
	if err != nil {
		return usagef("discard: %v", err)
	}
	if err := pipeline.Discard(c.ctx, h, id, ""); err != nil {
		return usagef("discard: %v", err)
	}
	if half != nil {
		fmt.Fprintf(c.stderr, "diffgate: discarded the stage of run %d; its interrupted apply left the workspace half-applied (some of %s written)\n", id, count.Of(len(half.Paths), "change"))
		return nil
	}
	fmt.Fprintf(c.stderr, "diffgate: discarded the stage of run %d\n", id)
	return nil
}

// openStaged opens the history and resolves RUN for apply and discard,
// which a gated script must not run (they write the workspace and the
// history).
func (c *cli) openStaged(verb, db, arg string) (*history.DB, int64, error) {
	if pipeline.InGatedRun() {
		return nil, 0, usagef("%s: %v", verb, history.ErrInGatedRun)
	}
	h, err := openHistory(db)
	if err != nil {
		return nil, 0, err
	}
	id, err := c.runArg(h, arg)
	if err != nil {
		h.Close()
		return nil, 0, err
	}
	return h, id, nil
}
