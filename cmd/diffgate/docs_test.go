package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
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

// TestDocLinks: every relative link and image of README.md, ARCHITECTURE.md
// and docs/*.md names a file that exists and, with a #fragment, a heading
// of that file (GitHub's anchors), so a page split or a renamed heading
// cannot leave a dead link.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../../README.md", "../../ARCHITECTURE.md")
	if len(pages) < 10 {
		t.Fatalf("only %d pages found", len(pages))
	}
	linkRe := regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := map[string]bool{}
		if data, err := os.ReadFile(file); err == nil {
			for _, h := range headings(string(data)) {
				slug := githubSlug(h)
				for n, s := 1, slug; ; n++ {
					if !a[s] {
						a[s] = true
						break
					}
					s = slug + "-" + strconv.Itoa(n)
				}
			}
		}
		anchors[file] = a
		return a
	}
	n := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRe.FindAllStringSubmatch(stripCode(string(data)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %s: %v", filepath.Base(page), target, err)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[frag] {
				t.Errorf("%s: link %s: no heading with that anchor in %s", filepath.Base(page), target, filepath.Base(path))
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d relative links found", n)
	}
}

var codeFenceRe = regexp.MustCompile("(?ms)^```.*?^```")

// stripCode drops fenced code blocks (their brackets are not links).
func stripCode(doc string) string { return codeFenceRe.ReplaceAllString(doc, "") }

// headings lists a Markdown page's ATX headings outside code blocks.
func headings(doc string) []string {
	var out []string
	for _, l := range strings.Split(stripCode(doc), "\n") {
		if t := strings.TrimLeft(l, "#"); len(t) < len(l) && strings.HasPrefix(t, " ") {
			out = append(out, strings.TrimSpace(t))
		}
	}
	return out
}

// githubSlug is the anchor GitHub gives a heading: lower case, spaces to
// hyphens, punctuation other than - and _ dropped.
func githubSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
