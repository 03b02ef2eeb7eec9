package web

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/core/diff"
)

// paths lists "kind path" of the violations (as the CLI prints them).
func violations(cs []diff.Change) []string {
	var out []string
	for _, c := range cs {
		if !c.Allowed {
			out = append(out, strings.ToUpper(string(c.Kind))+" "+c.Path)
		}
	}
	return out
}

func TestCompareManifests(t *testing.T) {
	cases := []struct {
		name, before, after, allow string
		want                       []string
		verdict                    string
	}{
		// The same lines `diffgate diff` prints for these fixtures.
		{"ours, no allowlist", "before.json", "after.json", "",
			[]string{"ADDED .cache", "ADDED .cache/blob", "REMOVED build.lock", "CHANGED config.json", "ADDED logs/run.log"}, "fail"},
		{"ours, seed allowlist", "before.json", "after.json", ".cache/\nlogs/run.log\n",
			[]string{"REMOVED build.lock", "CHANGED config.json"}, "fail"},
		{"seed, seed allowlist", "seed-before.json", "seed-after.json", "# the seed's list\n.cache/\nlogs/run.log",
			[]string{"REMOVED build.lock", "CHANGED config.json"}, "fail"},
		{"seed, all allowed", "seed-before.json", "seed-after.json", ".cache/\nlogs/\nbuild.lock\nchanged:config.json",
			nil, "pass"},
		{"same manifest", "before.json", "before.json", "", nil, "pass"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := ParseManifest(c.before, fixture(t, c.before))
			if err != nil {
				t.Fatal(err)
			}
			a, err := ParseManifest(c.after, fixture(t, c.after))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Compare(b, a, c.allow)
			if err != nil {
				t.Fatal(err)
			}
			if got := violations(r.Changes); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("violations %q, want %q", got, c.want)
			}
			if r.Verdict != c.verdict {
				t.Errorf("verdict %s (%q), want %s", r.Verdict, r.Reasons, c.verdict)
			}
			if r.Process.ExitCode != 0 || len(r.Process.Leftovers) != 0 || r.Script.Path != "" {
				t.Errorf("a comparison has process or script information: %+v %+v", r.Process, r.Script)
			}
		})
	}
}

func TestCompareBadInput(t *testing.T) {
	b, _ := ParseManifest("before.json", fixture(t, "before.json"))
	if _, err := Compare(b, b, "logs/\n[oops\n"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad allowlist: %v", err)
	}
	for name, want := range map[string]string{
		"fail.json":      "is a diffgate report, not a snapshot manifest",
		"not-json.json":  "not-json.json: not a diffgate manifest",
		"truncated.json": "truncated.json:",
	} {
		if _, err := ParseManifest(name, fixture(t, name)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseManifest(%s) = %v, want %q", name, err, want)
		}
	}
}

func TestDescribeManifest(t *testing.T) {
	b, _ := ParseManifest("before.json", fixture(t, "before.json"))
	if got := DescribeManifest(b); !strings.HasPrefix(got, "diffgate manifest, 6 entries of /home/dev/workspace") {
		t.Errorf("DescribeManifest = %q", got)
	}
	s, _ := ParseManifest("seed-before.json", fixture(t, "seed-before.json"))
	if got := DescribeManifest(s); got != "seed snapshot, 4 files" {
		t.Errorf("DescribeManifest = %q", got)
	}
}

func TestCompareDialog(t *testing.T) {
	x, h, _ := newTestApp(t)
	test.Tap(x.compareBtn)
	if x.cmp == nil || !h.last().Compare {
		t.Fatal("the compare dialog did not open")
	}
	c := x.cmp
	if !c.run.Disabled() {
		t.Error("Compare enabled before the files are chosen")
	}
	for _, name := range []string{"compare-before", "compare-after", "compare-allowlist", "compare-run", "compare-cancel"} {
		if x.Named(name) == nil {
			t.Errorf("Named(%q) = nil while the dialog is open", name)
		}
	}

	// A report picked as BEFORE is refused with a message.
	h.files = []file{{name: "fail.json", data: fixture(t, "fail.json")}}
	test.Tap(c.beforeBtn)
	if !strings.Contains(uitest.RichString(c.beforeInfo), "not a snapshot manifest") || !strings.Contains(h.last().Error, "fail.json") {
		t.Errorf("picking a report: %q, error %q", uitest.RichString(c.beforeInfo), h.last().Error)
	}
	h.files = []file{{name: "x.json", err: errors.New("boom")}}
	test.Tap(c.beforeBtn)
	if !strings.Contains(uitest.RichString(c.beforeInfo), "Could not read x.json: boom") {
		t.Errorf("a read error: %q", uitest.RichString(c.beforeInfo))
	}

	h.files = []file{{name: "seed-before.json", data: fixture(t, "seed-before.json")}, {name: "seed-after.json", data: fixture(t, "seed-after.json")}}
	test.Tap(c.beforeBtn)
	test.Tap(c.afterBtn)
	if !strings.Contains(uitest.RichString(c.afterInfo), "seed snapshot, 5 files") {
		t.Errorf("after: %q", uitest.RichString(c.afterInfo))
	}
	if c.run.Disabled() {
		t.Fatal("Compare disabled with both files chosen")
	}
	c.allow.SetText("[bad\n")
	if !c.run.Disabled() {
		t.Error("Compare enabled with a bad allowlist")
	}
	c.allow.SetText(".cache/\nlogs/run.log\n")
	test.Tap(c.run)
	if x.cmp != nil {
		t.Error("the dialog stayed open")
	}
	s := h.last()
	if s.Source != "seed-before.json vs seed-after.json" || s.Verdict != "fail" || s.Violations != 2 || s.Allowed != 2 ||
		s.Error != "" || s.Compare {
		t.Errorf("status after compare: %+v", s)
	}
	if x.body.Objects[0] != x.view {
		t.Error("the review view is not shown")
	}

	// The draft goes on in the review view.
	x.view.Allow("build.lock")
	x.view.Allow("config.json")
	if s := h.last(); s.Verdict != "pass" {
		t.Errorf("all allowed: %+v", s)
	}

	// Reopening keeps the files and the allowlist.
	test.Tap(x.compareBtn)
	if x.cmp.allow.Text() != ".cache/\nlogs/run.log\n" || x.cmp.run.Disabled() {
		t.Errorf("reopened dialog lost its state: %q", x.cmp.allow.Text())
	}
	test.Tap(x.cmp.cancel)
	if x.cmp != nil || x.Named("compare-run") != nil {
		t.Error("Cancel did not close the dialog")
	}
}

// One comparison for both front ends (report.Compare): an entry the after
// manifest could not read fails here as it does in `diffgate diff`
// (cmd/diffgate's TestDiffUnreadableLikeTheWeb reads the same manifests).
// The browser said PASS where the CLI exited 1 with UNREADABLE a.txt.
func TestCompareUnreadable(t *testing.T) {
	b, err := ParseManifest("unreadable-before.json", fixture(t, "unreadable-before.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseManifest("unreadable-after.json", fixture(t, "unreadable-after.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compare(b, a, "a.txt\n")
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != "fail" || len(r.Unreadable) != 1 || r.Unreadable[0].Path != "a.txt" {
		t.Errorf("verdict %s (%q), unreadable %+v; want fail with a.txt", r.Verdict, r.Reasons, r.Unreadable)
	}
}
