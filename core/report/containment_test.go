package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestContainmentInEveryFormat: the containment level is in the JSON, the
// Markdown and the HTML report, and a run that was not contained says so.
func TestContainmentInEveryFormat(t *testing.T) {
	ok := &Containment{Mode: "auto", LandlockABI: 7, Contained: true, Layers: []Layer{
		{Name: "env", Requested: true, Enforced: true}, {Name: "network", Requested: true, Enforced: true, How: "seccomp: no AF_INET"}}}
	bad := &Containment{Mode: "auto", Layers: []Layer{
		{Name: "filesystem", Requested: true, Why: "landlock: not supported by this kernel"}}}
	cases := []struct {
		c    *Containment
		want string
	}{
		{ok, "contained: landlock v7, seccomp net-off, env allow list"},
		{bad, "NOT CONTAINED: filesystem (landlock: not supported by this kernel)"},
		{&Containment{Mode: "off"}, "NOT CONTAINED: --contain=off"},
	}
	for _, tc := range cases {
		if got := tc.c.Summary(); got != tc.want {
			t.Errorf("Summary = %q, want %q", got, tc.want)
		}
		r := &Report{Schema: Schema, Verdict: Pass, Reasons: []string{}, Containment: tc.c}
		for name, write := range map[string]func(*bytes.Buffer) error{
			"json": func(b *bytes.Buffer) error { return r.WriteJSON(b) },
			"md":   func(b *bytes.Buffer) error { return r.WriteMarkdown(b) },
			"html": func(b *bytes.Buffer) error { return r.WriteHTML(b) },
		} {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if name == "json" {
				want = `"mode": "` + tc.c.Mode + `"`
			}
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
}
