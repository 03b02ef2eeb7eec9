//go:build unix

package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// The real-browser check renders the HTML report in headless Chromium and
// looks at the pixels. Without /usr/bin/chromium it is skipped, unless CI is
// set (then a missing browser fails the test). Set REPORT_SHOT_DIR to keep
// the screenshots.

const chromiumPath = "/usr/bin/chromium"

func chromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err == nil {
		return chromiumPath
	}
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatalf("CI=%s but %s is missing: the HTML report cannot be checked in a browser", ci, chromiumPath)
	}
	t.Skipf("%s not found (set CI=true to make this a failure)", chromiumPath)
	return ""
}

// runChromium runs headless Chromium on page with extra arguments, in its
// own process group (killed on timeout) and its own profile and home.
func runChromium(t *testing.T, bin, dir, page string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--no-first-run", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(dir, "profile")}
	args = append(args, extra...)
	args = append(args, "file://"+page)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // no stray helpers
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(extra, " "), err, lastLines(stderr.String(), 20))
	}
	return stdout.Bytes()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// writePage writes r's HTML into a fresh directory.
func writePage(t *testing.T, r *Report) (dir, page string) {
	t.Helper()
	dir = t.TempDir()
	page = filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, page
}

// screenshot renders r at 1200x1600 and returns the decoded PNG and the
// browser's DOM (--dump-dom), from one run.
func screenshot(t *testing.T, r *Report, name string, extra ...string) (image.Image, *html.Node) {
	t.Helper()
	bin := chromium(t)
	dir, page := writePage(t, r)
	shot := filepath.Join(dir, "shot.png")
	dom := runChromium(t, bin, dir, page, append([]string{"--dump-dom", "--screenshot=" + shot, "--window-size=1200,1600"}, extra...)...)
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if keep := os.Getenv("REPORT_SHOT_DIR"); keep != "" {
		if err := os.WriteFile(filepath.Join(keep, name+".png"), data, 0o644); err != nil {
			t.Log(err)
		}
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 1600 {
		t.Fatalf("screenshot is %dx%d, want 1200x1600", b.Dx(), b.Dy())
	}
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	if byID(doc, "verdict") == nil {
		t.Fatalf("the browser's DOM has no #verdict:\n%.2000s", dom)
	}
	return img, doc
}

type rgb struct{ r, g, b uint8 }

func hexColor(t *testing.T, s string) rgb {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	if err != nil || len(s) != 7 {
		t.Fatalf("bad colour %q", s)
	}
	return rgb{uint8(v >> 16), uint8(v >> 8), uint8(v)}
}

// countColours counts, for each wanted colour, the pixels within tol of it
// on every channel.
func countColours(img image.Image, tol int, want map[string]rgb) map[string]int {
	counts := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p := pixel(img, x, y)
			for name, c := range want {
				if p.near(c, tol) {
					counts[name]++
				}
			}
		}
	}
	return counts
}

// pixel returns the colour at (x, y), reading the pixel buffer directly
// for the formats Chromium writes (img.At is slow under -race).
func pixel(img image.Image, x, y int) rgb {
	switch m := img.(type) {
	case *image.NRGBA:
		i := m.PixOffset(x, y)
		return rgb{m.Pix[i], m.Pix[i+1], m.Pix[i+2]}
	case *image.RGBA:
		i := m.PixOffset(x, y)
		return rgb{m.Pix[i], m.Pix[i+1], m.Pix[i+2]}
	}
	r, g, b, _ := img.At(x, y).RGBA()
	return rgb{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
}

func (p rgb) near(c rgb, tol int) bool {
	return near(p.r, c.r, tol) && near(p.g, c.g, tol) && near(p.b, c.b, tol)
}

// solidLines counts the lines of pixels that are c across the middle of
// the page (x from 100 to 1100, where the banner spans), and the first one.
func solidLines(img image.Image, c rgb) (n, first int) {
	first = -1
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		solid := true
		for x := 100; x < 1100 && solid; x += 5 {
			solid = pixel(img, x, y).near(c, tolerance)
		}
		if solid {
			if first < 0 {
				first = y
			}
			n++
		}
	}
	return n, first
}

func near(v, c uint8, tol int) bool {
	d := int(v) - int(c)
	return d >= -tol && d <= tol
}

func paletteColour(t *testing.T, p palette, name string) rgb {
	for _, kv := range p {
		if kv[0] == name {
			return hexColor(t, kv[1])
		}
	}
	t.Fatalf("no colour %s", name)
	return rgb{}
}

const (
	tolerance = 3
	// A banner is ~1100x180 pixels and a table row ~1100x40; text,
	// borders and badges in a colour stay far below these.
	bannerPixels = 40000
	rowPixels    = 8000
)

