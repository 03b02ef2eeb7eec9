package web

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"github.com/go-text/typesetting/di"
	"github.com/go-text/typesetting/font"
	"github.com/go-text/typesetting/shaping"
	"golang.org/x/image/math/fixed"
)

func face(t *testing.T, r fyne.Resource) *font.Face {
	t.Helper()
	f, err := font.ParseTTF(bytes.NewReader(r.Content()))
	if err != nil {
		t.Fatalf("%s: %v", r.Name(), err)
	}
	return f
}

// uiSources are the Go files whose strings the web app can show: the review
// and web packages and the engine's messages. The Markdown and HTML writers
// are left out: their emoji are for GitHub and browsers, not for Fyne.
var uiSources = []string{"../review", ".", "../style", "../../core/report", "../../core/policy", "../../core/diff", "../../core/snapshot"}

// faceChain is a text face as Fyne builds it for the web theme: the theme's
// font (Symbols), then Noto Sans; a character none has gets the first.
type faceChain []*font.Face

func (c faceChain) ResolveFace(r rune) *font.Face {
	for _, f := range c {
		if _, ok := f.NominalGlyph(r); ok {
			return f
		}
	}
	return c[0]
}

// notdefs shapes s as Fyne does (split by script and face, then HarfBuzz)
// and returns the characters that come out as glyph 0, which Fyne draws as
// the replacement character.
func (c faceChain) notdefs(s string) []rune {
	text := []rune(s)
	in := shaping.Input{Text: text, RunEnd: len(text), Direction: di.DirectionLTR, Face: c.ResolveFace(' '), Size: fixed.I(20)}
	var seg shaping.Segmenter
	var bad []rune
	for _, run := range seg.Split(in, c) {
		for _, g := range (&shaping.HarfbuzzShaper{}).Shape(run).Glyphs {
			if g.GlyphID == 0 {
				bad = append(bad, text[g.ClusterIndex])
			}
		}
	}
	return bad
}

// TestWebFontsCoverTheUI shapes every string of the UI that has a
// non-ASCII character with the web theme's faces (Symbols, then Noto Sans
// regular or bold) and fails on any character drawn as the replacement
// character: the browser has no other font for Fyne (the web build has no
// emoji font). A space after a symbol stays in the symbol's run, so it is
// checked too ("⚠ risk" came out as "⚠�risk" with a symbol font without one).
func TestWebFontsCoverTheUI(t *testing.T) {
	sym := face(t, Symbols)
	chains := map[string]faceChain{
		"regular": {sym, face(t, theme.DefaultTextFont())},
		"bold":    {sym, face(t, theme.DefaultTextBoldFont())},
	}
	fset := token.NewFileSet()
	seen := 0
	var missing []string
	for _, dir := range uiSources {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, file := range files {
			base := filepath.Base(file)
			if strings.HasSuffix(base, "_test.go") || (strings.HasSuffix(dir, "core/report") && (base == "markdown.go" || base == "html.go")) {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || (lit.Kind != token.STRING && lit.Kind != token.CHAR) {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || !strings.ContainsFunc(s, func(r rune) bool { return r > 0x7f }) {
					return true
				}
				seen++
				// Fyne shapes line by line and tab stop by tab stop.
				for _, part := range strings.FieldsFunc(s, unicode.IsControl) {
					for name, chain := range chains {
						if bad := chain.notdefs(part); len(bad) > 0 {
							missing = append(missing, fmt.Sprintf("%s: %q (%s): %q", fset.Position(lit.Pos()), part, name, string(bad)))
						}
					}
				}
				return true
			})
		}
	}
	if seen < 10 {
		t.Fatalf("only %d UI strings with a non-ASCII character: the scan is broken", seen)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("drawn as the replacement character in the browser (add the characters to RUNES in fonts/symbols.py and run it):\n%s",
			strings.Join(missing, "\n"))
	}
	for _, s := range []string{"⚠ symlink-escape", "content +3 −1 (17 B -> 16 B)", "a.json → b.json", "x ≤ y ≥ z ✓ ✗"} {
		if bad := chains["bold"].notdefs(s); len(bad) > 0 {
			t.Errorf("%q: %q drawn as the replacement character", s, string(bad))
		}
	}
}

// TestThemeFonts: Symbols comes first for text, not for monospace and
// symbol text. It measures as Noto Sans does: the same units per em, line
// metrics and space (the shaper takes the first face's space for a line's
// height and baseline, and keeps a space after a symbol in its run), and it
// has no letters or digits to take from Noto Sans.
func TestThemeFonts(t *testing.T) {
	th := Theme{}
	for _, s := range []fyne.TextStyle{{}, {Bold: true}, {Italic: true}, {Bold: true, Italic: true}} {
		if got := th.Font(s); got != Symbols {
			t.Errorf("Font(%+v) = %s, want the symbols", s, got.Name())
		}
	}
	if got := th.Font(fyne.TextStyle{Monospace: true}); got != theme.DefaultTextMonospaceFont() {
		t.Errorf("Font(monospace) = %s", got.Name())
	}
	if got := th.Font(fyne.TextStyle{Symbol: true}); got != theme.DefaultSymbolFont() {
		t.Errorf("Font(symbol) = %s", got.Name())
	}
	sym := face(t, Symbols)
	for _, res := range []fyne.Resource{theme.DefaultTextFont(), theme.DefaultTextBoldFont()} {
		noto := face(t, res)
		if sym.Upem() != noto.Upem() {
			t.Fatalf("Symbols has %d units per em, %s %d", sym.Upem(), res.Name(), noto.Upem())
		}
		se, _ := sym.FontHExtents()
		ne, _ := noto.FontHExtents()
		if se != ne {
			t.Errorf("Symbols' line metrics %+v, %s's %+v", se, res.Name(), ne)
		}
		sg, ok1 := sym.NominalGlyph(' ')
		ng, ok2 := noto.NominalGlyph(' ')
		if !ok1 || !ok2 || sym.HorizontalAdvance(sg) != noto.HorizontalAdvance(ng) {
			t.Errorf("Symbols' space (%v) is %v wide, %s's %v", ok1, sym.HorizontalAdvance(sg), res.Name(), noto.HorizontalAdvance(ng))
		}
	}
	for _, r := range "aZ0.,-_" {
		if _, ok := sym.NominalGlyph(r); ok {
			t.Errorf("Symbols has %q: it would replace Noto Sans's", r)
		}
	}
	if len(symbolsTTF) > 8<<10 {
		t.Errorf("Symbols is %d bytes: more than a few symbols?", len(symbolsTTF))
	}
}
