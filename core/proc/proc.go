// Package proc runs an untrusted script and supervises its whole process tree.
//
// Run starts the script with the workspace as its working directory, standard
// input from the null device and its own process group, streams its standard
// output and error to a callback while keeping a bounded head and tail of each,
// enforces a timeout (SIGTERM to the whole tree, a grace period, then SIGKILL)
// and reports the exit status.
//
// On Linux the script is started by a supervisor process: Run re-executes the
// current binary (/proc/self/exe) as "diffgate-supervisor", in a session of
// its own, and Supervise, called first thing in main (and in TestMain), turns
// that process into the supervisor. It is recognised by its argv[0] and by
// its fd 3, a pipe whose other end its parent holds; no environment variable
// plays a part. Its own standard output and error go to a diagnostics pipe
// (Result.Diagnostics); the script's streams come to it as fds 4 and 5, so
// nothing the supervisor process prints is taken for the script's output.
//
// The supervisor makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so
// every descendant that is orphaned, including daemons made with setsid, nohup
// or double forks, is re-parented to it. When the script's main process has
// exited the supervisor finds every remaining descendant in /proc (a process
// is alive while any of its threads is: one whose main thread called
// pthread_exit is a zombie in its stat but not gone), freezes them with
// SIGSTOP until the set is stable, records their pid and command line as
// leftovers, kills them with SIGKILL and reaps them until it has no child
// left. The supervisor dies with the gate (it receives SIGTERM through the
// parent-death signal and then tears the tree down), and the script's main
// process dies with the supervisor.
//
// The gate (the process inside Run) does not depend on the supervisor
// surviving the script. When a cgroup v2 directory can be created below its
// own cgroup it starts the supervisor inside a fresh one (CLONE_INTO_CGROUP)
// and, once the supervisor is gone, freezes what is left in it, records it
// and kills it (cgroup.kill). Otherwise it relies on being a child subreaper
// itself while a run is in progress: the orphans of a killed supervisor are
// re-parented to the gate, which finds them among its children (those
// outside its own session, which the supervisor's session keeps the script
// from joining, started after the supervisor) and kills them with their
// descendants. The gate does the same when the supervisor's own sweep ran
// out of time (superMsg.Unfinished), and both sweeps kill each process group
// they find as a whole, which a process that keeps forking cannot outrun.
// While runs are in progress the gate also reaps those of its adopted
// children that exit, so that nothing that escaped can fill the process
// table with its zombies. A supervisor that stops is reported to the gate by
// waitid(WSTOPPED) on its pidfd; the gate then kills it and the whole tree.
//
// So, while a run is in progress, a program that calls Run must start its
// own children in its own session (in a process group of their own or not),
// never in a new one (setsid): the gate would take such a child for one of
// the script's, and reap or kill it.
// Either way Result.SupervisorLost says so, and Result.Mechanism says which
// mechanism held the tree. Run returns only once every process of the tree
// has been reaped, so none can write into the workspace afterwards. Output is
// read until the tree is dead and then for at most drainLimit, however much
// a process that escaped with the pipe writes.
//
// While a run is in progress, the gate names one of its threads
// "diffgate-gate", and the supervisor names its own "diffgate-super":
// InGatedRun finds them among the ancestors of the calling process.
//
// Fallbacks: on other Unix systems (macOS) there is no supervisor; the script
// runs in its own process group, signals go to the whole group (kill(-pgid)),
// and when the main process has exited the members still in its group are
// reported as leftovers (on macOS, found with sysctl kern.proc.pgrp) and
// killed. Processes that leave the group (setsid) escape there. On Windows only
// the script's main process is killed on timeout or cancellation and no
// leftovers are reported. On both, Supervise returns immediately.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/diffgate/diffgate/internal/oneline"
)

// Stream tells stdout from stderr.
type Stream int

const (
	// Stdout is the script's standard output.
	Stdout Stream = 1
	// Stderr is the script's standard error.
	Stderr Stream = 2
)

// String returns "stdout" or "stderr".
func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return fmt.Sprintf("stream(%d)", int(s))
}

// Default values applied by Run to zero Spec fields.
const (
	// DefaultGrace is the time between SIGTERM and SIGKILL when Spec.Grace is 0.
	DefaultGrace = 2 * time.Second
	// DefaultKeepBytes is the head and tail size kept per stream when Spec.KeepBytes is 0.
	DefaultKeepBytes = 1 << 20
)

