package proc_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/diffgate/diffgate/core/proc"
)

func TestMain(m *testing.M) {
	// Like a package initialiser of the desktop app (GTK's locale warning),
	// print something before Supervise when asked to: it must never reach
	// the script's output (TestSupervisorOwnOutputIsNotTheScripts).
	if os.Args[0] == "diffgate-supervisor" && os.Getenv("DGTEST_SUPERVISOR_NOISE") != "" {
		fmt.Fprintln(os.Stderr, "noise printed by the supervisor's own initialisation")
		fmt.Fprintln(os.Stdout, "more noise on its stdout")
	}
	proc.Supervise()
	os.Exit(m.Run())
}
