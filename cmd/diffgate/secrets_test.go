package main

// Pins the secret stores (pipeline.SecretStores()): every entry is hidden
// from a contained script, as root and as a normal user, and every read is
// recorded; run -h and docs/containment.md list exactly the data's entries.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/testenv"
)

// secretMarker is the content planted in store i.
func secretMarker(i int) string { return fmt.Sprintf("MARKER-%02d-TOPSECRET", i) }

func testRunContainedSecretStores(t *testing.T) {
	bin := testenv.CLI(t)
	// Directly in /tmp (see containCLI).
	base, err := os.MkdirTemp("/tmp", "dg-secrets-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	var sh strings.Builder
	sh.WriteString("#!/bin/sh\ncd \"$HOME\" || exit 9\n")
	for i, s := range pipeline.SecretStores() {
		p := filepath.Join(home, filepath.FromSlash(s.Path))
		file := p
		if s.Dir {
			file = filepath.Join(p, "f")
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(secretMarker(i)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// Read it, by its absolute and its relative name, and copy what
		// was read into the workspace; list a directory and read inside.
		fmt.Fprintf(&sh, "cat %q\ncat %q >> %q/got\n", file, s.Path, ws)
		if s.Dir {
			fmt.Fprintf(&sh, "ls -la %q\ncat %q/*\ncp -r %q %q/copy-%d\n", p, s.Path, p, ws, i)
		}
	}
	sh.WriteString("echo done\n")
	script := filepath.Join(base, "s.sh")
	if err := os.WriteFile(script, []byte(sh.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(base, "r.json")
	cmd := exec.Command(bin, "run", "--workspace", ws, "--no-history", "--allow", "**", "--report", js, "--", script)
	cmd.Env = append(os.Environ(), "HOME="+home)
	var ob, eb strings.Builder
	cmd.Stdout, cmd.Stderr = &ob, &eb
	err = cmd.Run()
	out, errs := ob.String(), eb.String()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1 (blocked reads)\nstdout %s\nstderr %s", err, out, errs)
	}
	if !strings.Contains(errs, "done") {
		t.Fatalf("the script did not finish: stderr %s", errs)
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Containment; c == nil || !c.Observed {
		t.Fatalf("containment %+v: blocked actions not observed", c)
	}
	// No marker in the script's output, nor in any file it left.
	leaked := func(where, text string) {
		for i := range pipeline.SecretStores() {
			if strings.Contains(text, secretMarker(i)) {
				t.Errorf("%s holds the marker of %s", where, pipeline.SecretStores()[i].Name())
			}
		}
	}
	leaked("the script's output", out+errs)
	filepath.Walk(ws, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			leaked(p, string(b))
		}
		return nil
	})
	for _, s := range pipeline.SecretStores() {
		p := filepath.Join(home, filepath.FromSlash(s.Path))
		found := false
		for _, b := range rep.Blocked {
			found = found || b.Kind == "read" && fspath.Within(b.Target, p)
		}
		if !found || !strings.Contains(out, "BLOCKED read "+p) {
			t.Errorf("no BLOCKED read of %s", s.Name())
		}
	}
}

func TestRunContainedSecretStores(t *testing.T) { testRunContainedSecretStores(t) }

func TestRunContainedSecretStoresAsUser(t *testing.T) {
	testenv.CLI(t) // built as root, used by the user
	if testenv.AsUser(t) {
		return
	}
	testRunContainedSecretStores(t)
}

// TestSecretStoresDocumented: run -h and docs/containment.md's containment table
// list exactly pipeline.SecretStores(), in its order.
func TestSecretStoresDocumented(t *testing.T) {
	var names []string
	for _, s := range pipeline.SecretStores() {
		names = append(names, s.Name())
	}
	code, out, errs := cliRun(t, "run", "-h")
	if code != 0 {
		t.Fatalf("run -h: exit %d %s", code, errs)
	}
	var help []string
	for _, m := range regexp.MustCompile(`(?m)^  (~/\S+) +\S`).FindAllStringSubmatch(out, -1) {
		help = append(help, m[1])
	}
	if !slices.Equal(help, names) {
		t.Errorf("run -h lists %q, want %q", help, names)
	}
	doc, err := os.ReadFile("../../docs/containment.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| secrets \\| [^\\n]*?`(~/[^`]*)`").FindSubmatch(doc)
	if row == nil {
		t.Fatal("docs/containment.md: no secrets row with a `...` list in the containment table")
	}
	if got := strings.Fields(string(row[1])); !slices.Equal(got, names) {
		t.Errorf("docs/containment.md's secrets row lists %q, want %q", got, names)
	}
}
