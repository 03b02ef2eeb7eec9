//go:build !js

package main

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The package import rules of the layering (ARCHITECTURE.md), held with
// go list -deps so that an import added anywhere down a chain is caught.

const mod = "github.com/diffgate/diffgate/"

// engine is the portable core: it builds for js/wasm and runs no process.
var engine = []string{mod + "core/snapshot", mod + "core/diff", mod + "core/policy", mod + "core/report", mod + "core/textdiff", mod + "internal/quote"}

// engineForbidden: what the engine may not reach, by import path or prefix
// (a trailing "/" means the package and everything under it).
var engineForbidden = []string{
	mod + "core/proc", mod + "core/gate", mod + "core/history", mod + "core/pipeline", mod + "app/",
	mod + "core/stage", mod + "core/contain", "os/exec", "modernc.org/sqlite/", "github.com/jackc/pgx/", "fyne.io/",
}

// pkgGraph is the result of one go list -deps: each package's imports and
// whether it is a non-standard package with cgo files.
type pkgGraph struct {
	imports map[string][]string
	cgo     map[string]bool
	order   []string
}

// goOutput runs go with args in the environment plus env and returns
// its output; it fails the test with go's stderr.
func goOutput(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s go %s: %v\n%s", strings.Join(env, " "), strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func goList(t *testing.T, env []string, pkgs ...string) *pkgGraph {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}\t{{if .Standard}}0{{else}}{{len .CgoFiles}}{{end}}\t{{join .Imports \" \"}}"}, pkgs...)
	out := goOutput(t, env, args...)
	g := &pkgGraph{imports: map[string][]string{}, cgo: map[string]bool{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			t.Fatalf("go list line %q", line)
		}
		g.order = append(g.order, f[0])
		g.cgo[f[0]] = f[1] != "0"
		g.imports[f[0]] = strings.Fields(f[2])
	}
	return g
}

// chain returns an import chain from "from" to the first package matching
// one of bad, or nil.
func (g *pkgGraph) chain(from string, bad []string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p != from && matches(p, bad) {
			var c []string
			for x := p; x != ""; x = prev[x] {
				c = append([]string{x}, c...)
			}
			return c
		}
		for _, q := range g.imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}

func matches(p string, bad []string) bool {
	for _, b := range bad {
		if p == b || (strings.HasSuffix(b, "/") && (strings.HasPrefix(p, b) || p == strings.TrimSuffix(b, "/"))) {
			return true
		}
	}
	return false
}

func TestArchEngineStaysPortable(t *testing.T) {
	for _, target := range [][]string{nil, {"GOOS=js", "GOARCH=wasm"}} {
		g := goList(t, target, engine...)
		for _, p := range engine {
			if c := g.chain(p, engineForbidden); c != nil {
				t.Errorf("%s: %s reaches %s: %s", targetName(target), p, c[len(c)-1], strings.Join(c, " -> "))
			}
		}
	}
}

func TestArchGateAndProcStayBelowHistoryAndApp(t *testing.T) {
	pkgs := []string{mod + "core/gate", mod + "core/proc"}
	g := goList(t, nil, pkgs...)
	for _, p := range pkgs {
		if c := g.chain(p, []string{mod + "core/history", mod + "core/pipeline", mod + "app/", "fyne.io/"}); c != nil {
			t.Errorf("%s reaches %s: %s", p, c[len(c)-1], strings.Join(c, " -> "))
		}
	}
}

// TestArchWatchOnlyLooks: core/watch (the paths watched outside the
// workspace) stats and lists, nothing more: it reaches no process runner,
// no history and no UI.
func TestArchWatchOnlyLooks(t *testing.T) {
	p := mod + "core/watch"
	g := goList(t, nil, p)
	if c := g.chain(p, []string{mod + "core/proc", mod + "core/gate", mod + "core/history", mod + "core/pipeline", mod + "app/", "os/exec", "fyne.io/"}); c != nil {
		t.Errorf("%s reaches %s: %s", p, c[len(c)-1], strings.Join(c, " -> "))
	}
}

// TestArchNetproxyStandsAlone: core/netproxy (the proxy of --net-allow)
// knows nothing of processes, the gate, the history or the UI: the gate
// starts it and hands it a way to name a connection's process.
func TestArchNetproxyStandsAlone(t *testing.T) {
	p := mod + "core/netproxy"
	g := goList(t, nil, p)
	if c := g.chain(p, []string{mod + "core/", mod + "app/", "os/exec", "fyne.io/", "modernc.org/sqlite/"}); c != nil {
		t.Errorf("%s reaches %s: %s", p, c[len(c)-1], strings.Join(c, " -> "))
	}
}