// Spec describes one supervised run.
type Spec struct {
	// Dir is the working directory of the script (the workspace); "" means the current directory.
	Dir string
	// Path is the script to run; a relative path is made absolute against the current directory.
	Path string
	// Args are the arguments after the script.
	Args []string
	// Env is the script's environment; nil means os.Environ().
	Env []string
	// Timeout limits the run; 0 means no limit.
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL; 0 means DefaultGrace.
	Grace time.Duration
	// KeepBytes is how many head bytes and how many tail bytes are kept per stream; 0 means DefaultKeepBytes, negative keeps nothing.
	KeepBytes int
	// Output receives the script's output as it comes; it may be called from several goroutines at once and may be nil.
	// The slice is only valid during the call.
	Output func(s Stream, p []byte)
	// Containment is applied by the supervisor just before it execs the script.
	Containment Containment
	// Overlay, when set, runs the script against an overlay of the
	// workspace (Linux only; see Overlay).
	Overlay *Overlay
}

// Containment describes restrictions the supervisor applies to the thread
// that starts the script, just before it execs it (Linux only; elsewhere
// nothing is enforced and Result.Contained says why). It is sent to the
// supervisor as JSON, so it must stay a plain JSON-serialisable struct.
// The environment is not part of it: the caller reduces Spec.Env.
type Containment struct {
	// Enabled turns Landlock on: writes only below Writable, reads
	// everywhere except DenyRead, signals only within the script's tree.
	Enabled bool `json:"enabled"`
	// Required makes Run fail (with an error naming the layer) when a
	// layer cannot be enforced; otherwise what was enforced is reported.
	Required bool `json:"required,omitempty"`
	// Writable are the directories and files the script may write to
	// (absolute).
	Writable []string `json:"writable,omitempty"`
	// DenyRead are the paths the script may not read (absolute).
	DenyRead []string `json:"deny_read,omitempty"`
	// NoNet turns the network off: a seccomp filter (no AF_INET or
	// AF_INET6 socket, no io_uring) and Landlock's TCP rules (ABI >= 4).
	NoNet bool `json:"no_net,omitempty"`
	// Proxy and ProxyUnix open the network by host, with NoNet: a
	// connect to Proxy (the gate's proxy, "127.0.0.1:PORT", as the
	// script's *_PROXY variables name it) is connected to the unix socket
	// ProxyUnix, the proxy's other door; every other stays refused. It
	// needs the watcher and its stand-in sockets (Enforced.StandIns).
	Proxy     string `json:"proxy,omitempty"`
	ProxyUnix string `json:"proxy_unix,omitempty"`
	// NProc caps the tasks the script may add to those its user already
	// runs (soft RLIMIT_NPROC; 0: DefaultNProc); FSize caps the size of a
	// file it writes (soft RLIMIT_FSIZE; 0: DefaultFSize).
	NProc int   `json:"nproc,omitempty"`
	FSize int64 `json:"fsize,omitempty"`
	// Memory caps the memory of the script's tree in bytes (cgroup
	// memory.max; 0: no cap). The tree's tasks are capped by pids.max
	// (NProc) too where a cgroup with the pids controller can be made.
	Memory int64 `json:"memory,omitempty"`
	// ReadOnly are paths inside Writable that stay read-only, whether
	// they exist or not, as do the names of the directories holding them
	// (a git directory's hooks, config, config.worktree, commondir: a
	// hook planted there would run later, outside the gate). One that
	// did not exist and exists after the run is removed and recorded.
	ReadOnly []string `json:"read_only,omitempty"`
	// HardLinks are files inside Writable that are hard links to files
	// outside it: writing through any name of theirs is refused.
	HardLinks []string `json:"hard_links,omitempty"`
	// NoLandlock pretends the kernel has no Landlock, NoNotify that it
	// has no seccomp user notification (tests of the fallbacks and of
	// Required).
	NoLandlock bool `json:"no_landlock,omitempty"`
	NoNotify   bool `json:"no_notify,omitempty"`
	// NoMounts pretends no mount namespace can be made (tests).
	NoMounts bool `json:"no_mounts,omitempty"`
	// hidden is set in the supervisor when the read-only mounts covered
	// every DenyRead path (hideSecrets): Landlock then needs no rule to
	// keep them unreadable.
	hidden bool
}

// Default caps (Containment.NProc, FSize): far above what a build needs.
const (
	// DefaultNProc is added to the number of tasks the user already runs.
	DefaultNProc = 4096
	// DefaultFSize bounds the size of a file the script writes (1 TiB;
	// a sparse file counts by its size: truncate -s 15T fails).
	DefaultFSize = 1 << 40
)