func TestBrowserScreenshot(t *testing.T) {
	t.Run("fail", func(t *testing.T) {
		t.Parallel()
		img, doc := screenshot(t, fixtureReport(), "fail")
		n := countColours(img, tolerance, map[string]rgb{
			"banner red": hexColor(t, colorFail), "banner green": hexColor(t, colorPass),
			"added row": hexColor(t, colorAddedRow), "removed row": hexColor(t, colorRemovedRow),
			"changed row": hexColor(t, colorChangedRow), "diff +": hexColor(t, colorDiffAdd), "diff -": hexColor(t, colorDiffDel),
		})
		t.Logf("pixels: %v", n)
		for name, min := range map[string]int{"banner red": bannerPixels, "added row": rowPixels, "removed row": rowPixels,
			"changed row": rowPixels, "diff +": 4000, "diff -": 4000} {
			if n[name] < min {
				t.Errorf("%d pixels of the %s colour, want at least %d", n[name], name, min)
			}
		}
		if n["banner green"] >= bannerPixels {
			t.Errorf("a failing report shows %d pixels of the passing green", n["banner green"])
		}
		// The banner is a band at the top: whole lines of pixels across
		// the page are its red, all above y=400.
		if lines, first := solidLines(img, hexColor(t, colorFail)); lines < 20 || first > 400 {
			t.Errorf("%d solid lines of banner red, the first at y=%d; want a band of 20+ at the top", lines, first)
		}
		checkDOM(t, doc)
	})
	t.Run("pass", func(t *testing.T) {
		t.Parallel()
		img, doc := screenshot(t, passingReport(), "pass")
		n := countColours(img, tolerance, map[string]rgb{
			"banner red": hexColor(t, colorFail), "banner green": hexColor(t, colorPass),
			"added row": hexColor(t, colorAddedRow), "allowed row": hexColor(t, colorAllowedRow),
		})
		t.Logf("pixels: %v", n)
		if n["banner green"] < bannerPixels {
			t.Errorf("%d pixels of the passing green, want at least %d", n["banner green"], bannerPixels)
		}
		if lines, first := solidLines(img, hexColor(t, colorPass)); lines < 20 || first > 400 {
			t.Errorf("%d solid lines of banner green, the first at y=%d; want a band of 20+ at the top", lines, first)
		}
		if lines, _ := solidLines(img, hexColor(t, colorFail)); lines > 0 || n["banner red"] > 2000 {
			t.Errorf("a passing report shows the failing red: %d lines, %d pixels", lines, n["banner red"])
		}
		if b := byID(doc, "verdict"); attr(b, "class") != "banner pass" {
			t.Errorf("banner class %q in the browser's DOM", attr(b, "class"))
		}
		if rows := changeRows(doc); len(rows) != 1 || attr(rows[0], "data-allowed") != "true" {
			t.Errorf("%d rows in the browser's DOM", len(rows))
		}
		// Its only change is allowed: muted grey, not green.
		if n["added row"] > 0 {
			t.Errorf("an allowed row is coloured as a violation (%d pixels)", n["added row"])
		}
		if n["allowed row"] < rowPixels {
			t.Errorf("%d pixels of the allowed row grey", n["allowed row"])
		}
	})
	t.Run("dark", func(t *testing.T) {
		t.Parallel()
		img, _ := screenshot(t, fixtureReport(), "dark", "--force-dark-mode")
		n := countColours(img, tolerance, map[string]rgb{
			"background": paletteColour(t, darkPalette, "bg"), "banner red": paletteColour(t, darkPalette, "fail"),
			"added row": paletteColour(t, darkPalette, "added-row"), "light background": hexColor(t, "#ffffff"),
		})
		t.Logf("pixels: %v", n)
		if n["background"] < 200000 || n["banner red"] < bannerPixels || n["added row"] < rowPixels {
			t.Errorf("the dark scheme is not applied: %v", n)
		}
		if n["light background"] > 20000 {
			t.Errorf("%d white pixels in dark mode", n["light background"])
		}
	})
}

// checkDOM checks the fixture's page as the browser parsed it.
func checkDOM(t *testing.T, doc *html.Node) {
	t.Helper()
	banner := byID(doc, "verdict")
	if banner == nil || attr(banner, "class") != "banner fail" {
		t.Fatalf("the browser's DOM has no failing banner")
	}
	rows := changeRows(doc)
	var got []string
	for _, row := range rows {
		// Each row stayed inside its table (the parser did not move it).
		inTable := false
		for p := row.Parent; p != nil; p = p.Parent {
			if isElem("table")(p) && hasClass(p, "changes-table") {
				inTable = true
			}
		}
		if !inTable {
			t.Errorf("row %q is outside the changes table", textOf(row))
		}
		got = append(got, attr(row, "data-kind")+"/"+attr(row, "data-allowed"))
	}
	want := "changed/false removed/false added/false added/false changed/false added/false added/true added/true added/true"
	if strings.Join(got, " ") != want {
		t.Errorf("rows in the browser's DOM:\n %s\nwant\n %s", strings.Join(got, " "), want)
	}
	if n := len(byClass(doc, "tr", "allowed")); n != 3+3 { // each allowed change: its row and its detail row
		t.Errorf("%d allowed rows", n)
	}
	if n := len(findAll(doc, func(n *html.Node) bool { return isElem("span")(n) && hasClass(n, "add") })); n != 4+3 {
		t.Errorf("%d added diff lines in the DOM, want 7 (config.json 4, docs 3)", n)
	}
}
