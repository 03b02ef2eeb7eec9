// Package smoke starts the real desktop binary under Xvfb: it runs the
// bundled demo through the gate in --screenshot mode and checks the PNG it
// writes and the run it records. It builds nothing itself: `make smoke`
// builds bin/diffgate-app and passes it in DIFFGATE_SMOKE_BIN.
package smoke

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/report"
)

// timeout bounds the whole app run (the app itself gives up after 2 min).
const timeout = 150 * time.Second

// reds are the FAIL banner's red in the diffgate theme's dark and light
// variants (style.FailColor).
var reds = [][3]int{{0xf8, 0x51, 0x49}, {0xcf, 0x22, 0x2e}}

func TestSmoke(t *testing.T) {
	bin := os.Getenv("DIFFGATE_SMOKE_BIN")
	if bin == "" {
		t.Skip("DIFFGATE_SMOKE_BIN is not set (make smoke builds the app and sets it)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("DIFFGATE_SMOKE_BIN: %v", err)
	}
	xvfb, err := exec.LookPath("xvfb-run")
	if err != nil {
		t.Fatalf("xvfb-run not found (install xvfb and xauth): %v", err)
	}
	tmp := t.TempDir()
	shot := filepath.Join(tmp, "shot.png")
	dbPath := filepath.Join(tmp, "db", "history.db")

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, xvfb, "-a", "-s", "-screen 0 1400x900x24", bin, "--screenshot", shot)
	cmd.Env = append(os.Environ(),
		history.EnvDB+"="+dbPath,
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"), // Fyne's preferences
		"TMPDIR="+tmp,                                   // the demo copy
		"DIFFGATE_NO_NATIVE_DIALOG=1",
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	t.Logf("the app ran %s", time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("the app did not finish within %s; output:\n%s", timeout, out.String())
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("the app exited with %d; output:\n%s", ee.ExitCode(), out.String())
		}
		t.Fatalf("run the app: %v", err)
	}

	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v; output:\n%s", err, out.String())
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	checkImage(t, img)

	// The app recorded the demo run in the database it was given.
	db, err := history.Open(dbPath, zerolog.Nop())
	if err != nil {
		t.Fatalf("history database: %v", err)
	}
	defer db.Close()
	runs, err := db.List(context.Background(), history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Verdict != report.Fail || filepath.Base(runs[0].Script) != "demo.sh" || runs[0].Violations == 0 {
		t.Errorf("recorded runs: %+v", runs)
	}
}

// checkImage checks the screenshot's size, that it is not blank, and that
// it shows the FAIL banner's red (the demo fails).
func checkImage(t *testing.T, img image.Image) {
	t.Helper()
	b := img.Bounds()
	t.Logf("screenshot %dx%d", b.Dx(), b.Dy())
	if b.Dx() < 1200 || b.Dy() < 780 || b.Dx() > 2*1400 || b.Dy() > 2*900 {
		t.Errorf("screenshot size %dx%d, want about 1400x900", b.Dx(), b.Dy())
	}
	colors := map[[3]uint8]bool{}
	red := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}
			colors[c] = true
			for _, want := range reds {
				if near(c, want, 24) {
					red++
					break
				}
			}
		}
	}
	t.Logf("%d distinct colors, %d pixels of the FAIL red", len(colors), red)
	if len(colors) < 200 {
		t.Errorf("only %d distinct colors: the screenshot looks blank", len(colors))
	}
	if red < 300 {
		t.Errorf("only %d pixels near the FAIL banner's red: no FAIL banner on the screenshot", red)
	}
}

func near(c [3]uint8, want [3]int, tol int) bool {
	for i := range c {
		d := int(c[i]) - want[i]
		if d < -tol || d > tol {
			return false
		}
	}
	return true
}
