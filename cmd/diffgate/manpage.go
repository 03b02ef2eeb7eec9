package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/diffgate/diffgate/internal/version"
)

// versionVerb: diffgate version (and diffgate --version).
func (c *cli) versionVerb(args []string) error {
	if _, err := parseN(newFlags("version"), args, 0); err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, version.Get().String())
	return nil
}

// manpageVerb: diffgate manpage (hidden) prints diffgate(1) in roff,
// generated from the verb table: the synopses, help lines and flags are
// the ones -h prints. make package installs it as
// /usr/share/man/man1/diffgate.1.gz.
func (c *cli) manpageVerb(args []string) error {
	if _, err := parseN(newFlags("manpage"), args, 0); err != nil {
		return err
	}
	return writeManPage(c.stdout, version.Get().Version)
}

// writeManPage writes the man page. Each leaf verb is asked for its flags
// the way -h asks: its run is called with -h and returns its flag set.
func writeManPage(w io.Writer, ver string) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH DIFFGATE 1 \"\" %s \"User Commands\"\n", roffQuote("diffgate "+ver))
	b.WriteString(".SH NAME\ndiffgate \\- a filesystem gate around scripts you did not write\n")
	b.WriteString(".SH SYNOPSIS\n.nf\n")
	var leaves []leafVerb
	for _, v := range verbs() {
		if !v.hidden {
			leaves = collectLeaves(leaves, []string{v.name}, v)
		}
	}
	for _, l := range leaves {
		b.WriteString(roffLine(strings.TrimRight(wrap("diffgate "+strings.Join(l.path, " "), l.v.synopsis, 78), "\n")) + "\n")
	}
	b.WriteString("diffgate \\-\\-version\n.fi\n")
	b.WriteString(".SH DESCRIPTION\n" + roffText(
		"diffgate runs a script you did not write through a gate: it snapshots the workspace, "+
			"runs the script contained (its writes limited to the workspace, no network, no secrets), "+
			"snapshots again, compares, and fails on every change the allowlist does not allow. "+
			"Each finding is one line on standard output (ADDED, REMOVED, CHANGED, BLOCKED, EXIT, ...); "+
			"the reports (--report FILE: .json, .html, .md) and the history keep the whole run. "+
			"diffgate-app is the desktop review app of the same gate.") + "\n")
	b.WriteString(".SH COMMANDS\n")
	c := &cli{stdout: io.Discard, stderr: io.Discard}
	for _, l := range leaves {
		b.WriteString(".TP\n.B " + roffText("diffgate "+strings.Join(l.path, " ")) + "\n")
		b.WriteString(roffText(l.v.help) + "\n")
		var he *helpError
		if err := l.v.run(c, []string{"-h"}); !errors.As(err, &he) {
			return fmt.Errorf("manpage: diffgate %s -h: %v", strings.Join(l.path, " "), err)
		}
		docs := flagDocs(he.fs)
		if len(docs) > 0 || l.v.notes != nil {
			b.WriteString(".RS\n")
		}
		for _, f := range docs {
			b.WriteString(".TP\n\\fB" + roffText(f.dashed()) + "\\fR")
			if f.arg != "" {
				b.WriteString(" \\fI" + roffText(f.arg) + "\\fR")
			}
			b.WriteString("\n" + roffText(f.use))
			if f.def != "" {
				b.WriteString(" (default " + roffText(f.def) + ")")
			}
			b.WriteString("\n")
		}
		if l.v.notes != nil {
			b.WriteString(".PP\n.nf\n" + roffLine(strings.TrimRight(l.v.notes(), "\n")) + "\n.fi\n")
		}
		if len(docs) > 0 || l.v.notes != nil {
			b.WriteString(".RE\n")
		}
	}
	b.WriteString(".SH EXIT STATUS\n.TP\n0\nthe gate passed\n.TP\n1\nthe gate failed (a violation, a non-zero exit of the script, a timeout, a leftover process)\n" +
		".TP\n2\na usage or setup error, with a one-line reason on standard error\n")
	b.WriteString(".SH ENVIRONMENT\n.TP\n.B DIFFGATE_DB\nthe history database when --db is not given\n")
	b.WriteString(".SH FILES\n.TP\n.I ~/.config/diffgate/history.db\nthe history of runs and approved allowlists (the default --db); removing the package leaves it\n")
	b.WriteString(".SH SEE ALSO\n.B diffgate-app\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type leafVerb struct {
	path []string
	v    verb
}

func collectLeaves(out []leafVerb, path []string, v verb) []leafVerb {
	if v.subs == nil {
		return append(out, leafVerb{append([]string{}, path...), v})
	}
	for _, s := range v.subs {
		if !s.hidden {
			out = collectLeaves(out, append(path, s.name), s)
		}
	}
	return out
}

// roffText escapes text for a roff line: backslashes, hyphens (so that
// flags stay searchable and copyable) and a leading control character.
func roffText(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`, "\n", " ").Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffLine escapes each line of s for a no-fill block.
func roffLine(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = roffText(l)
	}
	return strings.Join(lines, "\n")
}

// roffQuote is a quoted macro argument.
func roffQuote(s string) string {
	return `"` + strings.ReplaceAll(roffText(s), `"`, `\(dq`) + `"`
}
