package proc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"maps"
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
	// MountNS: the supervisor is in a mount namespace of its own (and the
	// script contained): it makes readOnlyMounts there. MountWhy says why
	// a contained script's supervisor has none.
	MountNS  bool   `json:"mount_ns,omitempty"`
	MountWhy string `json:"mount_why,omitempty"`
	// mounts is what readOnlyMounts did (in the supervisor).
	mounts mountResult
}

// mountResult says whether readOnlyMounts held, and why not.
type mountResult struct {
	ok  bool
	why string
}

// superMsg is what the supervisor reports to Run (JSON values on fd 3): first
// the outcome of the start, then, once everything is gone, the result.
type superMsg struct {
	StartError  string     `json:"start_error,omitempty"`
	PID         int        `json:"pid,omitempty"`
	Contained   *Enforced  `json:"contained,omitempty"`
	Done        bool       `json:"done,omitempty"`
	ExitCode    int        `json:"exit_code"`
	Signal      string     `json:"signal,omitempty"`
	Interrupted bool       `json:"interrupted,omitempty"`
	Leftovers   []Leftover `json:"leftovers,omitempty"`
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
	sp := superSpec{
		Dir: spec.Dir, Path: spec.Path, Args: spec.Args, Env: spec.Env,
		Grace: spec.Grace, Containment: spec.Containment, Overlay: spec.Overlay,
	}
	if _, err := json.Marshal(sp); err != nil {
		return nil, fmt.Errorf("proc: encode spec: %v", oneline.Flat(err.Error()))
	}
	// A contained script gets read-only mounts (readOnlyMounts) in the
	// supervisor's namespaces, which are also those an overlay needs.
	sp.MountNS = spec.Containment.Enabled && !spec.Containment.NoMounts
	if spec.Containment.Enabled && spec.Containment.NoMounts {
		sp.MountWhy = "turned off for a test"
	}

	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("proc: pipe: %v", oneline.Flat(err.Error()))
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return nil, fmt.Errorf("proc: pipe: %v", oneline.Flat(err.Error()))
	}
	wout, werr, rs, err := startReaders(spec)
	if err != nil {
		specR.Close()
		specW.Close()
		repR.Close()
		repW.Close()
		return nil, err
	}

	// The supervisor's own standard output and error (runtime messages,
	// warnings printed by package initialisers of the program it is a copy
	// of) go to a pipe of their own, never into the script's streams.
	diagR, diagW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		repR.Close()
		repW.Close()
		wout.Close()
		werr.Close()
		discardReaders(rs)
		return nil, fmt.Errorf("proc: pipe: %v", oneline.Flat(err.Error()))
	}
	diag := newStreamReader(Stderr, diagR, diagKeep, nil)

	cg := newCgroup()
	lim := newLimiter(cg, &spec.Containment)
	defer lim.close()
	newCmd := func() *exec.Cmd {
		attr := &syscall.SysProcAttr{
			// A session of its own: out of the terminal's foreground group
			// (Ctrl-C reaches the gate, which cancels, instead of killing
			// the supervisor), and no process of the script's tree can
			// join the gate's process group.
			Setsid: true,
			// If the gate dies, the supervisor tears the tree down.
			Pdeathsig: syscall.SIGTERM,
		}
		if cg != nil {
			attr.UseCgroupFD, attr.CgroupFD = true, cg.fd
		}
		if spec.Overlay != nil || sp.MountNS {
			namespaceAttr(attr, sp.MountNS)
		}
		return &exec.Cmd{
			Path:       "/proc/self/exe",
			Args:       []string{supervisorName},
			Env:        supervisorEnv(),
			Stdin:      specR,
			Stdout:     diagW,
			Stderr:     diagW,
			ExtraFiles: []*os.File{repW, wout, werr}, // fds 3, 4, 5

			SysProcAttr: attr,
		}
	}
	started := time.Now()
	startMu.Lock()
	cmd := newCmd()
	err = cmd.Start()
	if err != nil && cg != nil {
		// The cgroup was made but cannot take the process: do without.
		cg.close()
		cg = nil
		cmd = newCmd()
		err = cmd.Start()
	}
	if err != nil && sp.MountNS && spec.Overlay == nil {
		// No namespaces here (a chroot, restricted user namespaces): the
		// contained script goes without the read-only mounts, and the run
		// says so.
		sp.MountNS, sp.MountWhy = false, "cannot create a mount namespace: "+oneline.Flat(err.Error())
		cmd = newCmd()
		err = cmd.Start()
	}
	var unregister func()
	if err == nil {
		unregister = registerSupervisor(cmd.Process.Pid)
	}
	startMu.Unlock()
	specR.Close()
	wout.Close()
	werr.Close()
	repW.Close()
	diagW.Close()
	if err != nil {
		specW.Close()
		repR.Close()
		discardReaders(rs)
		discardReaders([2]*streamReader{diag})
		if spec.Overlay != nil {
			// The namespaces an overlay needs could not be made (a chroot,
			// restricted user namespaces): say so, the caller falls back.
			return nil, fmt.Errorf("proc: overlay: cannot create the namespaces for the stage: %v", oneline.Flat(err.Error()))
		}
		return nil, fmt.Errorf("proc: start supervisor: %v", oneline.Flat(err.Error()))
	}
	defer unregister()
	mechanism := MechanismSubreaper
	if cg != nil {
		mechanism = MechanismCgroup
		defer cg.close()
	}
	superPID := cmd.Process.Pid
	var superStart uint64
	if e, ok := readStatFull(superPID); ok {
		superStart = e.start
	}
	// The supervisor waits for its spec before it forks: it joins the
	// limits' v1 cgroups with nothing else in its tree yet.
	if err := lim.join(superPID); err != nil {
		lim = nil // not held: say so (Enforced) rather than pretend
	}
	payload, _ := json.Marshal(sp)
	go func() {
		_, _ = specW.Write(payload)
		specW.Close()
	}()

	startC := make(chan superMsg, 1)
	repDone := make(chan struct{})
	var final *superMsg
	streamed := newBlockedSet() // what the supervisor reported before its end
	links := procLinks{}        // the gate's reading of /proc magic links in targets
	go func() {
		defer close(repDone)
		dec := json.NewDecoder(repR)
		for first := true; ; first = false {
			var m superMsg
			if err := dec.Decode(&m); err != nil {
				return
			}
			switch {
			case first:
				startC <- m
			case m.Done:
				links.apply(m.Blocked)
				final = &m
			default:
				links.apply(m.Blocked)
				for _, b := range m.Blocked {
					streamed.add(b)
				}
			}
		}
	}()
	waitC := make(chan error, 1)
	go func() { waitC <- cmd.Wait() }()
	// The supervisor is our child: a stop (kill -STOP from the script) is
	// reported to us like an exit.
	stoppedC := make(chan struct{}, 1)
	if pidfd, err := unix.PidfdOpen(superPID, 0); err == nil {
		go func() {
			watchStop(pidfd, stoppedC)
			unix.Close(pidfd)
		}()
	}

	var timeoutC <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	handshake := time.NewTimer(handshakeTimeout)
	defer handshake.Stop()
	handshakeC := handshake.C
	var (
		startMsg                                *superMsg
		timedOut, cancelled, stopping, noAnswer bool
		hardKilled                              bool
		lost                                    string
		extra                                   []Leftover
		hardKillC                               <-chan time.Time
		waitErr                                 error
	)
	ctxDone := ctx.Done()
	// sweep finds, records and kills what is left of the script's tree by
	// the gate's own means: what is in the cgroup and, when the supervisor
	// is lost (orphaned), the script's processes among the gate's children
	// (the supervisor, if it is still there, stopped, is killed with them).
	// While the supervisor lives, every orphan of the tree goes to it, not
	// to the gate, so the gate's children are not looked at then: another
	// program's orphans that came to this process are none of this run's.
	var killed []int
	sweep := func(super int, skip map[int]bool, orphaned bool) {
		deadline := time.Now().Add(cleanupTimeout)
		var left []Leftover
		var pids []int
		if cg != nil {
			skip = maps.Clone(skip)
			if skip == nil {
				skip = map[int]bool{}
			}
			skip[superPID] = true
			left, pids = cg.sweep(skip, deadline)
			extra = append(extra, left...)
			killed = append(killed, pids...)
			// A process that moved itself out of the cgroup (root, or a
			// user who owns a delegated parent) is still found among the
			// gate's children if its supervisor is gone.
			for _, p := range pids {
				skip[p] = true
			}
		}
		if !orphaned {
			return
		}
		left, pids = adoptedSweep(super, superStart, skip, deadline)
		extra = append(extra, left...)
		killed = append(killed, pids...)
	}
	// reap waits for what the sweeps killed; the supervisor is gone by then.
	reap := func() { reapKilled(killed, time.Now().Add(cleanupTimeout)) }
	// stop asks the supervisor to tear the tree down. SIGTERM is sent only
	// once the supervisor has answered: before that it may not be handling
	// signals yet, and would die without reporting.
	stop := func() {
		if stopping {
			return
		}
		stopping = true
		if startMsg != nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
		hardKillC = time.After(spec.Grace + hardKillMargin)
	}
