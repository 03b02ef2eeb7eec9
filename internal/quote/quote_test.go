package quote

import "testing"

func TestPathAndText(t *testing.T) {
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
		if got := Path(in); got != want {
			t.Errorf("Path(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`workspace "x": no such file`:     `workspace "x": no such file`,
		"workspace \x1b[2Jx\t\xff\u202e!": `workspace \x1b[2Jx\t\xff\u202e!`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"plain\ttext\n":             "plain\ttext\n",
		"crlf\r\nlone\rend":         "crlf\nlone\nend",
		"\x1b[31mred\x1b[0m":        "red",
		"title\x1b]0;evil\x07 done": "title done",
		"bad\xff nul\x00 c1\u0085":  "bad\ufffd nul\ufffd c1\ufffd",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}
