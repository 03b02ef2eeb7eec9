package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/internal/testenv"
)

// TestStagedRun: a staged run (overlay where this machine has one, and the
// copy fallback) reports exactly what a direct run reports, text diff
// included, leaves the workspace untouched, and applying its changes gives
// the workspace a direct run leaves. As root and as a normal user.
func TestStagedRun(t *testing.T) {
	testenv.SelfAndUser(t, stagedRun)
}

const stagedScript = `printf '{\n  "debug": true\n}\n' > config.json; echo hi >> logs/run.log; rm keep.txt; mkdir -p new/dir; ln -s ../config.json new/dir/link`

func stagedRun(t *testing.T) {
	mechs := []stage.Mechanism{stage.Copy}
	if p := stage.Probe(context.Background(), t.TempDir()); p.Mechanism == stage.Overlay {
		mechs = append(mechs, stage.Overlay)
	} else {
		t.Logf("no overlay here: %s", p.Why)
	}
	direct, dws := gateRun(t, stagedScript, gate.Config{Allow: []string{"logs/"}, Timeout: time.Minute})
	for _, m := range mechs {
		t.Run(string(m), func(t *testing.T) {
			ws, path := workspace(t, stagedScript)
			pristine := read(t, ws)
			st, err := stage.New(t.TempDir(), ws, m)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Discard() })
			res, err := gate.Run(context.Background(), gate.Config{Workspace: ws, Script: path, Allow: []string{"logs/"},
				Timeout: time.Minute, Stage: st})
			if err != nil {
				t.Fatal(err)
			}
			if c := res.StageCost; c == nil || c.Read <= 0 || (m == stage.Copy) != (c.Copy.Files > 0 && c.Prepare > 0) {
				t.Errorf("stage cost %+v for %s", c, m)
			}
			if direct.StageCost != nil {
				t.Errorf("a direct run has a stage cost %+v", direct.StageCost)
			}
			if got, want := lines(res.Report), lines(direct.Report); got != want || res.Report.Verdict != direct.Report.Verdict {
				t.Fatalf("staged: %s\n%s\ndirect: %s\n%s", res.Report.Verdict, got, direct.Report.Verdict, want)
			}
			var td string
			for _, c := range res.Report.Changes {
				if c.Path == "config.json" {
					td = c.TextDiff
				}
			}
			if !strings.Contains(td, `+  "debug": true`) {
				t.Fatalf("no text diff for config.json: %q", td)
			}
			if now := read(t, ws); now != pristine {
				t.Fatalf("the workspace changed:\n%s\nwas:\n%s", now, pristine)
			}
			if _, err := st.Apply(context.Background(), res.Report.Changes, stage.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			if got, want := read(t, ws), read(t, dws); got != want {
				t.Fatalf("applied:\n%s\ndirect:\n%s", got, want)
			}
		})
	}
}

// read describes a tree: each entry's path, mode and content or target.
func read(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		fi, _ := d.Info()
		b.WriteString(rel + " " + fi.Mode().String())
		switch {
		case d.Type().IsRegular():
			c, _ := os.ReadFile(p)
			b.WriteString(" " + string(c))
		case d.Type()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			b.WriteString(" -> " + l)
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}
