//go:build unix && !linux

package snapshot

import (
	"os"

	"golang.org/x/sys/unix"
)

// list reads the directory's names into sc (through a duplicate descriptor,
// which os.File may consume and close).
func (d dirHandle) list(sc *scratch) error {
	sc.names, sc.ents = sc.names[:0], sc.ents[:0]
	fd, err := unix.Dup(d.fd)
	if err != nil {
		return err
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), ".")
	defer f.Close()
	des, err := f.ReadDir(-1)
	for _, de := range des {
		sc.add([]byte(de.Name()), kindOf(de.Type()))
	}
	return err
}
