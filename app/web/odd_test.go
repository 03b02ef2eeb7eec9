package web

import (
	"testing"

	"github.com/diffgate/diffgate/app/internal/uitest"
)

// TestOddReports opens reports that pass the schema check but hold
// unusual changes: the view shows them (and drafting works) without a panic,
// which in the browser would freeze the page.
func TestOddReports(t *testing.T) {
	odd := []string{
		`{"schema":"diffgate.report/v1","verdict":"fail"}`,
		`{"schema":"diffgate.report/v1","verdict":"pass","changes":null,"reasons":null,"process":null}`,
		`{"schema":"diffgate.report/v1","verdict":"fail","changes":[{"path":"","kind":"weird"}]}`,
		`{"schema":"diffgate.report/v1","verdict":"fail","changes":[{"path":"a","kind":"changed"},{"path":"a","kind":"changed"}]}`,
		`{"schema":"diffgate.report/v1","verdict":"fail","changes":[{"path":"/abs/x","kind":"added","after":{"type":"symlink"}},{"path":"a//b/../c","kind":"removed","before":{"type":"dir"}}]}`,
		`{"schema":"diffgate.report/v1","verdict":"fail","changes":[{"path":"x/","kind":"changed","aspects":["content","bogus"],"text_diff":"@@ garbage\n+\n-\n"}]}`,
		`{"schema":"diffgate.report/v1","verdict":"fail","allowlist":["[bad"],"changes":[{"path":"a","kind":"added"}]}`,
	}
	for _, o := range odd {
		x, h, _ := newTestApp(t)
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", o, r)
				}
			}()
			x.LoadReport("odd.json", []byte(o))
			x.view.NextViolation(1)
			uitest.Tap(t, x.view, "List") // the flat list
			x.view.NextViolation(1)
			x.view.Allow("**")
		}()
		if s := h.last(); s.Source != "odd.json" || s.Error != "" {
			t.Errorf("%s: status %+v", o, s)
		}
	}
}
