package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGateMarkCountsForChildren: a child of a process that is inside Run
// (as the orphans of a killed supervisor become, the gate being their
// subreaper) is inside a gated run; once the run is over it is not.
func TestGateMarkCountsForChildren(t *testing.T) {
	ask := func() string {
		out := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperInGatedRun$", "--", "ingated", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		b, _ := os.ReadFile(out)
		return string(b)
	}
	unmark := markGate()
	inside := ask()
	unmark()
	if inside != "true" {
		t.Errorf("a child of a gate inside Run: InGatedRun wrote %q, want true", inside)
	}
	if after := ask(); after != "false" {
		t.Errorf("after the run: InGatedRun wrote %q, want false", after)
	}
}
