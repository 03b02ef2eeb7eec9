package proc

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Thread names (comm, at most 15 bytes) that mark a process of diffgate's
// supervision chain. The supervisor names its threads supervisorComm; a
// process inside Run keeps one thread named gateComm for as long as a run is
// in progress. A process can rename only its own threads (/proc/PID/comm of
// another thread group cannot be written), so a script cannot remove the mark
// from its ancestors.
const (
	supervisorComm = "diffgate-super"
	gateComm       = "diffgate-gate"
)

// InGatedRun reports whether the calling process runs inside a gated run: one
// of its ancestors (its parent, its parent's parent, ...) is a diffgate
// supervisor or a process that is running a gate (inside Run).
//
// Every process of a script's tree keeps such an ancestor for as long as the
// run lasts, whatever it does: the supervisor and, while a run is in
// progress, the gate process are child subreapers, so a process orphaned by a
// double fork or setsid, or by killing its supervisor, is re-parented to one
// of them rather than to init. Clearing the environment, setsid or
// re-executing do not change the ancestry. A script that can ptrace its
// ancestors (same user, no Yama restriction) or that runs as root can defeat
// any such mark; so can a process that outlives the run, but Run kills every
// one of those before it returns.
//
// The calling process itself is not looked at: a gate (such as the desktop
// app) that asks while one of its own runs is in progress gets false.
func InGatedRun() bool {
	pid := os.Getppid()
	for range 4096 { // bound the walk: a pid chain is never that long
		if pid <= 1 {
			return false
		}
		if isGateOrSupervisor(pid) {
			return true
		}
		e, ok := readStat(pid)
		if !ok || e.ppid == pid {
			return false
		}
		pid = e.ppid
	}
	return false
}

// isGateOrSupervisor reports whether one of pid's threads carries a diffgate mark.
func isGateOrSupervisor(pid int) bool {
	comms, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/comm")
	for _, c := range comms {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		switch string(bytes.TrimSpace(b)) {
		case supervisorComm, gateComm:
			return true
		}
	}
	return false
}

// gateMark keeps one thread named gateComm alive while at least one Run is in
// progress in this process.
var gateMark struct {
	mu   sync.Mutex
	n    int
	stop chan struct{}
	done chan struct{} // closed once the mark is gone
}

// markGate names a thread of this process gateComm until the returned
// function is called (once per call to markGate).
func markGate() (unmark func()) {
	gateMark.mu.Lock()
	defer gateMark.mu.Unlock()
	gateMark.n++
	if gateMark.n == 1 {
		stop := make(chan struct{})
		ready := make(chan struct{})
		done := make(chan struct{})
		gateMark.stop, gateMark.done = stop, done
		go func() {
			// The goroutine ends without unlocking: the runtime then ends
			// the thread too, and the mark goes with it.
			// (On the main thread the runtime parks the thread instead,
			// hence the name is restored first.)
			runtime.LockOSThread()
			old := threadName()
			nameThread(gateComm)
			close(ready)
			<-stop
			nameThread(old)
			close(done)
		}()
		<-ready
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			gateMark.mu.Lock()
			defer gateMark.mu.Unlock()
			gateMark.n--
			if gateMark.n == 0 {
				// Wait for the name to go: a child started right after the
				// run must not find this process inside one.
				close(gateMark.stop)
				<-gateMark.done
			}
		})
	}
}

// nameThread names the calling thread (PR_SET_NAME).
func nameThread(name string) {
	if name == "" {
		return
	}
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return
	}
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(p)), 0, 0, 0)
	runtime.KeepAlive(p)
}

// threadName returns the name of the calling thread (PR_GET_NAME).
func threadName() string {
	var buf [16]byte
	if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&buf[0])), 0, 0, 0); err != nil {
		return ""
	}
	return unix.ByteSliceToString(buf[:])
}
