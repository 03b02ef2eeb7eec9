package main

import (
	"github.com/diffgate/diffgate/core/pipeline"

	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// verb is one row of the CLI's verb table: the top-level usage, every
// verb's -h, the "usage: ..." line of a wrong call and the dispatch all
// come from it.
type verb struct {
	// name is the word on the command line.
	name string
	// synopsis is what follows "diffgate NAME" in the usage.
	synopsis string
	// help is a one-line description.
	help string
	// run handles the verb's arguments (nil when subs are given).
	run func(c *cli, args []string) error
	// subs are sub-verbs; the first argument picks one, and when it is
	// absent or a flag, the sub-verb named by def runs (if def is set).
	subs []verb
	def  string
	// notes, when set, returns text printed after the flags of -h.
	notes func() string
	// hidden leaves the verb out of the usage and the man page (a tool
	// for the build, not for users).
	hidden bool
}

// verbs is the table of verbs. A new verb or sub-verb is one row here.
func verbs() []verb {
	return []verb{
		{name: "run", run: (*cli).runVerb,
			synopsis: "--workspace DIR [--allow LIST]... [--allowlist FILE] [--allowlist-from-history] [--timeout DUR] [--report FILE]... [--db PATH | --no-history] [--rehash] [--lock-wait DUR] [--contain auto|on|off] [--net] [--net-allow HOST[:PORT]]... [--env NAME[=VALUE]]... [--writable DIR]... [--deny-read PATH]... [--memory SIZE] [--watch PATH]... [--no-watch] [--stage] [--stage-mechanism auto|overlay|copy] -- SCRIPT [ARG...]",
			help:     "run SCRIPT in DIR through the gate: snapshot, run, snapshot, diff, verdict",
			notes:    func() string { return secretStoresNote() + "\n" + profileTable() }},
		{name: "apply", run: (*cli).applyVerb,
			synopsis: "RUN|last [--only-allowed | --force] [--db PATH]",
			help:     "write a staged run's changes into its workspace (CONFLICT lines and exit 1 if it changed since)"},
		{name: "discard", run: (*cli).discardVerb,
			synopsis: "RUN|last [--db PATH]",
			help:     "remove a staged run's stage: its changes never land"},
		{name: "snapshot", run: (*cli).snapshotVerb,
			synopsis: "DIR -o FILE",
			help:     "write a manifest (JSON) of DIR"},
		{name: "diff", run: (*cli).diffVerb,
			synopsis: "[--allow LIST]... [--allowlist FILE] BEFORE AFTER",
			help:     "compare two manifests (ours or the seed's snapshot.py JSON)"},
		{name: "history", def: "list",
			help: "browse and check the recorded runs",
			subs: []verb{
				{name: "list", run: (*cli).historyList,
					synopsis: "[--workspace DIR] [--verdict pass|fail] [--limit N] [--db PATH]",
					help:     "list recorded runs, newest first (the default)"},
				{name: "show", run: (*cli).historyShow,
					synopsis: "RUN|last [--violations] [--db PATH]",
					help:     "print a recorded run's changes, allowed ones marked (exit 1 if it failed)"},
				{name: "export", run: (*cli).historyExport,
					synopsis: "RUN|last -o FILE [--db PATH]",
					help:     "write a recorded run's report (.json, .html or .md)"},
				{name: "verify", run: (*cli).historyVerify,
					synopsis: "[--db PATH]",
					help:     "check the history's hash chain (exit 1 if broken)"},
				{name: "push", run: (*cli).historyPush,
					synopsis: "--db postgres://... [--from PATH]",
					help:     "send the runs recorded locally while the team store was unreachable"},
			}},
		{name: "allowlist",
			help: "approved allowlist versions of a workspace",
			subs: []verb{
				{name: "show", run: (*cli).allowlistShow,
					synopsis: "--workspace DIR [--version N] [--db PATH]",
					help:     "print an approved version's entries (default: the latest)"},
				{name: "list", run: (*cli).allowlistList,
					synopsis: "--workspace DIR [--db PATH]",
					help:     "list the approved versions"},
				{name: "approve", run: (*cli).allowlistApprove,
					synopsis: "--workspace DIR [--allow LIST]... [--allowlist FILE] --note TEXT [--db PATH]",
					help:     "approve a new version"},
				{name: "diff", run: (*cli).allowlistDiff,
					synopsis: "--workspace DIR A B [--db PATH]",
					help:     "compare two versions: +entry added, -entry removed"},
				{name: "suggest", run: (*cli).allowlistSuggest,
					synopsis: "RUN|last [--db PATH]",
					help:     "print the fewest entries that would allow a recorded run's violations, one per line"},
			}},
		{name: "version", run: (*cli).versionVerb,
			help: "print the version and the commit diffgate was built from (as diffgate --version)"},
		{name: "manpage", run: (*cli).manpageVerb, hidden: true,
			help: "print the man page diffgate(1), in roff, generated from this table (make package)"},
	}
}

// errArgs is returned by a verb called with the wrong arguments: the
// dispatcher turns it into a "usage: diffgate VERB SYNOPSIS" error.
var errArgs = errors.New("wrong arguments")

// helpError is returned by parse when -h was asked for; it carries the
// verb's flags for its usage.
type helpError struct{ fs *flag.FlagSet }

func (*helpError) Error() string { return "help requested" }

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

// dispatch runs the verb path[len(path)-1] (path: the words so far) with args.
func (c *cli) dispatch(path []string, v *verb, args []string) error {
	if v.subs == nil {
		err := v.run(c, args)
		var he *helpError
		switch {
		case errors.As(err, &he):
			writeVerbUsage(c.stdout, path, v, he.fs)
			return nil
		case errors.Is(err, errArgs):
			return usagef("usage: diffgate %s", strings.TrimSpace(strings.Join(path, " ")+" "+v.synopsis))
		}
		return err
	}
	if len(args) > 0 && isHelp(args[0]) {
		writeVerbUsage(c.stdout, path, v, nil)
		return nil
	}
	name := v.def
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "" {
		return usagef("usage: diffgate %s %s ... (see diffgate %s -h)", strings.Join(path, " "), subNames(v.subs, "|"), strings.Join(path, " "))
	}
	for i := range v.subs {
		if v.subs[i].name == name {
			return c.dispatch(append(path, name), &v.subs[i], args)
		}
	}
	return usagef("%s: unknown subcommand %q (want %s)", strings.Join(path, " "), name, subNames(v.subs, ", "))
}

// subNames lists the verbs' names: "a, b or c" with sep ", ", else joined by sep.
func subNames(vs []verb, sep string) string {
	var names []string
	for _, v := range vs {
		if v.hidden {
			continue
		}
		names = append(names, v.name)
	}
	if sep == ", " && len(names) > 1 {
		return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	}
	return strings.Join(names, sep)
}

// synopses appends the usage lines of v and its sub-verbs, each wrapped.
func synopses(b *strings.Builder, path []string, v *verb, withHelp bool) {
	if v.subs != nil {
		for i := range v.subs {
			synopses(b, append(path, v.subs[i].name), &v.subs[i], withHelp)
		}
		return
	}
	head := "  diffgate " + strings.Join(path, " ")
	b.WriteString(wrap(head, v.synopsis, 80))
	if withHelp && v.help != "" {
		b.WriteString("      " + v.help + "\n")
	}
}

// wrap writes head followed by the words of text, wrapping at width with
// continuation lines indented under the text.
func wrap(head, text string, width int) string {
	var b strings.Builder
	indent := strings.Repeat(" ", len(head)+1)
	line := head
	for _, w := range units(text) {
		if len(line)+1+len(w) > width && len(line) > len(indent) {
			b.WriteString(line + "\n")
			line = indent[:len(indent)-1]
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// units splits a synopsis into words, keeping each bracketed group whole.
func units(text string) []string {
	var out []string
	depth, cur := 0, ""
	for _, w := range strings.Fields(text) {
		if cur != "" {
			cur += " "
		}
		cur += w
		depth += strings.Count(w, "[") - strings.Count(w, "]")
		if depth <= 0 {
			out, cur, depth = append(out, cur), "", 0
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// topUsage is the top-level usage, generated from the verb table.
func topUsage() string {
	var b strings.Builder
	b.WriteString("diffgate: a filesystem gate around scripts you did not write\n\nusage:\n")
	for _, v := range verbs() {
		if !v.hidden {
			synopses(&b, []string{v.name}, &v, true)
		}
	}
	b.WriteString("\nexit status: 0 the gate passed, 1 it failed, 2 usage or setup error.\n")
	b.WriteString("diffgate VERB -h prints a verb's usage and flags; diffgate --version the version.\n")
	return b.String()
}

// writeVerbUsage prints a verb's usage, its help line and its flags (or
// its sub-verbs).
func writeVerbUsage(w io.Writer, path []string, v *verb, fs *flag.FlagSet) {
	var b strings.Builder
	b.WriteString("usage:\n")
	synopses(&b, path, v, v.subs != nil)
	b.WriteString("\n" + v.help + "\n")
	for i, f := range flagDocs(fs) {
		if i == 0 {
			b.WriteString("\nflags:\n")
		}
		l := "  " + f.dashed()
		if f.arg != "" {
			l += " " + f.arg
		}
		if len(l) < 24 {
			l += strings.Repeat(" ", 24-len(l))
		} else {
			l += "\n" + strings.Repeat(" ", 24)
		}
		l += f.use
		if f.def != "" {
			l += fmt.Sprintf(" (default %s)", f.def)
		}
		b.WriteString(l + "\n")
	}
	if v.notes != nil {
		b.WriteString("\n" + v.notes())
	}
	io.WriteString(w, b.String())
}

// flagDoc is one flag as -h and the man page show it.
type flagDoc struct{ name, arg, use, def string }

// flagDocs lists fs's flags (none for a nil fs), sorted by name; def is
// empty for a zero default.
func flagDocs(fs *flag.FlagSet) []flagDoc {
	var out []flagDoc
	if fs == nil {
		return nil
	}
	fs.VisitAll(func(f *flag.Flag) {
		arg, use := flag.UnquoteUsage(f)
		d := flagDoc{name: f.Name, arg: arg, use: use}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			d.def = f.DefValue
		}
		out = append(out, d)
	})
	return out
}

// secretStoresNote lists the secret stores a contained script cannot
// read (pipeline.SecretStores()), for run -h.
func secretStoresNote() string {
	var b strings.Builder
	b.WriteString("a contained script cannot read these secret stores \n(and the history database; --deny-read adds more):\n")
	for _, s := range pipeline.SecretStores() {
		fmt.Fprintf(&b, "  %-38s %s\n", s.Name(), s.Why)
	}
	return b.String()
}

// dashed is the flag as the usage lines write it: --name, or -o for a
// one-letter flag.
func (f flagDoc) dashed() string {
	if len(f.name) == 1 {
		return "-" + f.name
	}
	return "--" + f.name
}

// dispatchTop runs the verb named by args[0].
func (c *cli) dispatchTop(args []string) error {
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	if isHelp(args[0]) {
		if len(args) == 1 {
			fmt.Fprint(c.stdout, topUsage())
			return nil
		}
		// diffgate help VERB [SUB]: as diffgate VERB [SUB] -h.
		args = append(append([]string{}, args[1:]...), "-h")
	}
	top := verb{subs: verbs()}
	for i := range top.subs {
		if top.subs[i].name == args[0] {
			return c.dispatch([]string{args[0]}, &top.subs[i], args[1:])
		}
	}
	return usagef("unknown command %q (want %s)", args[0], subNames(top.subs, ", "))
}
