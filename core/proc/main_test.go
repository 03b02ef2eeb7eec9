package proc_test

import (
	"os"
	"testing"

	"github.com/diffgate/diffgate/core/proc"
)

func TestMain(m *testing.M) {
	proc.Supervise()
	os.Exit(m.Run())
}
