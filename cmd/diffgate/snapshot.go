package main

import (
	"fmt"
	"io"
	"os"

	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/quote"
)

// snapshotVerb: diffgate snapshot DIR -o FILE.
func (c *cli) snapshotVerb(args []string) error {
	fs := newFlags("snapshot")
	out := fs.String("o", "", "write the manifest to `FILE`")
	pos, err := parseN(fs, args, 1)
	if err != nil {
		return err
	}
	if *out == "" {
		return errArgs
	}
	m, err := snapshot.Take(c.ctx, pos[0], snapshot.Options{Progress: c.progress("snapshot"), NoMappedScan: true})
	if err != nil {
		return err
	}
	if err := m.WriteFile(*out); err != nil {
		return usagef("write manifest: %v", err)
	}
	for _, e := range m.Errors() {
		fmt.Fprintf(c.stderr, "diffgate: warning: %s: %s\n", quote.Path(e.Path), quote.Text(e.Err))
	}
	return nil
}

// diffVerb: diffgate diff [--allow LIST]... BEFORE AFTER.
func (c *cli) diffVerb(args []string) error {
	fs := newFlags("diff")
	var allow listFlag
	fs.Var(&allow, "allow", "comma-separated allowlist `LIST` (repeatable)")
	allowFile := fs.String("allowlist", "", "allowlist `FILE`, one entry per line (- reads standard input)")
	pos, err := parseN(fs, args, 2)
	if err != nil {
		return err
	}
	entries, err := allowEntries(allow, *allowFile)
	if err != nil {
		return err
	}
	pol, err := policy.Parse(entries)
	if err != nil {
		return usagef("%v", err)
	}
	before, err := snapshot.ReadFile(pos[0])
	if err != nil {
		return usagef("%v", err)
	}
	after, err := snapshot.ReadFile(pos[1])
	if err != nil {
		return usagef("%v", err)
	}
	r := report.Compare(before, after, pol, entries)
	for i := range r.Changes {
		if !r.Changes[i].Allowed {
			fmt.Fprintln(c.stdout, report.ChangeLine(&r.Changes[i]))
		}
	}
	for _, line := range report.UnreadableLines(r.Unreadable) {
		fmt.Fprintln(c.stdout, line)
	}
	if r.Verdict != report.Pass {
		return errFailed
	}
	return nil
}

// allowEntries collects --allow lists and an --allowlist file.
// stdin is what --allowlist - reads (a variable for the tests).
var stdin io.Reader = os.Stdin

func allowEntries(lists []string, file string) ([]string, error) {
	var entries []string
	for _, l := range lists {
		entries = append(entries, policy.SplitList(l)...)
	}
	if file != "" {
		// "-" is standard input.
		var r io.Reader = stdin
		if file != "-" {
			f, err := os.Open(file)
			if err != nil {
				return nil, usagef("allowlist: %v", err)
			}
			defer f.Close()
			r = f
		}
		more, err := policy.ReadEntries(r)
		if err != nil {
			return nil, usagef("allowlist %s: %v", quote.Path(file), err)
		}
		entries = append(entries, more...)
	}
	return entries, nil
}
