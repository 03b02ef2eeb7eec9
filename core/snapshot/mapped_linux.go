package snapshot

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// devIno identifies a file.
type devIno struct{ dev, ino uint64 }

// sharedWritable returns the files that some process has mapped shared and
// writable. A write through such a mapping whose page is already writable
// in the writer's page tables changes the content without updating ctime
// (the kernel updates it only on the write fault that makes a clean page
// writable; tmpfs pages are never cleaned), so the hash cache must not vouch
// for these files. Every process's mappings are asked for with the
// PROCMAP_QUERY ioctl on its /proc/PID/maps (Linux 6.11 and later): the
// kernel then skips every mapping that is not shared, writable and
// file-backed without formatting it; a kernel without it (or an ioctl that
// fails) has the maps file read as text, line by line. Processes whose maps
// cannot be opened (another user's, for a normal user) are not seen. About
// 2 ms for 120 processes with the ioctl, 16 ms as text.
func sharedWritable() map[devIno]bool {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out map[devIno]bool
	add := func(k devIno) {
		if out == nil {
			out = map[devIno]bool{}
		}
		out[k] = true
	}
	// One small reader for every maps file read as text: some processes
	// map thousands of regions. Each maps file is opened as a bare
	// descriptor: an *os.File costs a few system calls more per process
	// (flags, poller registration).
	var rd *bufio.Reader
	for _, p := range procs {
		name := p.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		fd, err := retry(func() (int, error) {
			return unix.Open("/proc/"+name+"/maps", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		})
		if err != nil {
			continue
		}
		if !queryMaps(fd, add) {
			if rd == nil {
				rd = bufio.NewReaderSize(nil, 16<<10)
			}
			readMaps(fd, rd, add)
		}
		unix.Close(fd)
	}
	return out
}

// procmapQuery is struct procmap_query of <linux/fs.h>.
type procmapQuery struct {
	Size, QueryFlags, QueryAddr             uint64
	VMAStart, VMAEnd, VMAFlags, VMAPageSize uint64
	VMAOffset, Inode                        uint64
	DevMajor, DevMinor                      uint32
	VMANameSize, BuildIDSize                uint32
	VMANameAddr, BuildIDAddr                uint64
}

const (
	// procmapQueryIoctl is PROCMAP_QUERY, _IOWR('f', 17, struct procmap_query).
	procmapQueryIoctl = 0xC0686611
	// The mappings asked for: shared (VM_MAYSHARE, the "s" of the maps
	// file), writable (its "w"), backed by a file, the one at the address
	// or the next such one.
	procmapQueryFlags = 0x08 | 0x02 | 0x20 | 0x10
)

// noProcmapQuery is set once the kernel refused PROCMAP_QUERY as unknown:
// every later maps file is read as text.
var noProcmapQuery atomic.Bool

// queryMaps reports the shared, writable file mappings of the open maps file
// fd to add, with PROCMAP_QUERY; false when the ioctl could not answer (the
// caller then reads the file as text, which repeats any mapping already
// reported: add is idempotent).
func queryMaps(fd int, add func(devIno)) bool {
	if noProcmapQuery.Load() {
		return false
	}
	q := procmapQuery{Size: uint64(unsafe.Sizeof(procmapQuery{})), QueryFlags: procmapQueryFlags}
	for {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), procmapQueryIoctl, uintptr(unsafe.Pointer(&q)))
		switch errno {
		case 0:
		case unix.ENOENT: // no such mapping at or after the address
			return true
		case unix.EINTR:
			continue
		case unix.ENOTTY, unix.EINVAL:
			noProcmapQuery.Store(true)
			return false
		default:
			return false
		}
		if q.Inode != 0 {
			add(devIno{unix.Mkdev(q.DevMajor, q.DevMinor), q.Inode})
		}
		if q.VMAEnd <= q.QueryAddr { // cannot happen: the next one starts after
			return false
		}
		q.QueryAddr = q.VMAEnd
	}
}

// readMaps reads the maps file fd as text and reports its shared, writable
// file mappings to add.
func readMaps(fd int, rd *bufio.Reader, add func(devIno)) {
	rd.Reset(fdReader(fd))
	for {
		line, err := rd.ReadSlice('\n')
		if k, ok := mappedFile(line); ok {
			add(k)
		}
		if err == bufio.ErrBufferFull {
			// A path longer than the buffer: the fields that matter
			// came first; skip the rest of the line.
			for err == bufio.ErrBufferFull {
				_, err = rd.ReadSlice('\n')
			}
		}
		if err != nil {
			return
		}
	}
}

// fdReader reads from a bare descriptor.
type fdReader int

func (fd fdReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(int(fd), b)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// mappedFile parses a maps line "addr perms offset MM:mm inode path" and
// returns the file of a shared, writable mapping.
func mappedFile(line []byte) (devIno, bool) {
	// Most lines are private mappings: look at the permissions first.
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 || len(line) < sp+5 || line[sp+2] != 'w' || line[sp+4] != 's' {
		return devIno{}, false
	}
	f := bytes.Fields(line[sp+1:])
	if len(f) < 4 {
		return devIno{}, false
	}
	dev := f[2]
	c := bytes.IndexByte(dev, ':')
	if c < 0 {
		return devIno{}, false
	}
	major, err1 := strconv.ParseUint(string(dev[:c]), 16, 32)
	minor, err2 := strconv.ParseUint(string(dev[c+1:]), 16, 32)
	ino, err3 := strconv.ParseUint(string(f[3]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || ino == 0 {
		return devIno{}, false
	}
	return devIno{unix.Mkdev(uint32(major), uint32(minor)), ino}, true
}
