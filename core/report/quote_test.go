package report

import "testing"

func TestQuotePathAndPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain name/x.go": "plain name/x.go",
		"ünïcode/名前":      "ünïcode/名前",
		"a\nb":            `"a\nb"`,
		"a\x1b[31mb":      `"a\x1b[31mb"`,
		"t\tab":           `"t\tab"`,
		"nul\x00":         `"nul\x00"`,
		"del\x7f":         `"del\x7f"`,
		"c1\u009b":        `"c1\u009b"`,
		"bidi\u202e":      `"bidi\u202e"`,
		"x\xff":           `"x\xff"`,
		`"quoted"`:        `"\"quoted\""`,
	} {
		if got := QuotePath(in); got != want {
			t.Errorf("QuotePath(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`workspace "x": no such file`:     `workspace "x": no such file`,
		"workspace \x1b[2Jx\t\xff\u202e!": `workspace \x1b[2Jx\t\xff\u202e!`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %s, want %s", in, got, want)
		}
	}
}
