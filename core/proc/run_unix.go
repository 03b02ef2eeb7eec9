//go:build unix && !linux

package proc

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// sysProcAttr puts the script in its own process group.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// isExecFormatErr reports whether err means the file cannot be executed directly.
func isExecFormatErr(err error) bool {
	return errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOEXEC)
}

// lookInterpreter returns path unchanged: Unix interpreters are named by absolute path.
func lookInterpreter(path string) string { return path }

// terminate sends SIGTERM (and SIGCONT) to the script's process group.
func terminate(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
	_ = syscall.Kill(-p.Pid, syscall.SIGCONT)
}

// forceKill sends SIGKILL to the script's process group.
func forceKill(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }

// groupAlive reports whether a process is left in the script's process group.
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// sweepGroup records the processes left in the script's process group and kills them.
func sweepGroup(pgid int) []Leftover {
	if !groupAlive(pgid) {
		return nil
	}
	left := groupMembers(pgid)
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for i := 0; i < 100 && groupAlive(pgid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return left
}

// exitStatus turns the main process's state into an exit code and a signal name.
func exitStatus(ps *os.ProcessState, _ bool) (int, string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return ps.ExitCode(), ""
}
