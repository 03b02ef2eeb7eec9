//go:build unix

package snapshot

import "golang.org/x/sys/unix"

func statMtime(st *unix.Stat_t) unix.Timespec { return st.Mtim }
func statCtime(st *unix.Stat_t) unix.Timespec { return st.Ctim }
