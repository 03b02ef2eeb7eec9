package proc

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// groupMembers lists the living processes of a process group (kern.proc.pgrp).
// macOS gives only the short command name, not the full command line.
func groupMembers(pgid int) []Leftover {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return nil
	}
	var out []Leftover
	for _, p := range procs {
		if p.Proc.P_stat == 5 { // SZOMB
			continue
		}
		comm := p.Proc.P_comm[:]
		if i := bytes.IndexByte(comm, 0); i >= 0 {
			comm = comm[:i]
		}
		out = append(out, Leftover{PID: int(p.Proc.P_pid), Cmd: sanitizeCmd(string(comm))})
	}
	return out
}
