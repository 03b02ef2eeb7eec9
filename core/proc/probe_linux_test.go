package proc_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/internal/testenv"
)

// probeScript binds loopback port 0 (urllib3's IPv6 probe), connects to
// port 0, then binds a real port: only the last is network use.
const probeScript = `import socket, errno
for fam, host in ((socket.AF_INET6, "::1"), (socket.AF_INET, "127.0.0.1")):
    s = socket.socket(fam)
    try:
        s.bind((host, 0)); print("BOUND", host)
    except OSError as e:
        print("PROBE", host, errno.errorcode[e.errno])
s = socket.socket(socket.AF_INET)
try:
    s.connect(("127.0.0.1", 0))
except OSError as e:
    print("CONNECT0", errno.errorcode[e.errno])
s = socket.socket(socket.AF_INET)
try:
    s.bind(("127.0.0.1", 8123)); print("BOUND 8123")
except OSError as e:
    print("BIND", errno.errorcode[e.errno])
`

// TestLoopbackProbeNotRecorded: with the network off, a bind to loopback
// port 0 and a connect to port 0 fail quietly (EADDRNOTAVAIL,
// ECONNREFUSED) and are not recorded; a bind to a real port is.
func TestLoopbackProbeNotRecorded(t *testing.T) { testLoopbackProbe(t) }

func TestLoopbackProbeNotRecordedAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testLoopbackProbe(t)
}

func testLoopbackProbe(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	f := newContainFixture(t)
	py := filepath.Join(f.ws, "probe.py")
	if err := os.WriteFile(py, []byte(probeScript), 0o644); err != nil {
		t.Fatal(err)
	}
	py3 := "/usr/bin/python3"
	res, err := proc.Run(context.Background(), proc.Spec{
		Dir: f.ws, Path: py3, Args: []string{py},
		Env:         []string{"PATH=/usr/bin:/bin", "HOME=" + f.home},
		Timeout:     60 * time.Second,
		Containment: proc.Containment{Enabled: true, NoNet: true, Writable: []string{f.ws, "/dev/null"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout.Head)
	if e := res.Contained; e == nil || !e.Observed || !e.StandIns {
		t.Skipf("no supervisor with stand-in sockets here: %+v", e)
	}
	for _, want := range []string{"PROBE ::1 EADDRNOTAVAIL", "PROBE 127.0.0.1 EADDRNOTAVAIL", "CONNECT0 ECONNREFUSED", "BIND EACCES"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s\nstderr: %s", want, out, res.Stderr.Head)
		}
	}
	if len(res.Blocked) != 1 || res.Blocked[0].Kind != "net" || res.Blocked[0].Target != "127.0.0.1:8123" || res.Blocked[0].Op != "bind" {
		t.Errorf("Blocked = %+v, want only the bind of 127.0.0.1:8123", res.Blocked)
	}
}
