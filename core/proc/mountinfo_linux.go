package proc

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// mount is one line of /proc/self/mountinfo: "id parent maj:min root
// mountpoint options [optional...] - fstype source superoptions".
type mount struct {
	root, point, options, fsType, superOptions string
}

// mountInfo reads this process's mount table (nil when it cannot).
func mountInfo() []mount {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for i, fl := range fields {
			if fl == "-" && i >= 6 && i+3 < len(fields) {
				out = append(out, mount{root: unescapeMount(fields[3]), point: unescapeMount(fields[4]),
					options: fields[5], fsType: fields[i+1], superOptions: fields[i+3]})
				break
			}
		}
	}
	return out
}

// unescapeMount decodes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
