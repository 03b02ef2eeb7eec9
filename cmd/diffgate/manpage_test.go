package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestManPage: diffgate manpage (hidden) prints diffgate(1) from the verb
// table: every visible verb with its synopsis and help line, every flag its
// -h lists; groff renders it without a warning.
func TestManPage(t *testing.T) {
	code, page, errs := cliRun(t, "manpage")
	if code != 0 || errs != "" || !strings.HasPrefix(page, ".TH DIFFGATE 1 ") {
		t.Fatalf("diffgate manpage: exit %d stderr %q\n%.200s", code, errs, page)
	}
	var leaves []leafVerb
	for _, v := range verbs() {
		if !v.hidden {
			leaves = collectLeaves(leaves, []string{v.name}, v)
		}
	}
	c := &cli{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	for _, l := range leaves {
		name := strings.Join(l.path, " ")
		if !strings.Contains(page, ".B "+roffText("diffgate "+name)+"\n"+roffText(l.v.help)+"\n") {
			t.Errorf("no entry for %q", name)
		}
		var he *helpError
		if err := l.v.run(c, []string{"-h"}); !errors.As(err, &he) {
			t.Fatalf("%s -h: %v", name, err)
		}
		for _, f := range flagDocs(he.fs) {
			if !strings.Contains(page, `\fB`+roffText(f.dashed())+`\fR`) || !strings.Contains(page, roffText(f.use)) {
				t.Errorf("%s: flag --%s missing", name, f.name)
			}
		}
	}
	if strings.Contains(page, "manpage") {
		t.Errorf("the man page shows the hidden verb")
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Log("no groff: the page is not rendered")
		return
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww")
	cmd.Stdin = strings.NewReader(page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("groff: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), "diffgate run") {
		t.Errorf("groff output lacks the run verb")
	}
}