loop:
	for {
		select {
		case m := <-startC:
			startMsg = &m
			handshakeC = nil
			if stopping {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		case waitErr = <-waitC:
			break loop
		case <-stoppedC:
			// Only the script can have stopped it (it is in a session of
			// its own, out of reach of the terminal's job control): kill it
			// and the whole tree now, even if it was continued since.
			lost = "stopped"
			hardKilled = true
			sweep(superPID, nil, true)
		case <-timeoutC:
			timeoutC = nil
			timedOut = true
			stop()
		case <-ctxDone:
			ctxDone = nil
			cancelled = true
			stop()
		case <-handshakeC:
			handshakeC = nil
			noAnswer = true
			hardKilled = true
			_ = cmd.Process.Kill()
		case <-hardKillC:
			hardKillC = nil
			hardKilled = true
			_ = cmd.Process.Kill()
		}
	}
	// Only the supervisor held the write end of the report pipe.
	_ = repR.SetReadDeadline(time.Now().Add(drainLimit))
	<-repDone
	repR.Close()
	if startMsg == nil {
		select {
		case m := <-startC:
			startMsg = &m
		default:
		}
	}
	if startMsg != nil && startMsg.StartError != "" {
		sweep(0, nil, false)
		reap()
		discardReaders(rs)
		discardReaders([2]*streamReader{diag})
		return nil, errors.New(startMsg.StartError)
	}
	if final == nil && !hardKilled {
		// It died without its report, and not by our hand: killed (by the
		// script, which can signal it), or failed after it had answered.
		switch {
		case killedBySignal(waitErr):
			lost = "killed"
		case startMsg != nil:
			lost = "failed"
		}
	}
	// Whatever the supervisor reported, make sure that nothing of the tree
	// is left: this finds what a lost supervisor left behind.
	skip := map[int]bool{}
	if final != nil {
		for _, l := range final.Leftovers {
			skip[l.PID] = true
		}
	}
	sweep(0, skip, final == nil)
	reap()
	res := &Result{Started: started, ExitCode: -1, Mechanism: mechanism, SupervisorLost: lost}
	if startMsg != nil {
		res.Contained = startMsg.Contained
	}
	res.Blocked, res.BlockedDroppedKinds = streamed.list()
	if final != nil {
		res.Blocked, res.BlockedDroppedKinds = final.Blocked, final.BlockedDroppedKinds
	}
	res.BlockedDropped = droppedTotal(res.BlockedDroppedKinds)
	lim.record(res.Contained)
	res.Blocked = append(res.Blocked, lim.blocked()...)
	drained := time.Now().Add(drainLimit)
	res.Stdout = rs[0].finish(drained)
	res.Stderr = rs[1].finish(drained)
	res.Diagnostics = string(diag.finish(drained).Head)
	res.Finished = time.Now()

	switch {
	case lost != "":
		res.Signal = "killed"
		res.TimedOut, res.Cancelled = timedOut, cancelled
		res.Leftovers = extra
		return res, nil
	case startMsg == nil && noAnswer:
		return nil, errors.New("proc: the supervisor did not answer; " + errNoSupervise)
	case startMsg == nil && !stopping:
		return nil, fmt.Errorf("proc: the supervisor exited without a report (%s); %s", describeWait(waitErr), errNoSupervise)
	case final == nil:
		// The supervisor was killed by the gate (or the run was stopped
		// before the script started): nothing more is known.
		res.Signal = "killed"
		res.TimedOut, res.Cancelled = timedOut, cancelled
		res.Leftovers = extra
		return res, nil
	}
	res.ExitCode = final.ExitCode
	res.Signal = final.Signal
	res.Leftovers = append(final.Leftovers, extra...)
	// The flags say the run was cut short: the kill procedure started while
	// the script's main process was still running.
	res.TimedOut = timedOut && final.Interrupted
	res.Cancelled = cancelled && final.Interrupted
	return res, nil
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
