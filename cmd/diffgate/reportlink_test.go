//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/diffgate/diffgate/internal/testenv"
)

// reportLinkScript moves the report's directory away, puts a symlink to
// the folder outside ($1) in its place and a symlink at the report's name
// in the moved directory.
const reportLinkScript = `#!/bin/sh
mv out out.old && ln -s "$1" out && ln -s "$1/planted.json" out.old/r.json && ln -s "$1/planted.md" out.old/r.md
`

// TestReportNotThroughLink: with --report inside the workspace, a script
// that turns the report's directory into a symlink (and the report's name
// into another) cannot make the gate write outside: the reports land, as
// regular files, in the directory opened before the run. Contained and
// not, as root and as a user.
func TestReportNotThroughLink(t *testing.T) { testReportNotThroughLink(t) }

func TestReportNotThroughLinkAsUser(t *testing.T) {
	if testenv.AsUser(t) {
		return
	}
	testReportNotThroughLink(t)
}

func testReportNotThroughLink(t *testing.T) {
	sh := filepath.Join(testenv.UserTempDir(t), "link.sh")
	os.WriteFile(sh, []byte(reportLinkScript), 0o755)
	for _, mode := range []string{"off", "auto"} {
		t.Run(mode, func(t *testing.T) {
			ws, outside := testenv.UserTempDir(t), testenv.UserTempDir(t)
			os.Mkdir(filepath.Join(ws, "out"), 0o755)
			js, md := filepath.Join(ws, "out", "r.json"), filepath.Join(ws, "out", "r.md")
			code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--contain="+mode, "--allow", "**",
				"--report", js, "--report", md, "--", sh, outside)
			if code != 1 { // the links are symlink escapes: the run fails
				t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
			}
			if st, err := os.Lstat(filepath.Join(ws, "out")); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the script did not plant its link: %v", err)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("the gate wrote outside the workspace through the link: %v", ents)
			}
			for _, name := range []string{"r.json", "r.md"} {
				st, err := os.Lstat(filepath.Join(ws, "out.old", name))
				if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
					t.Errorf("%s is not a report in the directory opened before the run: %v %v", name, st, err)
				}
			}
			if _, err := os.Stat(filepath.Join(ws, "out.old", "r.json")); err == nil {
				if r := readReport(t, filepath.Join(ws, "out.old", "r.json")); r.Verdict != "fail" || len(r.Changes) != 4 {
					t.Errorf("report verdict %q, %d changes", r.Verdict, len(r.Changes))
				}
			}
		})
	}
}
