package ui

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Flags are the desktop app's command-line flags.
type Flags struct {
	// Screenshot runs the demo (or Script in Workspace, when both are
	// given) through the gate, captures the review view to this PNG file
	// and exits.
	Screenshot string
	// Report opens a JSON report in the review view (hidden; handy for
	// looking at reports written by the CLI).
	Report string
	// Workspace and Script preselect the run inputs.
	Workspace, Script string
	// Version prints the version and exits.
	Version bool
}

// ParseFlags parses the app's arguments. -h prints the usage to out and
// returns flag.ErrHelp.
func ParseFlags(args []string, out io.Writer) (Flags, error) {
	var f Flags
	fs := flag.NewFlagSet("diffgate-app", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&f.Screenshot, "screenshot", "", "run the demo (or --script in --workspace), save a PNG of the review view to `FILE` and exit")
	fs.StringVar(&f.Report, "report", "", "open a JSON report `FILE` in the review view")
	fs.StringVar(&f.Workspace, "workspace", "", "preselect the workspace `DIR`")
	fs.StringVar(&f.Script, "script", "", "preselect the `SCRIPT` to run")
	fs.BoolVar(&f.Version, "version", false, "print the version and the commit and exit")
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: diffgate-app [--workspace DIR] [--script SCRIPT] [--screenshot FILE] [--version]")
		fmt.Fprintln(out, "\nThe desktop review app of diffgate: run a script through the filesystem gate and review what it changed.")
		fs.VisitAll(func(fl *flag.Flag) {
			if fl.Name == "report" {
				return // hidden
			}
			name, usage := flag.UnquoteUsage(fl)
			fmt.Fprintf(out, "  --%s %s\n    \t%s\n", fl.Name, name, usage)
		})
	}
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return f, nil
}

// UsageExitCode is the exit status for a ParseFlags error: 0 after -h, 2
// for bad usage.
func UsageExitCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}
