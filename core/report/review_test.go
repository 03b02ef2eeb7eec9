package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A report with a reviewer's draft keeps the run's allowlist, verdict and
// per-change flags; the draft, decision, note and re-evaluated verdict are in
// the review object (JSON), and in a section of their own (HTML, Markdown).
func TestWithReviewKeepsTheRunsOwn(t *testing.T) {
	run := fixtureReport()
	run.Allowlist = []string{"logs/"}
	runVerdict, runReasons := run.Verdict, slices.Clone(run.Reasons)
	draft := []string{"logs/", "**", "symlink-escape:**", "setuid:**"}
	got, err := run.WithReview(draft, Approved, "all fine <b>really</b>")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Allowlist, []string{"logs/"}) || got.Verdict != runVerdict || !slices.Equal(got.Reasons, runReasons) {
		t.Fatalf("the run's allowlist/verdict changed: %q %s %q", got.Allowlist, got.Verdict, got.Reasons)
	}
	for i := range got.Changes {
		if got.Changes[i].Allowed != run.Changes[i].Allowed || got.Changes[i].Rule != run.Changes[i].Rule {
			t.Fatalf("change %q re-judged in the run's part", got.Changes[i].Path)
		}
	}
	rv := got.Review
	if rv == nil || !slices.Equal(rv.Allowlist, draft) || rv.Decision != Approved || rv.Note != "all fine <b>really</b>" {
		t.Fatalf("review %+v", rv)
	}
	// The fixture also fails on its exit code and leftover: the draft only
	// removes the change reasons.
	if rv.Verdict != Fail || rv.Violations != 0 || slices.ContainsFunc(rv.Reasons, func(s string) bool { return strings.Contains(s, "unexpected") }) {
		t.Fatalf("re-evaluated %s %d %q", rv.Verdict, rv.Violations, rv.Reasons)
	}

	var js bytes.Buffer
	if err := got.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Verdict   string           `json:"verdict"`
		Allowlist []string         `json:"allowlist"`
		Review    map[string]any   `json:"review"`
		Changes   []map[string]any `json:"changes"`
	}
	if err := json.Unmarshal(js.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Verdict != runVerdict || !slices.Equal(raw.Allowlist, []string{"logs/"}) {
		t.Fatalf("JSON verdict %s allowlist %q", raw.Verdict, raw.Allowlist)
	}
	for _, k := range []string{"allowlist", "decision", "note", "verdict", "reasons", "violations"} {
		if _, ok := raw.Review[k]; !ok {
			t.Errorf("JSON review lacks %q: %v", k, raw.Review)
		}
	}
	back, err := Parse(js.Bytes())
	if err != nil || back.Review == nil || !slices.Equal(back.Review.Allowlist, draft) || back.Verdict != runVerdict {
		t.Fatalf("parse back: %v %+v", err, back.Review)
	}

	_, doc := parseHTML(t, got)
	sec := byID(doc, "review")
	if sec == nil {
		t.Fatal("HTML has no review section")
	}
	if txt := textOf(sec); !strings.Contains(txt, "approved") || !strings.Contains(txt, "symlink-escape:**") || !strings.Contains(txt, "all fine <b>really</b>") {
		t.Fatalf("HTML review section: %q", txt)
	}
	var md bytes.Buffer
	if err := got.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "### Review (the reviewer's draft, not the run's)") || !strings.Contains(md.String(), "| Decision | approved |") {
		t.Fatalf("Markdown has no review section:\n%s", md.String())
	}

	// No draft, decision or note: no review.
	same, _ := run.WithReview([]string{"logs/"}, "", "")
	if same.Review != nil {
		t.Fatal("review without a draft")
	}
	if _, err := run.WithReview([]string{"added,bogus:x"}, "", ""); err == nil {
		t.Fatal("a bad draft was accepted")
	}
	_, doc = parseHTML(t, run)
	if byID(doc, "review") != nil {
		t.Fatal("review section in a report without one")
	}
}