// Enforced says what the supervisor enforced of a Containment.
type Enforced struct {
	// LandlockABI is the kernel's Landlock ABI version (0: none).
	LandlockABI int `json:"landlock_abi"`
	// Filesystem, Net and Signals say whether the filesystem rules, the
	// TCP rules and the signal scope were enforced.
	Filesystem bool `json:"filesystem"`
	Net        bool `json:"net"`
	Signals    bool `json:"signals"`
	// Secrets says whether every DenyRead path was made unreadable.
	Secrets bool `json:"secrets"`
	// Seccomp says whether the network filter was loaded (NoNet: no
	// AF_INET/AF_INET6 sockets, no io_uring).
	Seccomp bool `json:"seccomp"`
	// NProc and FSize say whether the RLIMIT_NPROC and RLIMIT_FSIZE caps
	// were set (NProc is false for root, whom it does not hold).
	NProc bool `json:"nproc"`
	FSize bool `json:"fsize"`
	// CgroupPids and CgroupMemory are the pids.max and memory limit the
	// gate set on the tree's cgroup (0: none could be set).
	CgroupPids   int   `json:"cgroup_pids,omitempty"`
	CgroupMemory int64 `json:"cgroup_memory,omitempty"`
	// Privileges says whether the script runs without the capabilities
	// that administer the host: as root, its bounding set was cut to
	// KeptCaps; otherwise it has none to begin with (no_new_privs keeps
	// it from gaining any).
	Privileges bool   `json:"privileges"`
	KeptCaps   string `json:"kept_caps,omitempty"`
	// Admin says whether the host-administration system calls (modules,
	// mounts, clock, reboot, swap, keyrings, bpf, ...) are refused.
	Admin bool `json:"admin"`
	// Observed says whether the supervisor watches the script's file
	// system and network calls (seccomp user notification): blocked
	// actions are then recorded (Result.Blocked), metadata changes
	// outside the writable directories and writes to ReadOnly paths and
	// hard-link escapes refused; ObserveWhy says why not.
	Observed   bool   `json:"observed"`
	ObserveWhy string `json:"observe_why,omitempty"`
	// Mounts says whether the script's mount namespace is read-only but
	// for the writable directories (readOnlyMounts): metadata changes
	// outside them, writes to .git/hooks, .git/config and hard links to
	// files outside are refused by the kernel, not only by the watcher;
	// MountsWhy says why not.
	Mounts    bool   `json:"mounts"`
	MountsWhy string `json:"mounts_why,omitempty"`
	// IPC says whether the script has an IPC namespace of its own (no
	// System V IPC or POSIX message queue of the host).
	IPC bool `json:"ipc"`
	// StandIns says whether AF_INET/AF_INET6 sockets get stand-ins (so a
	// blocked connect is recorded with its address).
	StandIns bool `json:"stand_ins,omitempty"`
	// Sockets says whether AF_UNIX sockets outside the writable
	// directories (and abstract ones) are out of reach: the watcher
	// carries out every connect, or, without it and with the network
	// off, connect is refused altogether.
	Sockets bool `json:"sockets"`
	// Why says why a requested layer is missing ("" when none is).
	Why string `json:"why,omitempty"`
}

// Blocked is one action the containment prevented (see core/report's
// Blocked): Count times the same Kind and Target, first by PID.
type Blocked struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	PID    int    `json:"pid"`
	Cmd    string `json:"cmd"`
	Op     string `json:"op"`
	Count  int    `json:"count"`
}

// Leftover is a descendant of the script that was still alive after the script's main process exited.
type Leftover struct {
	PID int    `json:"pid"`
	Cmd string `json:"cmd"`
}

// Capture is a bounded copy of one output stream.
type Capture struct {
	// Head holds the first KeepBytes bytes of the stream.
	Head []byte
	// Tail holds the last KeepBytes bytes of the stream that are not already in Head.
	Tail []byte
	// Total is the number of bytes the stream carried.
	Total int64
}

// Truncated reports whether bytes between Head and Tail were dropped.
func (c Capture) Truncated() bool { return int64(len(c.Head)+len(c.Tail)) < c.Total }