func TestArchCLIBuildsWithoutCgo(t *testing.T) {
	cli := mod + "cmd/diffgate"
	// With cgo off every package of the CLI must still be there (go list
	// fails on a package whose files all need cgo) ...
	g := goList(t, []string{"CGO_ENABLED=0"}, cli)
	if _, ok := g.imports["runtime/cgo"]; ok {
		t.Errorf("CGO_ENABLED=0: the CLI still links runtime/cgo: %s", strings.Join(g.chain(cli, []string{"runtime/cgo"}), " -> "))
	}
	// ... and with cgo available it must not use it either (the released
	// binary is built either way).
	g = goList(t, []string{"CGO_ENABLED=1"}, cli)
	for _, p := range g.order {
		if g.cgo[p] {
			c := g.chain(cli, []string{p})
			if c == nil {
				c = []string{p}
			}
			t.Errorf("the CLI reaches the cgo package %s: %s", p, strings.Join(c, " -> "))
		}
	}
	if c := g.chain(cli, []string{"fyne.io/", mod + "app/"}); c != nil {
		t.Errorf("the CLI reaches %s: %s", c[len(c)-1], strings.Join(c, " -> "))
	}
}

func targetName(env []string) string {
	if len(env) == 0 {
		return "native"
	}
	return strings.Join(env, " ")
}

// frontEnds: the CLI and the apps gather input and show results; a run
// goes through core/pipeline, whose API holds the types they need.
var frontEnds = []string{"./app/...", "./cmd/..."}

// belowThePipeline: what only the pipeline reaches (a front end that
// imports them does part of a run's rules itself).
var belowThePipeline = []string{mod + "core/gate", mod + "core/proc", mod + "core/stage", mod + "core/contain"}

// TestArchFrontEndsUseThePipeline: no package under app/ or cmd/, tests
// included, imports core/gate, core/proc, core/stage or core/contain
// directly (native and wasm).
func TestArchFrontEndsUseThePipeline(t *testing.T) {
	for _, target := range [][]string{nil, {"GOOS=js", "GOARCH=wasm"}} {
		args := append([]string{"list", "-e", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}"}, frontEnds...)
		out := goOutput(t, target, args...)
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, imports, _ := strings.Cut(line, "\t")
			n++
			for _, imp := range strings.Fields(imports) {
				if matches(imp, belowThePipeline) {
					t.Errorf("%s: %s imports %s (use core/pipeline's API)", targetName(target), pkg, imp)
				}
			}
		}
		if n < 5 {
			t.Errorf("%s: go list found only %d front-end packages", targetName(target), n)
		}
	}
}

// TestArchKnowsNoReport: core/watch records and compares stats (the gate
// turns its changes into the report's findings); core/textdiff computes
// diffs (the reports render them, never the other way round).
func TestArchKnowsNoReport(t *testing.T) {
	for _, p := range []string{mod + "core/watch", mod + "core/textdiff"} {
		g := goList(t, nil, p)
		if c := g.chain(p, []string{mod + "core/report"}); c != nil {
			t.Errorf("%s reaches %s: %s", p, c[len(c)-1], strings.Join(c, " -> "))
		}
	}
}

const testFinder = mod + "app/internal/uitest"

// TestArchTestFinderOnlyInTests: app/internal/uitest (the widget finder of
// the app's tests) is imported by tests alone, never by a package that
// builds into a program (native and wasm); the three app test suites use it.
func TestArchTestFinderOnlyInTests(t *testing.T) {
	for _, target := range [][]string{nil, {"GOOS=js", "GOARCH=wasm"}} {
		args := []string{"list", "-e", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./..."}
		out := goOutput(t, target, args...)
		inTests := map[string]bool{}
		for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			f := strings.SplitN(line, "\t", 3)
			if len(f) != 3 {
				t.Fatalf("go list line %q", line)
			}
			if slices.Contains(strings.Fields(f[1]), testFinder) {
				t.Errorf("%s: %s imports %s outside its tests", targetName(target), f[0], testFinder)
			}
			inTests[f[0]] = slices.Contains(strings.Fields(f[2]), testFinder)
		}
		for _, p := range []string{mod + "app/review", mod + "app/ui", mod + "app/web"} {
			if _, listed := inTests[p]; listed && !inTests[p] {
				t.Errorf("%s: the tests of %s do not use %s", targetName(target), p, testFinder)
			}
		}
	}
}
