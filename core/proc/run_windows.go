package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// sysProcAttr has nothing to set on Windows.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// errBadExeFormat is ERROR_BAD_EXE_FORMAT ("not a valid Win32 application").
const errBadExeFormat = syscall.Errno(193)

// isExecFormatErr reports whether err means the file cannot be executed directly.
func isExecFormatErr(err error) bool {
	return errors.Is(err, errBadExeFormat) || errors.Is(err, syscall.ERROR_ACCESS_DENIED)
}

// lookInterpreter finds a Unix interpreter path (e.g. /bin/sh) by its base name in PATH.
func lookInterpreter(path string) string {
	if p, err := exec.LookPath(filepath.Base(path)); err == nil {
		return p
	}
	return path
}

// terminate kills the script's main process: Windows has no SIGTERM.
func terminate(p *os.Process) { _ = p.Kill() }

// forceKill kills the script's main process.
func forceKill(p *os.Process) { _ = p.Kill() }

// groupAlive is false: descendants are not tracked on Windows.
func groupAlive(int) bool { return false }

// sweepGroup reports nothing: descendants are not tracked on Windows.
func sweepGroup(int) []Leftover { return nil }

// exitStatus returns the exit code, or -1 and "killed" when the script was
// stopped (on Windows stopping is killing).
func exitStatus(ps *os.ProcessState, stopped bool) (int, string) {
	if stopped {
		return -1, "killed"
	}
	return ps.ExitCode(), ""
}