// Result describes how a supervised run ended.
type Result struct {
	// ExitCode is the exit status of the script's main process; -1 when it was killed by a signal.
	ExitCode int
	// Signal names the signal that killed the main process (e.g. "killed", "terminated"); "" if it exited normally.
	Signal string
	// TimedOut is true when the run was cut short by Spec.Timeout.
	TimedOut bool
	// Cancelled is true when the run was cut short because ctx was cancelled.
	Cancelled bool
	// Leftovers are the descendants still alive after the main process exited; all were killed before Run returned.
	Leftovers []Leftover
	// SupervisorLost is "" when the supervisor saw the run to its end. It is
	// "killed" when the supervisor was killed by a signal before it reported
	// (the script killed it), "stopped" when it was stopped (the gate then
	// killed it) and "failed" when it exited without its report; in each
	// case the gate itself found and killed the script's tree, and the exit
	// status of the script is unknown. Linux only.
	SupervisorLost string
	// Diagnostics is the start of what the supervisor process itself wrote
	// on its standard output and error (runtime errors, warnings of package
	// initialisers); never part of the script's output. Linux only.
	Diagnostics string
	// Mechanism says how the gate held the script's tree: MechanismCgroup or
	// MechanismSubreaper on Linux, "" elsewhere.
	Mechanism string
	// Contained is what the supervisor enforced of Spec.Containment (nil
	// when containment was not enabled).
	Contained *Enforced
	// Blocked lists the actions containment prevented (when
	// Contained.Observed), ranked (blockedSet: the reads of secret stores
	// first, a kind's decoys never pushing out another kind); BlockedDropped
	// counts the distinct ones beyond the list's bounds, BlockedDroppedKinds
	// the same by kind.
	Blocked             []Blocked
	BlockedDropped      int
	BlockedDroppedKinds map[string]int
	// Stdout is the bounded copy of the script's standard output.
	Stdout Capture
	// Stderr is the bounded copy of the script's standard error.
	Stderr Capture
	// Started is when the script was started.
	Started time.Time
	// Finished is when the script and all its descendants were gone.
	Finished time.Time
}

// Run runs the script under supervision and returns when the script and every
// descendant are gone. An error is returned only when the script could not be
// started at all (missing file, not executable and no interpreter, ...); its
// message is one line.
func Run(ctx context.Context, spec Spec) (*Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := prepare(&spec); err != nil {
		return nil, err
	}
	return run(ctx, &spec)
}

// prepare validates spec and fills in defaults.
func prepare(spec *Spec) error {
	if spec.Path == "" {
		return errors.New("proc: no script given")
	}
	p, err := filepath.Abs(spec.Path)
	if err != nil {
		return fmt.Errorf("proc: script %s: %v", spec.Path, oneline.Flat(err.Error()))
	}
	spec.Path = p
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("proc: script %s does not exist", p)
	case err != nil:
		return fmt.Errorf("proc: script %s: %v", p, oneline.Flat(err.Error()))
	case fi.IsDir():
		return fmt.Errorf("proc: script %s is a directory", p)
	}
	if spec.Dir != "" {
		d, err := filepath.Abs(spec.Dir)
		if err != nil {
			return fmt.Errorf("proc: working directory %s: %v", spec.Dir, oneline.Flat(err.Error()))
		}
		spec.Dir = d
		fi, err := os.Stat(d)
		switch {
		case err != nil:
			return fmt.Errorf("proc: working directory %s: %v", d, oneline.Flat(err.Error()))
		case !fi.IsDir():
			return fmt.Errorf("proc: working directory %s is not a directory", d)
		}
	}
	if spec.Env == nil {
		spec.Env = os.Environ()
	}
	if spec.Args == nil {
		spec.Args = []string{}
	}
	if spec.Grace <= 0 {
		spec.Grace = DefaultGrace
	}
	if spec.KeepBytes == 0 {
		spec.KeepBytes = DefaultKeepBytes
	} else if spec.KeepBytes < 0 {
		spec.KeepBytes = 0
	}
	return nil
}

// fallbackArgv returns the command line used when the script cannot be
// executed directly: the interpreter named on its "#!" line (with its one
// optional argument), or /bin/sh when there is none.
func fallbackArgv(path string, args []string) []string {
	interp, arg := readShebang(path)
	var argv []string
	if interp == "" {
		argv = []string{"/bin/sh", path}
	} else if arg == "" {
		argv = []string{interp, path}
	} else {
		argv = []string{interp, arg, path}
	}
	return append(argv, args...)
}

// readShebang returns the interpreter and its optional argument from the
// script's "#!" line, or "" when the script has none.
func readShebang(path string) (interp, arg string) {
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	return parseShebang(buf[:n])
}

// parseShebang parses the first line of a script the way Linux does: the
// interpreter is the first word after "#!", the rest of the line (trimmed) is
// one argument.
func parseShebang(b []byte) (interp, arg string) {
	if !bytes.HasPrefix(b, []byte("#!")) {
		return "", ""
	}
	line := b[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, "\r")
	line = bytes.Trim(line, " \t")
	if len(line) == 0 {
		return "", ""
	}
	if i := bytes.IndexAny(line, " \t"); i >= 0 {
		return string(line[:i]), string(bytes.Trim(line[i:], " \t"))
	}
	return string(line), ""
}

