package snapshot

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// devIno identifies a file.
type devIno struct{ dev, ino uint64 }

// sharedWritable returns the files that some process has mapped shared and
// writable, from /proc/*/maps. A write through such a mapping whose page is
// already writable in the writer's page tables changes the content without
// updating ctime (the kernel updates it only on the write fault that makes
// a clean page writable; tmpfs pages are never cleaned), so the hash cache
// must not vouch for these files. Processes whose maps cannot be read
// (another user's, for a normal user) are not seen. About 10 ms for 150
// processes.
func sharedWritable() map[devIno]bool {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out map[devIno]bool
	// One small reader for every maps file, read line by line: some
	// processes map thousands of regions.
	// Each maps file is opened as a bare descriptor: an *os.File costs a
	// few system calls more per process (flags, poller registration).
	rd := bufio.NewReaderSize(nil, 16<<10)
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
		rd.Reset(fdReader(fd))
		for {
			line, err := rd.ReadSlice('\n')
			if k, ok := mappedFile(line); ok {
				if out == nil {
					out = map[devIno]bool{}
				}
				out[k] = true
			}
			if err == bufio.ErrBufferFull {
				// A path longer than the buffer: the fields that matter
				// came first; skip the rest of the line.
				for err == bufio.ErrBufferFull {
					_, err = rd.ReadSlice('\n')
				}
			}
			if err != nil {
				break
			}
		}
		unix.Close(fd)
	}
	return out
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
