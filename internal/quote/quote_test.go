package quote

import "testing"

// check runs f on each case's input and wants its output.
func check(t *testing.T, name string, f func(string) string, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := f(in); got != want {
			t.Errorf("%s(%q) = %s, want %s", name, in, got, want)
		}
	}
}

func TestPathAndText(t *testing.T) {
	check(t, "Path", Path, map[string]string{
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
	})
	check(t, "Text", Text, map[string]string{
		`workspace "x": no such file`:     `workspace "x": no such file`,
		"workspace \x1b[2Jx\t\xff\u202e!": `workspace \x1b[2Jx\t\xff\u202e!`,
	})
}

func TestClean(t *testing.T) {
	check(t, "Clean", Clean, map[string]string{
		"":                          "",
		"plain\ttext\n":             "plain\ttext\n",
		"crlf\r\nlone\rend":         "crlf\nlone\nend",
		"\x1b[31mred\x1b[0m":        "red",
		"title\x1b]0;evil\x07 done": "title done",
		"bad\xff nul\x00 c1\u0085":  "bad\ufffd nul\ufffd c1\ufffd",
	})
}
