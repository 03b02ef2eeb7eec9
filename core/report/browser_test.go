//go:build unix

package report

import (
	"bytes"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"

	"github.com/diffgate/diffgate/internal/browsertest"
)

// The real-browser check renders the HTML report in headless Chromium
// (internal/browsertest: the system browser driven with chromedp) and looks
// at the pixels. Without /usr/bin/chromium it is skipped, unless CI is set
// (then a missing browser fails the test). Set REPORT_SHOT_DIR to keep the
// screenshots.

// writePage writes r's HTML into a fresh directory.
func writePage(t testing.TB, r *Report) (page string) {
	t.Helper()
	page = filepath.Join(t.TempDir(), "report.html")
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return page
}

// screenshot renders r in a 1200x1600 tab of b and returns the decoded PNG
// and the browser's DOM.
func screenshot(t *testing.T, b *browsertest.Browser, r *Report, name string, dark bool) (image.Image, *html.Node) {
	t.Helper()
	tab := b.NewTab(t, browsertest.TabOptions{Width: 1200, Height: 1600, Dark: dark})
	tab.Navigate("file://" + writePage(t, r))
	data := tab.Screenshot()
	dom := browsertest.Run(tab, "read the DOM", chromedp.OuterHTML(chromedp.CSS("html")))
	if keep := os.Getenv("REPORT_SHOT_DIR"); keep != "" {
		if err := os.WriteFile(filepath.Join(keep, name+".png"), data, 0o644); err != nil {
			t.Log(err)
		}
	}
	img := browsertest.DecodePNG(t, data)
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 1600 {
		t.Fatalf("screenshot is %dx%d, want 1200x1600", b.Dx(), b.Dy())
	}
	if p := tab.Problems(); len(p) > 0 {
		t.Errorf("the page: %s", strings.Join(p, "; "))
	}
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	if byID(doc, "verdict") == nil {
		t.Fatalf("the browser's DOM has no #verdict:\n%.2000s", dom)
	}
	return img, doc
}

type rgb = browsertest.RGB

func hexColor(t *testing.T, s string) rgb {
	t.Helper()
	return browsertest.Hex(s)
}

// countColours counts, for each wanted colour, the pixels within tol of it
// on every channel.
func countColours(img image.Image, tol int, want map[string]rgb) map[string]int {
	return browsertest.CountEach(img, tol, want)
}

// solidLines counts the lines of pixels that are c across the middle of
// the page (x from 100 to 1100, where the banner spans), and the first one.
func solidLines(img image.Image, c rgb) (n, first int) {
	first = -1
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		solid := true
		for x := 100; x < 1100 && solid; x += 5 {
			solid = browsertest.Pixel(img, x, y).Near(c, tolerance)
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
	b := browsertest.Start(t)
	t.Run("fail", func(t *testing.T) {
		t.Parallel()
		img, doc := screenshot(t, b, fixtureReport(), "fail", false)
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
		img, doc := screenshot(t, b, passingReport(), "pass", false)
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
		img, _ := screenshot(t, b, fixtureReport(), "dark", true)
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
	want := "added/false changed/false changed/false removed/false added/false added/false added/true added/true added/true"
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

// TestBrowserGuardedGroups: blocked actions and changes outside the
// workspace are groups of their own colours in the rendered page, apart
// from the changes' colours, in the light and the dark scheme.
func TestBrowserGuardedGroups(t *testing.T) {
	b := browsertest.Start(t)
	r := guardedReport()
	r.Changes = nil
	r.Process = Process{Leftovers: []Leftover{}}
	r.Evaluate()
	for _, dark := range []bool{false, true} {
		p, name := lightPalette, "guarded"
		if dark {
			p, name = darkPalette, "guarded-dark"
		}
		img, doc := screenshot(t, b, r, name, dark)
		n := countColours(img, tolerance, map[string]rgb{
			"blocked row": paletteColour(t, p, "blocked-row"), "outside row": paletteColour(t, p, "outside-row"),
			"blocked accent": paletteColour(t, p, "blocked-accent"), "outside accent": paletteColour(t, p, "outside-accent"),
			"changed row": paletteColour(t, p, "changed-row"), "added row": paletteColour(t, p, "added-row"),
		})
		t.Logf("%s pixels: %v", name, n)
		// 3 blocked rows and 5 outside rows of ~1100x40 pixels each.
		if n["blocked row"] < 3*rowPixels || n["outside row"] < 5*rowPixels {
			t.Errorf("%s: %d blocked-row and %d outside-row pixels, want at least %d and %d", name, n["blocked row"], n["outside row"], 3*rowPixels, 5*rowPixels)
		}
		if n["blocked accent"] < 500 || n["outside accent"] < 500 {
			t.Errorf("%s: the groups' accents are missing: %v", name, n)
		}
		if n["changed row"] > 0 || n["added row"] > 0 {
			t.Errorf("%s: a report without changes shows change colours: %v", name, n)
		}
		if byID(doc, "blocked") == nil || byID(doc, "outside") == nil {
			t.Errorf("%s: no blocked or outside section in the browser's DOM", name)
		}
	}
	if colorBlockedRow != paletteColourHex(lightPalette, "blocked-row") || colorOutsideRow != paletteColourHex(lightPalette, "outside-row") {
		t.Error("the colour constants and the light palette disagree")
	}
}

func paletteColourHex(p palette, name string) string {
	for _, kv := range p {
		if kv[0] == name {
			return kv[1]
		}
	}
	return ""
}
