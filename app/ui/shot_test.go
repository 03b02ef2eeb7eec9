package ui

import (
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/diffgate/diffgate/app/internal/uitest"
)

// TestShots renders the Run tab mid-run and after it, with Fyne's software
// painter, into $DIFFGATE_SHOT_DIR; a quick look, skipped unless asked for.
func TestShots(t *testing.T) {
	dir := os.Getenv("DIFFGATE_SHOT_DIR")
	if dir == "" {
		t.Skip("set DIFFGATE_SHOT_DIR")
	}
	u, l, w := newTestUI(t, Options{})
	w.Resize(fyne.NewSize(1400, 900))
	shot := func(name string) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		png.Encode(f, w.Canvas().Capture())
	}
	l.settle(300 * time.Millisecond)
	shot("run-idle.png")
	ws, sc := t.TempDir(), t.TempDir()
	for i := 0; i < 200; i++ {
		os.WriteFile(filepath.Join(ws, "f"+strconv.Itoa(i)), []byte(strings.Repeat("x", i*100)), 0o644)
	}
	script := writeScript(t, sc, "for i in $(seq 1 40); do echo \"step $i: doing things\"; done\necho 'warning: something odd' >&2\nsleep 3\necho done\n")
	u.run.setInputs(ws, script, []string{"logs/"})
	u.run.timeout.SetText("10s")
	test.Tap(u.run.runBtn)
	l.until(t, "output", 20*time.Second, func() bool { return strings.Contains(u.run.output.text(), "odd") })
	l.settle(500 * time.Millisecond)
	shot("run-running.png")
	l.until(t, "the end", 20*time.Second, func() bool { return !u.run.running })
	u.Tabs.Select(u.runItem)
	l.settle(200 * time.Millisecond)
	shot("run-done.png")
	runScript(t, u, l, ws, "echo 'debug = true' > f1\nrm f2\nmkdir -p logs && echo x > logs/a\n", []string{"logs/"})
	uitest.Button(t, u.Review(), "Approve allowlist").OnTapped()
	approveAnyway(t, u)
	u.Tabs.Select(u.historyItem)
	l.settle(300 * time.Millisecond)
	shot("history.png")
}
