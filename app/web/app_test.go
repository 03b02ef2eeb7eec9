package web

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
)

// fixtures are shared with the browser tests.
const fixtures = "../../tests/web/fixtures"

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

type file struct {
	name string
	data []byte
	err  error
}

type download struct {
	name, mime string
	data       []byte
}

// fakeHost answers PickFile with queued files, records downloads and the
// published statuses.
type fakeHost struct {
	t         *testing.T
	files     []file
	accepts   []string
	downloads []download
	statuses  []Status
}

func (h *fakeHost) PickFile(accept string, done func(string, []byte, error)) {
	h.accepts = append(h.accepts, accept)
	if len(h.files) == 0 {
		return // the user cancelled
	}
	f := h.files[0]
	h.files = h.files[1:]
	done(f.name, f.data, f.err)
}

func (h *fakeHost) Download(name, mime string, data []byte) error {
	h.downloads = append(h.downloads, download{name, mime, append([]byte(nil), data...)})
	return nil
}

func (h *fakeHost) Publish(s Status) { h.statuses = append(h.statuses, s) }

func (h *fakeHost) last() Status {
	h.t.Helper()
	if len(h.statuses) == 0 {
		h.t.Fatal("nothing published")
	}
	return h.statuses[len(h.statuses)-1]
}

func newTestApp(t *testing.T) (*App, *fakeHost, fyne.Window) {
	t.Helper()
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, nil)
	h := &fakeHost{t: t}
	x := New(a, w, h, Options{Do: func(f func()) { f() }})
	w.Resize(fyne.NewSize(1400, 900))
	return x, h, w
}

func TestStartsOnWelcome(t *testing.T) {
	x, h, _ := newTestApp(t)
	if x.body.Objects[0] != x.welcome {
		t.Error("the welcome page is not shown")
	}
	s := h.last()
	if s.Verdict != "" || s.Error != "" || s.Seq != 1 {
		t.Errorf("status %+v, want empty with seq 1", s)
	}
	if x.downloads.Visible() {
		t.Error("download buttons shown without a report")
	}
	for _, name := range []string{"open", "compare", "demo", "welcome-open"} {
		if x.Named(name) == nil {
			t.Errorf("Named(%q) = nil", name)
		}
	}
	if x.Named("download-allowlist") != nil || x.Named("compare-run") != nil {
		t.Error("hidden controls are named")
	}
}

func TestOpenReportThroughPicker(t *testing.T) {
	x, h, w := newTestApp(t)
	h.files = []file{{name: "fail.json", data: fixture(t, "fail.json")}}
	test.Tap(x.openBtn)
	if len(h.accepts) != 1 || h.accepts[0] != ReportAccept {
		t.Fatalf("PickFile calls %v", h.accepts)
	}
	s := h.last()
	want := Status{Source: "fail.json", Verdict: "fail", Added: 3, Removed: 1, Changed: 3, Violations: 5, Allowed: 2, Risky: 1}
	if s.Source != want.Source || s.Verdict != want.Verdict || s.Added != want.Added || s.Removed != want.Removed ||
		s.Changed != want.Changed || s.Violations != want.Violations || s.Allowed != want.Allowed || s.Risky != want.Risky {
		t.Errorf("status %+v, want %+v", s, want)
	}
	if s.Selected == "" {
		t.Error("no violation selected after opening")
	}
	if x.body.Objects[0] != x.view {
		t.Error("the review view is not shown")
	}
	if !x.downloads.Visible() {
		t.Error("download buttons hidden")
	}
	if got := w.Title(); got != "diffgate: FAIL fail.json" {
		t.Errorf("title %q", got)
	}
	if !uitest.Drawn(x.view.Banner(), "FAIL") {
		t.Errorf("banner says %q", uitest.AllText(x.view.Banner()))
	}
}

