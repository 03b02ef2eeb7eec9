package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/diffgate/diffgate/internal/oneline"
)

// superSpec is what Run sends to the supervisor (as JSON on its standard input).
type superSpec struct {
	Dir         string        `json:"dir"`
	Path        string        `json:"path"`
	Args        []string      `json:"args"`
	Env         []string      `json:"env"`
	Grace       time.Duration `json:"grace"`
	Containment Containment   `json:"containment"`
	Overlay     *Overlay      `json:"overlay,omitempty"`
	// Cleanup bounds the supervisor's final sweep (0: cleanupTimeout); a
	// negative one (a test's, supervisorCleanup) skips it, as if it had run
	// out of time at once.
	Cleanup time.Duration `json:"cleanup,omitempty"`
	// MountNS: the supervisor is in a mount namespace of its own (and the
	// script contained): it makes readOnlyMounts there. MountWhy says why
	// a contained script's supervisor has none.
	MountNS  bool   `json:"mount_ns,omitempty"`
	MountWhy string `json:"mount_why,omitempty"`
	// Limits is how many tasks files of the limits' v1 cgroups came as
	// fds limitFD and on (joinLimits).
	Limits int `json:"limits,omitempty"`
	// mounts is what readOnlyMounts did, and limitsWhy why joinLimits
	// did not join (in the supervisor).
	mounts    mountResult
	limitsWhy string
}

// mountResult says whether readOnlyMounts held, and why not.
type mountResult struct {
	ok  bool
	why string
}

// superMsg is what the supervisor reports to Run (JSON values on fd 3): first
// the outcome of the start, then, once everything is gone, the result.
type superMsg struct {
	StartError string    `json:"start_error,omitempty"`
	PID        int       `json:"pid,omitempty"`
	Contained  *Enforced `json:"contained,omitempty"`
	// LimitsWhy: the script was forked outside the limits' v1 cgroups,
	// and why (joinLimits).
	LimitsWhy   string     `json:"limits_why,omitempty"`
	Done        bool       `json:"done,omitempty"`
	ExitCode    int        `json:"exit_code"`
	Signal      string     `json:"signal,omitempty"`
	Interrupted bool       `json:"interrupted,omitempty"`
	Leftovers   []Leftover `json:"leftovers,omitempty"`
	// Unfinished: the supervisor's cleanup ended at its deadline with
	// processes of the tree perhaps still alive; they come to the gate.
	Unfinished bool `json:"unfinished,omitempty"`
	// Blocked: one blocked action as it happens, or (with Done) all of
	// them with their counts.
	Blocked        []Blocked `json:"blocked,omitempty"`
	BlockedDropped int       `json:"blocked_dropped,omitempty"`
	// BlockedDroppedKinds counts BlockedDropped by kind.
	BlockedDroppedKinds map[string]int `json:"blocked_dropped_kinds,omitempty"`
}

const (
	// handshakeTimeout bounds the wait for the supervisor's first message.
	handshakeTimeout = 20 * time.Second
	// hardKillMargin is added to the grace period before Run gives up on an
	// interrupted supervisor and kills it (more than the supervisor's own
	// bound on its final sweep).
	hardKillMargin = cleanupTimeout + 5*time.Second
	// supervisorName is the argv[0] of the supervisor process.
	supervisorName = "diffgate-supervisor"
)

const errNoSupervise = "is proc.Supervise() called first thing in main (and TestMain)?"

func run(ctx context.Context, spec *Spec) (*Result, error) {
	if isSupervisorProcess() {
		return nil, errors.New("proc: Run called inside a supervisor process; " + errNoSupervise)
	}
	defer markGate()()
	defer enterRun()()
	r := &supervisorRun{spec: spec}
	defer r.closeAll()
	if err := r.start(); err != nil {
		return nil, err
	}
	r.loop(ctx)
	return r.collect()
}

// diagKeep bounds what is kept of the supervisor's own output.
const diagKeep = 16 << 10

// startMu is held while a supervisor is started and registered, so that a
// sweep (which takes it too) never mistakes a supervisor of another run for
// a process of its script.
var startMu sync.Mutex

// killedBySignal reports whether the supervisor's wait error says it was killed by a signal.
func killedBySignal(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			return ws.Signaled()
		}
	}
	return false
}

// supervisorEnv is the environment of the supervisor process itself (the
// script gets Spec.Env): ours, with two changes. In binaries built with -race
// the race runtime sleeps a second before exiting; the supervisor has nothing
// to wait for, so that is turned off. And the locale is C.UTF-8, which is
// always there: a package initialiser of the program (GTK in the desktop app)
// warns about a locale that is not installed. The supervisor is recognised by
// its argv[0] and its report pipe (isSupervisorProcess), not by a variable a
// user could set.
func supervisorEnv() []string {
	race := "atexit_sleep_ms=0"
	env := make([]string, 0, len(os.Environ())+2)
	for _, kv := range os.Environ() {
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			race = strings.TrimSpace(v + " " + race)
			continue
		}
		if strings.HasPrefix(kv, "LC_ALL=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GORACE="+race, "LC_ALL=C.UTF-8")
}

// describeWait turns the supervisor's wait error into a short text.
func describeWait(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return oneline.Flat(err.Error())
}

// procLinks resolves, in the gate, the /proc magic links that targets of
// blocked actions go through where the supervisor could not follow them
// (/proc/PID/root, /proc/PID/cwd or /proc/PID/fd/N of a process outside
// the script's user namespace: the gate, an ancestor; the kernel refused
// them to the script too), so that the finding names the file as the
// kernel would have reached it: /proc/PID/root/home/u/.bashrc becomes
// /home/u/.bashrc. It reads each link once, as the record arrives (the
// process is the gate or an ancestor of it, alive); a link it cannot read
// leaves the target as the script named it.
type procLinks map[string]string

// apply rewrites the path targets of bs.
func (l procLinks) apply(bs []Blocked) {
	for i := range bs {
		switch bs[i].Kind {
		case kindWrite, kindCreate, kindDelete, kindMetadata, kindRead:
			bs[i].Target = l.resolve(bs[i].Target)
		case kindRename, kindLink:
			if from, to, ok := strings.Cut(bs[i].Target, " -> "); ok && !strings.Contains(to, " -> ") {
				bs[i].Target = l.resolve(from) + " -> " + l.resolve(to)
			}
		}
	}
}

// resolve returns p with a leading /proc/PID/{root,cwd,fd/N} replaced by
// the link's target.
func (l procLinks) resolve(p string) string {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return p
	}
	parts := strings.SplitN(rest, "/", 4) // PID, root|cwd|fd, [N], ...
	if len(parts) < 2 || strings.Trim(parts[0], "0123456789") != "" || parts[0] == "" {
		return p
	}
	n := 2
	switch {
	case parts[1] == "fd" && len(parts) >= 3:
		n = 3
	case parts[1] == "root" || parts[1] == "cwd":
	default:
		return p
	}
	link := "/proc/" + strings.Join(parts[:n], "/")
	tail := strings.TrimPrefix(p, link)
	dst, seen := l[link]
	if !seen {
		if t, err := os.Readlink(link); err == nil && strings.HasPrefix(t, "/") && !strings.HasSuffix(t, " (deleted)") {
			dst = t
		}
		l[link] = dst
	}
	if dst == "" {
		return p
	}
	return filepath.Join(dst, tail)
}
