package ui

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Flags are the desktop app's command-line flags.
type Flags struct {
	// Screenshot runs the demo (or Script in Workspace, when both are
	// given) through the gate, captures the review view to this PNG file
	// and exits.
	Screenshot string
	// Shot says how --screenshot shows the window.
	Shot ShotFlags
	// Report opens a JSON report in the review view (hidden; handy for
	// looking at reports written by the CLI).
	Report string
	// Workspace and Script preselect the run inputs.
	Workspace, Script string
	// Version prints the version and exits.
	Version bool
}

// ShotFlags are the --screenshot-* flags.
type ShotFlags struct {
	// Width and Height are the window's size in pixels (0: as the app
	// opens it), to check that the smallest supported window shows
	// everything.
	Width, Height int
	// Tab is the tab captured: ShotReview (the review after the run),
	// ShotRun (the Run tab: its containment line and what was enforced)
	// or ShotHistory.
	Tab string
	// Split shows the diff side by side.
	Split bool
	// Select names the change (its path) to show instead of the most
	// telling one.
	Select string
}

// The tabs --screenshot-tab names.
const (
	ShotReview  = "review"
	ShotRun     = "run"
	ShotHistory = "history"
)

// ParseFlags parses the app's arguments. -h prints the usage to out and
// returns flag.ErrHelp; a bad value is one line on out.
func ParseFlags(args []string, out io.Writer) (Flags, error) {
	var f Flags
	var size string
	fs := flag.NewFlagSet("diffgate-app", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&f.Screenshot, "screenshot", "", "run the demo (or --script in --workspace), save a PNG of the review view to `FILE` and exit")
	fs.StringVar(&size, "screenshot-size", "", "with --screenshot: the window's size in pixels, `WxH` (e.g. 1024x700)")
	fs.StringVar(&f.Shot.Tab, "screenshot-tab", ShotReview, "with --screenshot: the `TAB` to capture, review, run or history")
	fs.BoolVar(&f.Shot.Split, "screenshot-split", false, "with --screenshot: show the diff side by side")
	fs.StringVar(&f.Shot.Select, "screenshot-select", "", "with --screenshot: show the change at `PATH` instead of the most telling one")
	fs.StringVar(&f.Report, "report", "", "open a JSON report `FILE` in the review view")
	fs.StringVar(&f.Workspace, "workspace", "", "preselect the workspace `DIR`")
	fs.StringVar(&f.Script, "script", "", "preselect the `SCRIPT` to run")
	fs.BoolVar(&f.Version, "version", false, "print the version and the commit and exit")
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: diffgate-app [--workspace DIR] [--script SCRIPT] [--screenshot FILE [--screenshot-size WxH] [--screenshot-tab TAB] [--screenshot-split] [--screenshot-select PATH]] [--version]")
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
		return f, err // the flag package said what was wrong
	}
	err := checkFlags(fs, &f, size)
	if err != nil {
		fmt.Fprintln(out, "diffgate-app:", err)
	}
	return f, err
}

// checkFlags checks what fs parsed into f; size is --screenshot-size.
func checkFlags(fs *flag.FlagSet, f *Flags, size string) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if err == nil && strings.HasPrefix(fl.Name, "screenshot-") && f.Screenshot == "" {
			err = fmt.Errorf("--%s goes with --screenshot FILE", fl.Name)
		}
	})
	if err != nil {
		return err
	}
	if size != "" {
		if f.Shot.Width, f.Shot.Height, err = parseSize(size); err != nil {
			return fmt.Errorf("--screenshot-size %q: %w", size, err)
		}
	}
	switch f.Shot.Tab {
	case ShotReview, ShotRun, ShotHistory:
	default:
		return fmt.Errorf("--screenshot-tab %q: want review, run or history", f.Shot.Tab)
	}
	return nil
}

// maxShotSide bounds --screenshot-size (a window larger than any screen).
const maxShotSide = 16384

// parseSize parses WxH, each a whole number of pixels from 1 to maxShotSide.
func parseSize(s string) (w, h int, err error) {
	ws, hs, ok := strings.Cut(s, "x")
	if ok {
		w, err = strconv.Atoi(ws)
	}
	if ok && err == nil {
		h, err = strconv.Atoi(hs)
	}
	if !ok || err != nil || w < 1 || h < 1 || w > maxShotSide || h > maxShotSide {
		return 0, 0, fmt.Errorf("want WxH, each from 1 to %d pixels, e.g. 1024x700", maxShotSide)
	}
	return w, h, nil
}

// UsageExitCode is the exit status for a ParseFlags error: 0 after -h, 2
// for bad usage.
func UsageExitCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}
