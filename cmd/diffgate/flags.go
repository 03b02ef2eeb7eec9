package main

import (
	"errors"
	"flag"
	"io"
	"strings"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("diffgate "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseN parses a verb's flags and wants exactly n positional arguments,
// those after "--" included; any other count is errArgs.
func parseN(fs *flag.FlagSet, args []string, n int) ([]string, error) {
	pos, rest, err := parse(fs, args, false)
	if err != nil {
		return nil, err
	}
	if pos = append(pos, rest...); len(pos) != n {
		return nil, errArgs
	}
	return pos, nil
}

// parse parses flags mixed with positional arguments. The first "--" ends
// the flags: what follows is returned as rest. With stopAtPositional, the
// first positional argument also ends the flags (it and what follows go to
// rest), so a script's own options are never taken for the gate's.
func parse(fs *flag.FlagSet, args []string, stopAtPositional bool) (pos, rest []string, err error) {
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], append([]string{}, args[i+1:]...)
			break
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, nil, &helpError{fs}
			}
			return nil, nil, usagef("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, rest, nil
		}
		if stopAtPositional {
			return pos, append(append([]string{}, args...), rest...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
