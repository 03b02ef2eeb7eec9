package proc_test

import (
	"testing"

	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/internal/testenv"
)

// hopper is a background process that keeps forking and letting its
// parent exit: at any moment, the one alive may be newer than the gate's
// last look at the process table. Each one runs the script again (no shell function: dash stops a
// recursion at 1,000 levels), with "hop" as its second argument.
const hopper = `if [ "$2" = hop ]; then "$0" "$1" hop & exit 0; fi
"$0" "$1" hop &
exit 0
`

// TestHopperAlwaysReported: every process the gate has to kill at the end
// is reported, however it was found (a scan, the cgroup, the subreaper):
// the hopper is a leftover in every one of 20 runs (it was killed but not
// reported in 1 to 5 of every 8 to 12), with the cgroup and without.
func TestHopperAlwaysReported(t *testing.T) { testHopper(t) }

func TestHopperAlwaysReportedSubreaper(t *testing.T) {
	proc.WithoutCgroup(t)
	testHopper(t)
}

func TestHopperAlwaysReportedAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testHopper(t)
}

func testHopper(t *testing.T) {
	missed := 0
	for i := range 20 {
		res, tok, _, _ := runBounded(t, hopper)
		if len(res.Leftovers) == 0 {
			missed++
			t.Errorf("run %d: the hopper was not reported (mechanism %s); stderr %q", i, res.Mechanism, res.Stderr.Head)
		}
		assertAllGone(t, res, tok, true)
	}
	if missed > 0 {
		t.Logf("missed in %d of 20 runs", missed)
	}
}
