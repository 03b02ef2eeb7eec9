package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/oneline"
	"github.com/diffgate/diffgate/internal/quote"
)

// grantLines are the stderr lines beside the containment line: what the
// run was granted and the variables it dropped (names only).
func grantLines(c *report.Containment) []string {
	var out []string
	if c == nil {
		return nil
	}
	if g := c.GrantsLine(); g != "" {
		if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
			g = strings.ReplaceAll(g, strings.TrimSuffix(home, "/")+"/", "~/")
		}
		out = append(out, quote.Text(truncate(g, 400)))
	}
	if len(c.DroppedEnv) > 0 {
		out = append(out, quote.Text(truncate("env: dropped "+strings.Join(c.DroppedEnv, ", ")+" (pass one on with --env NAME)", 400)))
	}
	return out
}

// hintLines are the fixes for the run's blocked actions, one per kind, as
// printed under the summary.
func hintLines(rep *report.Report) []string {
	home, _ := os.UserHomeDir()
	var out []string
	for _, h := range pipeline.ContainHints(rep, home) {
		out = append(out, quote.Text(truncate("hint: "+h.Text+" (BLOCKED "+h.Example+")", 300)))
	}
	return out
}

// checkWritable refuses a --writable that names nothing or starts with a
// literal "~" (the shell does not expand it after "="). A relative path is
// relative to the workspace.
func checkWritable(ws string, writable []string) error {
	for _, w := range writable {
		if strings.HasPrefix(w, "~") {
			return usagef("run: --writable %s: a literal ~ (the shell does not expand it after =): write $HOME/%s or --writable ~/%s", quote.Path(w),
				strings.TrimPrefix(strings.TrimPrefix(w, "~"), "/"), strings.TrimPrefix(strings.TrimPrefix(w, "~"), "/"))
		}
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		if _, err := os.Stat(p); err != nil {
			return usagef("run: --writable %s: %s", quote.Path(w), oneline.Reason(err))
		}
	}
	return nil
}

// profileTable is the profiles' table for `diffgate run -h`.
func profileTable() string {
	var b strings.Builder
	b.WriteString("Profiles (--allow preset:NAME also gives the tool, when contained):\n")
	for _, p := range pipeline.Profiles() {
		var caches []string
		for _, c := range p.Caches {
			caches = append(caches, c.Env)
		}
		fmt.Fprintf(&b, "  preset:%s: private cache %s; sets %s; passes %s; hosts %s\n", p.Name, strings.Join(caches, ", "),
			orNone(p.Set), orNone(p.Pass), orNone(p.Hosts))
	}
	return b.String()
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}
