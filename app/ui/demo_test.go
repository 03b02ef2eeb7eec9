//go:build !js

package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/report"
)

// TestDemoLeavesNothingBehind: a staged demo run is marked as the demo's
// in the History, and closing the app removes the demo's copy and
// discards its stage (recorded: no demo run waits to be applied).
func TestDemoLeavesNothingBehind(t *testing.T) {
	demoDir, stageBase := t.TempDir(), t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "history.db")
	u, l, _ := newTestUI(t, Options{DemoDir: demoDir, StageBase: stageBase, DBPath: dbPath})
	r := runInputs(t, u, l)
	if r.Stage == nil || r.Stage.State != report.StagePending {
		t.Fatalf("the demo run is not staged: %+v", r.Stage)
	}
	showHistory(t, u, l)
	if rows := shownRows(t, u, l); len(rows) != 1 || !strings.Contains(rows[0], " (demo) | ") || !strings.HasSuffix(rows[0], "| To apply") {
		t.Errorf("history rows %q", rows)
	}
	u.Close()
	if ents, _ := os.ReadDir(demoDir); len(ents) != 0 {
		t.Errorf("demo copies left behind: %v", ents)
	}
	if ents, _ := os.ReadDir(stageBase); len(ents) != 0 {
		t.Errorf("stages left behind: %v", ents)
	}
	db := openDB(t, dbPath)
	st, err := db.StageOf(context.Background(), 1)
	if err != nil || st.State != report.StageDiscarded {
		t.Errorf("the demo run's stage after exit: %+v %v", st, err)
	}
}
