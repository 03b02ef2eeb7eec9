package browsertest

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"strconv"
	"strings"
	"testing"
)

// RGB is a colour on screen.
type RGB struct{ R, G, B uint8 }

// Hex parses "#rrggbb". It panics on anything else: the tests pass their
// palettes' constants.
func Hex(s string) RGB {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	if err != nil || len(s) != 7 || s[0] != '#' {
		panic(fmt.Sprintf("browsertest: bad colour %q", s))
	}
	return RGB{uint8(v >> 16), uint8(v >> 8), uint8(v)}
}

// Near reports whether p is within tol of c on every channel.
func (p RGB) Near(c RGB, tol int) bool {
	return near(p.R, c.R, tol) && near(p.G, c.G, tol) && near(p.B, c.B, tol)
}

func near(v, c uint8, tol int) bool {
	d := int(v) - int(c)
	return d >= -tol && d <= tol
}

// DecodePNG decodes a screenshot, failing the test when it is not a PNG.
func DecodePNG(t testing.TB, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	return img
}

// Pixel returns the colour at (x, y), reading the pixel buffer directly for
// the formats Chromium writes (img.At is slow under -race).
func Pixel(img image.Image, x, y int) RGB {
	switch m := img.(type) {
	case *image.NRGBA:
		i := m.PixOffset(x, y)
		return RGB{m.Pix[i], m.Pix[i+1], m.Pix[i+2]}
	case *image.RGBA:
		i := m.PixOffset(x, y)
		return RGB{m.Pix[i], m.Pix[i+1], m.Pix[i+2]}
	}
	r, g, b, _ := img.At(x, y).RGBA()
	return RGB{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
}

// Rect is a rectangle in CSS pixels (= screenshot pixels at scale 1), as
// getBoundingClientRect gives it.
type Rect struct {
	X, Y, Width, Height float64
}

// Bounds returns the whole image as a Rect.
func Bounds(img image.Image) Rect {
	b := img.Bounds()
	return Rect{X: float64(b.Min.X), Y: float64(b.Min.Y), Width: float64(b.Dx()), Height: float64(b.Dy())}
}

// pixels calls f for each pixel of img inside r.
func pixels(img image.Image, r Rect, f func(RGB)) {
	b := img.Bounds()
	x0, y0 := max(b.Min.X, int(r.X)), max(b.Min.Y, int(r.Y))
	x1, y1 := min(b.Max.X, ceil(r.X+r.Width)), min(b.Max.Y, ceil(r.Y+r.Height))
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			f(Pixel(img, x, y))
		}
	}
}

func ceil(v float64) int {
	i := int(v)
	if float64(i) < v {
		i++
	}
	return i
}

// Count counts the pixels inside r within tol of c on every channel.
func Count(img image.Image, c RGB, tol int, r Rect) int {
	n := 0
	pixels(img, r, func(p RGB) {
		if p.Near(c, tol) {
			n++
		}
	})
	return n
}

// CountEach counts, for each named colour, the pixels of the whole image
// within tol of it.
func CountEach(img image.Image, tol int, want map[string]RGB) map[string]int {
	counts := map[string]int{}
	pixels(img, Bounds(img), func(p RGB) {
		for name, c := range want {
			if p.Near(c, tol) {
				counts[name]++
			}
		}
	})
	return counts
}

// Reddish counts the pixels inside r whose red clearly dominates (a tinted
// error background, its border and icon).
func Reddish(img image.Image, r Rect) int {
	n := 0
	pixels(img, r, func(p RGB) {
		if int(p.R)-int(p.G) > 15 && int(p.R)-int(p.B) > 15 {
			n++
		}
	})
	return n
}

// Colors counts the distinct colours (5 bits a channel) of every 7th pixel:
// a blank page has one or two.
func Colors(img image.Image) int {
	seen := map[RGB]bool{}
	b := img.Bounds()
	i := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if i%7 == 0 {
				p := Pixel(img, x, y)
				seen[RGB{p.R >> 3, p.G >> 3, p.B >> 3}] = true
			}
			i++
		}
	}
	return len(seen)
}