func TestCancelledPickerChangesNothing(t *testing.T) {
	x, h, _ := newTestApp(t)
	n := len(h.statuses)
	test.Tap(x.openBtn)
	if len(h.statuses) != n || x.Error() != "" {
		t.Error("cancelling the picker changed the status")
	}
}

func TestBadReportsShowAnError(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"not-json.json", fixture(t, "not-json.json"), "not JSON"},
		{"truncated.json", fixture(t, "truncated.json"), "truncated"},
		{"wrong-schema.json", fixture(t, "wrong-schema.json"), `schema "diffgate.report/v2", want "diffgate.report/v1"`},
		{"empty.json", nil, "empty"},
		{"before.json", fixture(t, "before.json"), "snapshot manifest, not a report"},
		{"seed-after.json", fixture(t, "seed-after.json"), "snapshot manifest, not a report"},
		{"bad-verdict.json", []byte(`{"schema":"diffgate.report/v1","verdict":"maybe"}`), `verdict "maybe"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, h, _ := newTestApp(t)
			x.LoadReport("pass.json", fixture(t, "pass.json"))
			x.LoadReport(c.name, c.data)
			s := h.last()
			if !strings.Contains(s.Error, c.want) || !strings.Contains(s.Error, c.name) {
				t.Errorf("error %q, want it to name %s and say %q", s.Error, c.name, c.want)
			}
			if strings.Contains(s.Error, "\n") {
				t.Errorf("error %q is not one line", s.Error)
			}
			if !x.errBar.Visible() || !strings.Contains(uitest.RichString(x.errText), c.want) {
				t.Errorf("error bar hidden or says %q", uitest.RichString(x.errText))
			}
			if s.Verdict != "pass" || s.Source != "pass.json" {
				t.Errorf("the report shown before was replaced: %+v", s)
			}
			test.Tap(x.Named("error-close").(*widget.Button))
			if x.errBar.Visible() || h.last().Error != "" {
				t.Error("closing the error bar did not clear the error")
			}
		})
	}
}

func TestGoodReportClearsError(t *testing.T) {
	x, h, _ := newTestApp(t)
	x.LoadReport("x.json", []byte("{"))
	if h.last().Error == "" {
		t.Fatal("no error")
	}
	x.LoadReport("pass.json", fixture(t, "pass.json"))
	if s := h.last(); s.Error != "" || s.Verdict != "pass" || x.errBar.Visible() {
		t.Errorf("status %+v after a good report", s)
	}
}

func TestDraftReevaluatesAndDownloads(t *testing.T) {
	x, h, _ := newTestApp(t)
	x.LoadReport("fail.json", fixture(t, "fail.json"))
	seq := h.last().Seq
	x.view.Allow("config.json")
	s := h.last()
	if s.Seq <= seq || s.Violations != 4 || s.Allowed != 3 || s.Verdict != "fail" {
		t.Errorf("after allowing config.json: %+v", s)
	}
	if strings.Join(s.Allowlist, ",") != "logs/,config.json" {
		t.Errorf("allowlist %q", s.Allowlist)
	}

	test.Tap(x.allowlistBtn)
	if len(h.downloads) != 1 {
		t.Fatalf("%d downloads", len(h.downloads))
	}
	d := h.downloads[0]
	if d.name != AllowlistFileName || !strings.HasPrefix(d.mime, "text/plain") {
		t.Errorf("download %s (%s)", d.name, d.mime)
	}
	entries, err := policy.ReadEntries(bytes.NewReader(d.data))
	if err != nil || strings.Join(entries, ",") != "logs/,config.json" {
		t.Errorf("allowlist file entries %q (%v):\n%s", entries, err, d.data)
	}
	if !strings.Contains(string(d.data), "# verdict with this allowlist: FAIL (4 unexpected changes") {
		t.Errorf("allowlist file header:\n%s", d.data)
	}

	// One JSON download: the review's Export JSON, which the page's
	// "download-report" names too (the header has no second one).
	var jsonButtons int
	uitest.Walk(x.Content(), func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && strings.Contains(b.Text, "JSON") {
			jsonButtons++
		}
	})
	if jsonButtons != 1 {
		t.Errorf("%d JSON download buttons", jsonButtons)
	}
	test.Tap(x.Named("download-report").(*widget.Button))
	if len(h.downloads) != 2 {
		t.Fatalf("%d downloads", len(h.downloads))
	}
	d = h.downloads[1]
	if d.mime != "application/json" || !strings.HasSuffix(d.name, ".json") {
		t.Errorf("report download %s (%s)", d.name, d.mime)
	}
	r, err := report.Parse(d.data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Review == nil || r.Review.Violations != 4 || strings.Join(r.Review.Allowlist, ",") != "logs/,config.json" {
		t.Errorf("downloaded report's review: %+v", r.Review)
	}

	// Allowing everything that is left, risk and all, leaves only the
	// leftover process failing the run.
	x.view.Editor().SetText("logs/\nconfig.json\nbuild.lock\nsrc/\nsymlink-escape:cache/passwd\n")
	s = h.last()
	if s.Violations != 0 || s.Verdict != "fail" || strings.Join(s.Reasons, ",") != "1 leftover process" {
		t.Errorf("all allowed: %+v", s)
	}
}

func TestPassingDraftTurnsPass(t *testing.T) {
	x, h, _ := newTestApp(t)
	x.LoadReport("pass.json", fixture(t, "pass.json"))
	x.view.Editor().SetText("")
	if s := h.last(); s.Verdict != "fail" || s.Violations != 1 {
		t.Errorf("empty allowlist: %+v", s)
	}
	x.view.Editor().SetText("added:logs/**\n")
	if s := h.last(); s.Verdict != "pass" || s.Violations != 0 {
		t.Errorf("added:logs/**: %+v", s)
	}
}

func TestExportDownloadsEveryFormat(t *testing.T) {
	x, h, _ := newTestApp(t)
	x.LoadReport("fail.json", fixture(t, "fail.json"))
	for _, f := range []struct{ f, mime string }{{"html", "text/html"}, {"md", "text/markdown"}, {"json", "application/json"}} {
		test.Tap(x.view.ExportButton(review.Format(f.f)))
		d := h.downloads[len(h.downloads)-1]
		if !strings.HasPrefix(d.mime, f.mime) || !strings.HasSuffix(d.name, "."+f.f) || len(d.data) == 0 {
			t.Errorf("%s export: %s (%s), %d bytes", f.f, d.name, d.mime, len(d.data))
		}
	}
}

func TestStatusJSON(t *testing.T) {
	x, _, _ := newTestApp(t)
	b, err := json.Marshal(x.Status())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"verdict":""`, `"added":0`, `"removed":0`, `"changed":0`, `"violations":0`, `"allowed":0`, `"error":""`, `"reasons":[]`, `"allowlist":[]`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("status JSON %s lacks %s", b, key)
		}
	}
}

func TestDemo(t *testing.T) {
	x, h, _ := newTestApp(t)
	test.Tap(x.demoBtn)
	if s := h.last(); s.Verdict != "fail" || s.Violations != 5 || s.Source != "demo report" {
		t.Errorf("demo: %+v", s)
	}
}

// TestStagedReportHasNoApply: the browser has no staging, so a staged
// run's report shows neither Apply nor Discard (the desktop does).
func TestStagedReportHasNoApply(t *testing.T) {
	x, _, _ := newTestApp(t)
	r := review.DemoReport()
	r.Stage = &report.Stage{Mechanism: "overlay", State: report.StagePending}
	x.Show("staged", r)
	if uitest.HasButton(x.View(), "Discard") || uitest.RichTextWhere(x.View(), func(s string) bool { return strings.HasSuffix(s, " stage") }) != "" {
		t.Errorf("a stage strip in the browser: %s", uitest.AllText(x.View()))
	}
}
