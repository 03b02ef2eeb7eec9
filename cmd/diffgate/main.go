// Command diffgate is the headless CLI of the filesystem gate: run a script
// through the gate, snapshot a tree, diff two manifests, browse history.
// Its inputs, outputs and exit codes are the stable contract in docs/contract.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/internal/oneline"
	"github.com/diffgate/diffgate/internal/quote"
)

// Exit codes of the contract.
const (
	exitPass  = 0
	exitFail  = 1
	exitUsage = 2
	// exitNotExecutable is a shell's exit status for a script it found but
	// cannot execute.
	exitNotExecutable = 126
)

// usageError is a setup or usage problem: exit 2 with a one-line reason.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// failed is returned by a verb whose gate or diff failed (exit 1).
var errFailed = errors.New("gate failed")

func main() {
	pipeline.Supervise()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one CLI invocation and returns its exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage())
		return exitUsage
	}
	env := &cli{ctx: ctx, stdout: stdout, stderr: stderr}
	err := env.dispatchTop(args)
	switch {
	case err == nil:
		return exitPass
	case errors.Is(err, errFailed):
		return exitFail
	case errors.Is(err, pipeline.ErrNotExecutable):
		// As a shell would: 126, the command cannot be executed.
		fmt.Fprintf(stderr, "diffgate: %s\n", quote.Text(oneline.First(err.Error())))
		return exitNotExecutable
	default:
		fmt.Fprintf(stderr, "diffgate: %s\n", quote.Text(oneline.First(err.Error())))
		return exitUsage
	}
}

// cli carries what every verb needs.
type cli struct {
	ctx            context.Context
	stdout, stderr io.Writer
}
