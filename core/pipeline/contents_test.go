//go:build !js

package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/testenv"
)

const bigEdit = "sed -i 's/^0061234 the quick/0061234 the QUICK/' big.log\n"

// Contents finds a staged run's large file: the before in the workspace,
// the after in the stage, both checked against their hashes; after a
// direct run only the after is there, and the error says why the before is
// not.
func TestContentsOfALargeFile(t *testing.T) {
	ws, scripts, db := setup(t)
	old := testenv.NumberedLines(110_000) // 5.5 MiB
	if err := os.WriteFile(filepath.Join(ws, "big.log"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	out, err := preflightRun(context.Background(), Options{Config: gate.Config{Workspace: ws, Script: script(t, scripts, bigEdit), Contain: contain.Policy{Mode: contain.Auto}},
		History: db, Stage: true, StageMechanism: stage.Copy, StageBase: base})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Report
	c := &r.Changes[0]
	if c.Path != "big.log" || r.Stage == nil {
		t.Fatalf("changes %v, stage %v", r.Changes, r.Stage)
	}
	src := ContentsOf(r, nil, db, base)
	before, after, err := src.Load(context.Background(), c, textdiff.MaxFullInput)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != old || !strings.Contains(string(after), "0061234 the QUICK") {
		t.Fatalf("before %d bytes (want the original), after %d", len(before), len(after))
	}
	if _, _, err := src.Load(context.Background(), c, 1<<20); err == nil || !strings.Contains(err.Error(), "over the 1 MiB limit") {
		t.Errorf("bound: %v", err)
	}

	// A direct run: the workspace holds the after, no copy of the before.
	out, err = preflightRun(context.Background(), Options{Config: gate.Config{Workspace: ws, Script: script(t, scripts, bigEdit), Contain: contain.Policy{Mode: contain.Auto}}, History: db})
	if err != nil {
		t.Fatal(err)
	}
	src = ContentsOf(out.Report, out.Contents, db, "")
	c = &out.Report.Changes[0]
	_, _, err = src.Load(context.Background(), c, textdiff.MaxFullInput)
	if err == nil || !strings.Contains(err.Error(), "the before-content (5.5 MiB) was not kept") || !strings.Contains(err.Error(), "a staged run keeps the workspace") {
		t.Errorf("direct run: %v", err)
	}
	// Once the file changes again, the after is gone too (never another
	// content under its name).
	if err := os.WriteFile(filepath.Join(ws, "big.log"), []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.Before = nil // as if added: only the after is asked for
	if _, _, err := src.Load(context.Background(), c, textdiff.MaxFullInput); err == nil || !strings.Contains(err.Error(), "the after-content (5.5 MiB) is gone") {
		t.Errorf("after changed: %v", err)
	}
}
