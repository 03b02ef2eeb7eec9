package proc

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNewSuperSpec: a contained script's supervisor gets a mount namespace
// unless a test turns it off, and the spec says why not then.
func TestNewSuperSpec(t *testing.T) {
	cases := []struct {
		c       Containment
		mountNS bool
		why     string
	}{
		{Containment{}, false, ""},
		{Containment{NoMounts: true}, false, ""},
		{Containment{Enabled: true}, true, ""},
		{Containment{Enabled: true, NoMounts: true}, false, "turned off for a test"},
	}
	for _, c := range cases {
		spec := &Spec{Dir: "/w", Path: "/bin/true", Args: []string{"a"}, Env: []string{"K=V"}, Containment: c.c}
		sp, err := newSuperSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		if sp.MountNS != c.mountNS || sp.MountWhy != c.why {
			t.Errorf("%+v: MountNS %v, MountWhy %q; want %v, %q", c.c, sp.MountNS, sp.MountWhy, c.mountNS, c.why)
		}
		if sp.Dir != spec.Dir || sp.Path != spec.Path || !reflect.DeepEqual(sp.Args, spec.Args) || !reflect.DeepEqual(sp.Env, spec.Env) {
			t.Errorf("%+v: the script's command is not the spec's: %+v", c.c, sp)
		}
	}
}

// TestOutcome: what a run's Result says, or which error it ends with, by
// how the supervisor ended (what loop and the report pipe saw).
func TestOutcome(t *testing.T) {
	extra := []Leftover{{PID: 7, Cmd: "sleep"}}
	final := func(interrupted bool) *superMsg {
		return &superMsg{Done: true, ExitCode: 3, Signal: "", Interrupted: interrupted, Leftovers: []Leftover{{PID: 5, Cmd: "x"}}}
	}
	answered := &superMsg{PID: 42}
	cases := []struct {
		name string
		r    supervisorRun
		want *Result // nil: an error
		err  string
	}{
		{"lost", supervisorRun{startMsg: answered, lost: "killed", timedOut: true, extra: extra},
			&Result{ExitCode: -1, Signal: "killed", TimedOut: true, Leftovers: extra}, ""},
		{"lost wins over a final report", supervisorRun{startMsg: answered, lost: "stopped", cancelled: true, final: final(true), extra: extra},
			&Result{ExitCode: -1, Signal: "killed", Cancelled: true, Leftovers: extra}, ""},
		{"no answer", supervisorRun{noAnswer: true},
			nil, "proc: the supervisor did not answer; " + errNoSupervise},
		{"exited without a report", supervisorRun{waitErr: errors.New("exit status 2")},
			nil, "proc: the supervisor exited without a report (exit status 2); " + errNoSupervise},
		{"exited 0 without a report", supervisorRun{},
			nil, "proc: the supervisor exited without a report (exit status 0); " + errNoSupervise},
		{"stopped before the answer", supervisorRun{stopping: true, cancelled: true},
			&Result{ExitCode: -1, Signal: "killed", Cancelled: true}, ""},
		{"killed by the gate", supervisorRun{startMsg: answered, stopping: true, timedOut: true, hardKilled: true, extra: extra},
			&Result{ExitCode: -1, Signal: "killed", TimedOut: true, Leftovers: extra}, ""},
		{"done", supervisorRun{startMsg: answered, final: final(false), extra: extra},
			&Result{ExitCode: 3, Leftovers: []Leftover{{PID: 5, Cmd: "x"}, {PID: 7, Cmd: "sleep"}}}, ""},
		{"done before the timeout", supervisorRun{startMsg: answered, final: final(false), timedOut: true, cancelled: true},
			&Result{ExitCode: 3, Leftovers: []Leftover{{PID: 5, Cmd: "x"}}}, ""},
		{"cut short", supervisorRun{startMsg: answered, final: final(true), timedOut: true, stopping: true},
			&Result{ExitCode: 3, TimedOut: true, Leftovers: []Leftover{{PID: 5, Cmd: "x"}}}, ""},
	}
	for _, c := range cases {
		got, err := c.r.outcome(&Result{ExitCode: -1})
		switch {
		case c.want == nil:
			if got != nil || err == nil || err.Error() != c.err {
				t.Errorf("%s: %+v, %v; want the error %q", c.name, got, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !reflect.DeepEqual(got, c.want):
			t.Errorf("%s: %+v\nwant %+v", c.name, got, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "proc: ") {
			t.Errorf("%s: %q is not a proc error", c.name, err)
		}
	}
}

// TestSuperSpecWire: every field of the spec reaches the supervisor. The
// spec goes through its own wire form (paths as bytes), and a field that
// form forgets arrives as its zero value: Cleanup did, and every supervisor
// gave up its final sweep after one look.
func TestSuperSpecWire(t *testing.T) {
	sp := superSpec{
		Dir: "/w", Path: "/w/s.sh", Args: []string{"a"}, Env: []string{"K=V"},
		Grace: 3, Cleanup: -1, MountNS: true, MountWhy: "why", Limits: 2,
		Containment: Containment{Enabled: true, Writable: []string{"/tmp"}, DenyRead: []string{"/root"}},
		Overlay:     &Overlay{Lower: "/l", Upper: "/u", Work: "/k", UserXattr: true},
	}
	b, err := sp.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var got superSpec
	if err := got.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sp) {
		t.Errorf("after the wire:\n got %+v\nwant %+v", got, sp)
	}
	// Every exported field is set above, so none is left at its zero value.
	v := reflect.ValueOf(sp)
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() && v.Field(i).IsZero() {
			t.Errorf("field %s is not set in the test", f.Name)
		}
	}
}

// TestJoinLimitsSaysWhy: a tasks file that cannot be written is a reason
// (the gate then records no limit, as the tree is not in the cgroup), and
// every fd passed is closed either way.
func TestJoinLimitsSaysWhy(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fd, err := unix.Dup(int(r.Fd())) // a read end: a write fails
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if why := joinLimits(fd, 1); !strings.Contains(why, "join the limits") {
		t.Errorf("joinLimits = %q, want a reason", why)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
		t.Errorf("fd %d still open after joinLimits (%v)", fd, err)
	}
	if why := joinLimits(fd, 0); why != "" {
		t.Errorf("no limits: joinLimits = %q", why)
	}
}
