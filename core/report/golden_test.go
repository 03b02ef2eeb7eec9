package report

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./core/report -run Golden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs from the golden file at line %d:\n got: %q\nwant: %q\n(run with -update if the change is intended)", path, i+1, g, w)
			}
		}
		t.Fatalf("%s differs from the golden file", path)
	}
}

func render(t *testing.T, r *Report, write func(*Report, io.Writer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := write(r, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGolden renders each fixture in each format: fixtureReport as
// report.golden.*, guardedReport (blocked actions, the watch, changes
// outside the workspace) as guarded.golden.*.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		file    string
		fixture func() *Report
		write   func(*Report, io.Writer) error
	}{
		{"report.golden.json", fixtureReport, (*Report).WriteJSON},
		{"report.golden.md", fixtureReport, (*Report).WriteMarkdown},
		{"report.golden.html", fixtureReport, (*Report).WriteHTML},
		{"guarded.golden.json", guardedReport, (*Report).WriteJSON},
		{"guarded.golden.md", guardedReport, (*Report).WriteMarkdown},
		{"guarded.golden.html", guardedReport, (*Report).WriteHTML},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := tc.fixture()
			got := render(t, r, tc.write)
			golden(t, tc.file, got)
			// Rendering is deterministic and leaves the report alone.
			if again := render(t, r, tc.write); !bytes.Equal(got, again) {
				t.Fatal("a second rendering differs from the first")
			}
		})
	}
}

// The fixture's verdict and reasons are what Evaluate derives; the golden
// files would silently pin a wrong verdict otherwise.
func TestFixtureVerdict(t *testing.T) {
	r := fixtureReport()
	want := []string{"6 unexpected changes", "1 risky change", "script exited 3", "1 leftover process"}
	if r.Verdict != Fail || strings.Join(r.Reasons, "|") != strings.Join(want, "|") {
		t.Fatalf("verdict %q reasons %q, want fail %q", r.Verdict, r.Reasons, want)
	}
	if p := passingReport(); p.Verdict != Pass || len(p.Reasons) != 0 {
		t.Fatalf("passing fixture: verdict %q reasons %q", p.Verdict, p.Reasons)
	}
}