// capture keeps the head and a ring of the tail of one stream.
type capture struct {
	keep  int
	head  []byte
	ring  []byte
	pos   int // next write position in ring
	ringN int // bytes in ring, at most keep
	total int64
}

func (c *capture) write(p []byte) {
	c.total += int64(len(p))
	if c.keep == 0 {
		return
	}
	if len(c.head) < c.keep {
		n := min(c.keep-len(c.head), len(p))
		if cap(c.head)-len(c.head) < n {
			nc := max(2*cap(c.head), len(c.head)+n, 4096)
			nh := make([]byte, len(c.head), min(nc, c.keep))
			copy(nh, c.head)
			c.head = nh
		}
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	if c.ring == nil {
		c.ring = make([]byte, c.keep)
	}
	if len(p) >= c.keep {
		copy(c.ring, p[len(p)-c.keep:])
		c.pos, c.ringN = 0, c.keep
		return
	}
	n := copy(c.ring[c.pos:], p)
	copy(c.ring, p[n:])
	c.pos = (c.pos + len(p)) % c.keep
	c.ringN = min(c.ringN+len(p), c.keep)
}

func (c *capture) result() Capture {
	out := Capture{Total: c.total}
	if len(c.head) > 0 {
		out.Head = c.head
	}
	if c.ringN > 0 {
		tail := make([]byte, 0, c.ringN)
		if c.ringN < c.keep {
			tail = append(tail, c.ring[:c.ringN]...)
		} else {
			tail = append(tail, c.ring[c.pos:]...)
			tail = append(tail, c.ring[:c.pos]...)
		}
		out.Tail = tail
	}
	return out
}

// drainLimit bounds how long the readers wait for the end of the output once
// the script's tree is gone: only a process that escaped supervision, or was
// handed the pipe, can still hold it then, and however much it writes, the
// readers stop and close their ends at this limit.
const drainLimit = 2 * time.Second

// streamReader copies one pipe into a capture and the Output callback.
type streamReader struct {
	stream Stream
	f      *os.File
	out    func(Stream, []byte)
	cap    capture
	done   chan struct{}
}

func newStreamReader(s Stream, f *os.File, keep int, out func(Stream, []byte)) *streamReader {
	r := &streamReader{stream: s, f: f, out: out, cap: capture{keep: keep}, done: make(chan struct{})}
	go r.loop()
	return r
}

func (r *streamReader) loop() {
	defer close(r.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := r.f.Read(buf)
		if n > 0 {
			r.cap.write(buf[:n])
			if r.out != nil {
				r.out(r.stream, buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// finish waits until the writers are gone (end of file) or until the
// deadline, whichever comes first, closes the pipe and returns the capture.
// The deadline is fixed: a writer that keeps writing does not extend it.
func (r *streamReader) finish(deadline time.Time) Capture {
	_ = r.f.SetReadDeadline(deadline)
	<-r.done
	r.f.Close()
	return r.cap.result()
}

// startReaders creates the stdout and stderr pipes and their readers. The
// write ends are returned for the child; the caller closes them after start.
func startReaders(spec *Spec) (wout, werr *os.File, rs [2]*streamReader, err error) {
	rout, wout, err := os.Pipe()
	if err != nil {
		return nil, nil, rs, fmt.Errorf("proc: pipe: %v", oneline.Flat(err.Error()))
	}
	rerr, werr, err := os.Pipe()
	if err != nil {
		rout.Close()
		wout.Close()
		return nil, nil, rs, fmt.Errorf("proc: pipe: %v", oneline.Flat(err.Error()))
	}
	rs[0] = newStreamReader(Stdout, rout, spec.KeepBytes, spec.Output)
	rs[1] = newStreamReader(Stderr, rerr, spec.KeepBytes, spec.Output)
	return wout, werr, rs, nil
}

// discardReaders stops the readers without keeping anything (used when the start failed).
func discardReaders(rs [2]*streamReader) {
	for _, r := range rs {
		if r != nil {
			r.finish(time.Now())
		}
	}
}

// sanitizeCmd makes a command line printable on one line and bounds its length.
func sanitizeCmd(s string) string {
	const maxLen = 512
	truncated := false
	if len(s) > maxLen {
		s = s[:maxLen]
		truncated = true
	}
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	if truncated {
		s += "..."
	}
	return s
}
