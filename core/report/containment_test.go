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

// TestStageInEveryFormat: a staged run says how it was staged, where its
// changes are and what staging cost, in the Markdown and the HTML report
// (the JSON carries the stage object).
func TestStageInEveryFormat(t *testing.T) {
	st := &Stage{Mechanism: "copy", State: StagePending,
		Cost: &StageCost{PrepareMS: 4.25, ReadMS: 1.5, CopiedFiles: 2, CopiedBytes: 9}}
	want := "staged (copy), pending: nothing is in the workspace until the run is applied; prepared in 4.2 ms (copied 2 files, 9 B), read back in 1.5 ms"
	if got := st.Summary(); got != want {
		t.Fatalf("Summary = %q\nwant      %q", got, want)
	}
	r := &Report{Schema: Schema, Verdict: Pass, Reasons: []string{}, Stage: st}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"md":   func(b *bytes.Buffer) error { return r.WriteMarkdown(b) },
		"html": func(b *bytes.Buffer) error { return r.WriteHTML(b) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "staged (copy), pending") || !strings.Contains(b.String(), "read back in 1.5 ms") {
			t.Errorf("%s report lacks the stage line:\n%s", name, b.String())
		}
	}
	if (&Stage{Mechanism: "overlay", State: StageApplied}).Summary() != "staged (overlay), applied" {
		t.Error("an applied stage without a cost")
	}
}
