//go:build unix

package diff_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/testenv"
)

// testHardlinkEscape uses real hard links: a file outside the workspace
// linked in before the run, one linked in by the "script", two names of
// one file both inside the workspace, and a linked file replaced by a
// rename. Only a file with a name outside carries hardlink-escape, when it
// is added and when something written through it (content, mode) changes.
func testHardlinkEscape(t *testing.T) {
	dir := testenv.UserTempDir(t)
	ws, out := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	must(t, os.MkdirAll(filepath.Join(ws, "data"), 0o755))
	must(t, os.Mkdir(out, 0o755))
	write(t, out, "x", "outside x\n")
	write(t, out, "y", "outside y\n")
	write(t, out, "z", "outside z\n")
	write(t, out, "r", "outside r\n")
	write(t, out, "m", "outside m\n")
	link := func(from, to string) { t.Helper(); must(t, os.Link(from, to)) }
	link(filepath.Join(out, "x"), filepath.Join(ws, "data/x"))         // written through below
	link(filepath.Join(out, "r"), filepath.Join(ws, "data/r"))         // replaced below
	link(filepath.Join(out, "m"), filepath.Join(ws, "data/m"))         // chmod through it below
	link(filepath.Join(out, "z"), filepath.Join(ws, "data/untouched")) // left alone
	write(t, ws, "data/twin-a", "twins\n")
	take := func() *snapshot.Manifest {
		t.Helper()
		m, err := snapshot.Take(context.Background(), ws, snapshot.Options{})
		must(t, err)
		return m
	}
	before := take()
	if got := diff.HardlinkEscapes(before); !reflect.DeepEqual(got, []string{"data/m", "data/r", "data/untouched", "data/x"}) {
		t.Errorf("HardlinkEscapes(before) = %q", got)
	}

	// The "script".
	f, err := os.OpenFile(filepath.Join(ws, "data/x"), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	f.WriteString("more\n")
	f.Close()
	link(filepath.Join(out, "y"), filepath.Join(ws, "data/y"))
	link(filepath.Join(ws, "data/twin-a"), filepath.Join(ws, "data/twin-b"))
	link(filepath.Join(out, "y"), filepath.Join(ws, "data/y2")) // 3 names, 2 inside
	write(t, ws, "data/r.tmp", "new r\n")
	must(t, os.Rename(filepath.Join(ws, "data/r.tmp"), filepath.Join(ws, "data/r")))
	must(t, os.Chmod(filepath.Join(ws, "data/m"), 0o600))
	if b, _ := os.ReadFile(filepath.Join(out, "x")); string(b) != "outside x\nmore\n" {
		t.Fatalf("the write did not go through to the outside name: %q", b)
	}

	after := take()
	changes := diff.Compare(before, after, diff.Options{})
	type got struct {
		kind    diff.Kind
		risk    diff.Risk
		nlink   uint32
		inside  int
		aspects string
	}
	gots := map[string]got{}
	for _, c := range changes {
		as := make([]string, len(c.Aspects))
		for i, a := range c.Aspects {
			as[i] = string(a)
		}
		var n uint32
		if c.After != nil {
			n = c.After.Nlink
		}
		gots[c.Path] = got{c.Kind, c.Risk, n, c.LinksInside, strings.Join(as, ",")}
	}
	want := map[string]got{
		"data/x":      {diff.Changed, diff.HardlinkEscape, 2, 1, "content"},
		"data/m":      {diff.Changed, diff.HardlinkEscape, 2, 1, "mode"},
		"data/y":      {diff.Added, diff.HardlinkEscape, 3, 2, ""},
		"data/y2":     {diff.Added, diff.HardlinkEscape, 3, 2, ""},
		"data/twin-b": {diff.Added, "", 2, 0, ""},
		"data/r":      {diff.Changed, "", 0, 0, "content"},
	}
	// data/twin-a gained a name inside the workspace: only its ctime and
	// link count changed, which is not a change.
	if !reflect.DeepEqual(gots, want) {
		t.Errorf("changes:\n got %+v\nwant %+v", gots, want)
	}
	if got := diff.HardlinkEscapes(after); !reflect.DeepEqual(got, []string{"data/m", "data/untouched", "data/x", "data/y", "data/y2"}) {
		t.Errorf("HardlinkEscapes(after) = %q", got)
	}

	// The JSON of a change carries the count; reading it back keeps it.
	for _, c := range changes {
		if c.Path != "data/y" {
			continue
		}
		b, err := json.Marshal(c)
		must(t, err)
		if !strings.Contains(string(b), `"risk":"hardlink-escape"`) || !strings.Contains(string(b), `"links_inside":2`) || !strings.Contains(string(b), `"nlink":3`) {
			t.Errorf("JSON %s", b)
		}
		var back diff.Change
		must(t, json.Unmarshal(b, &back))
		if back.LinksInside != 2 || back.After.Nlink != 3 || back.Risk != diff.HardlinkEscape {
			t.Errorf("read back %+v", back)
		}
	}
}

func TestHardlinkEscape(t *testing.T) { testHardlinkEscape(t) }

func TestHardlinkEscapeAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testHardlinkEscape(t)
}
