package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCLIDocumented: docs/cli.md holds the usage diffgate -h prints (the
// verb table), verbatim, and names every flag of every verb's -h, so a verb
// or flag added to the table fails here until the page says it.
func TestCLIDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	code, top, _ := cliRun(t, "-h")
	start, end := strings.Index(top, "usage:\n"), strings.Index(top, "\n\nexit status")
	if code != 0 || start < 0 || end < start {
		t.Fatalf("diffgate -h: exit %d\n%s", code, top)
	}
	if usage := top[start+len("usage:\n") : end+1]; !strings.Contains(doc, "```\n"+usage+"```\n") {
		t.Errorf("docs/cli.md's synopsis is not what diffgate -h prints; paste this block:\n%s", usage)
	}
	flagLine := regexp.MustCompile(`(?m)^  (--?[a-z][a-z-]*)`)
	var walk func(path []string, v *verb)
	walk = func(path []string, v *verb) {
		for i := range v.subs {
			walk(append(slices.Clone(path), v.subs[i].name), &v.subs[i])
		}
		if v.run == nil {
			return
		}
		_, help, _ := cliRun(t, append(slices.Clone(path), "-h")...)
		_, flags, ok := strings.Cut(help, "\nflags:\n")
		if !ok {
			return
		}
		flags, _, _ = strings.Cut(flags, "\n\n")
		for _, m := range flagLine.FindAllStringSubmatch(flags, -1) {
			if !regexp.MustCompile(`(^|[\s\[|(` + "`" + `])` + regexp.QuoteMeta(m[1]) + `($|[\s\]=|),.` + "`" + `])`).MatchString(doc) {
				t.Errorf("docs/cli.md does not name %s of diffgate %s", m[1], strings.Join(path, " "))
			}
		}
	}
	for _, v := range verbs() {
		if !v.hidden {
			walk([]string{v.name}, &v)
		}
	}
}
