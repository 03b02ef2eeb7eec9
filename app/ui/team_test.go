package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/pgtest"
)

// TestHistoryTabOnTeamStore: the app with a team store (DBPath a
// postgres:// URL, as DIFFGATE_DB): runs are recorded on the server and
// the History tab lists them, with their decisions.
func TestHistoryTabOnTeamStore(t *testing.T) {
	srv := pgtest.Start(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the team store's local caches: never the user's
	t.Setenv("DIFFGATE_DB", "")
	url := srv.URL("owner", srv.NewDB(t, "owner"))
	u, l, _ := newTestUI(t, Options{DBPath: url})
	ws := workspace(t)
	r1 := runScript(t, u, l, ws, "echo x > new.txt\n", nil)
	test := func(cond bool, format string, a ...any) {
		t.Helper()
		if !cond {
			t.Fatalf(format, a...)
		}
	}
	test(r1.Verdict == report.Fail, "verdict %s", r1.Verdict)
	r2 := runScript(t, u, l, ws, "mkdir -p logs && echo ok > logs/run.log\n", []string{"logs/"})
	test(r2.Verdict == report.Pass, "verdict %s", r2.Verdict)
	u.Tabs.Select(u.historyItem)
	l.settle(50 * time.Millisecond)
	rows := shownRows(t, u, l)
	test(len(rows) == 2 && strings.HasPrefix(rows[0], "2 | ") && strings.Contains(rows[0], "| PASS |") &&
		strings.HasPrefix(rows[1], "1 | ") && strings.Contains(rows[1], "| FAIL |"), "history rows on the team store:\n%s", strings.Join(rows, "\n"))
	db := openDB(t, url)
	if b, err := db.Verify(t.Context()); b != nil || err != nil {
		t.Errorf("verify: %+v, %v", b, err)
	}
}
