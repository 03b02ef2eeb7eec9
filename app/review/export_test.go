package review

import (
	"bytes"
	"slices"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/core/report"
)

// An export after Allow… keeps the run's allowlist and verdict and carries
// the reviewer's draft, decision, note and re-evaluated verdict in review.
func TestExportAfterAllowKeepsTheRunsAllowlist(t *testing.T) {
	var exported *report.Report
	v, w := newTestView(t, cleanReport(), Options{
		Export:    func(r *report.Report, _ Format) { exported = r },
		OnApprove: func(*report.Report, []string, string) error { return nil },
	})
	r := v.Report()
	runAllowlist, runVerdict := slices.Clone(r.Allowlist), r.Verdict
	if runVerdict != report.Fail {
		t.Fatal("fixture should fail")
	}
	i := indexOf(t, r, "config.json")
	v.Select(i)
	test.Tap(v.detail.allowBtn)
	uitest.TapMenuItem(t, w.Canvas(), "Exact path:   config.json")
	if !r.Changes[i].Allowed {
		t.Fatal("Allow… did not allow config.json")
	}

	test.Tap(v.side.exportBtns[JSON])
	if exported == nil {
		t.Fatal("nothing exported")
	}
	var buf bytes.Buffer
	if err := JSON.Write(exported, &buf); err != nil {
		t.Fatal(err)
	}
	back, err := report.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Allowlist, runAllowlist) || back.Verdict != runVerdict {
		t.Fatalf("export presents the draft as the run's: allowlist %q verdict %s, want %q %s",
			back.Allowlist, back.Verdict, runAllowlist, runVerdict)
	}
	if c := back.Changes[i]; c.Path != "config.json" || c.Allowed {
		t.Fatalf("the run's config.json shows as allowed in the export")
	}
	rv := back.Review
	if rv == nil || !slices.Equal(rv.Allowlist, append(slices.Clone(runAllowlist), "config.json")) || rv.Decision != "" {
		t.Fatalf("review %+v", rv)
	}
	if rv.Violations != r.Count().Violations || rv.Verdict != r.Verdict {
		t.Fatalf("review verdict %s with %d violations, the view shows %s with %d", rv.Verdict, rv.Violations, r.Verdict, r.Count().Violations)
	}

	// After Approve the decision and note go with it.
	test.Type(v.side.note, "config is generated")
	test.Tap(v.side.approveBtn)
	confirmApproval(t, w.Canvas()) // the draft leaves violations
	test.Tap(v.side.exportBtns[JSON])
	if exported.Review == nil || exported.Review.Decision != report.Approved || exported.Review.Note != "config is generated" ||
		!slices.Equal(exported.Allowlist, runAllowlist) {
		t.Fatalf("after approve: allowlist %q review %+v", exported.Allowlist, exported.Review)
	}
}
