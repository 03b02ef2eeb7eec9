package main

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
)

// profileCase is a real tool run contained, with only its preset.
type profileCase struct {
	name, preset string
	// check says why the case cannot run here ("" when it can).
	check func() string
	// setup fills the workspace and returns the script (shell text).
	setup func(t *testing.T, ws, outside string) string
	// want are the paths the run must change (and the report allow).
	want []string
}

// goBin is the go tool: on PATH, or where the Go distribution installs it.
func goBin() string {
	if p := goTool(); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/local/go/bin/go"); err == nil {
		return "/usr/local/go/bin/go"
	}
	return ""
}

// pipVenv says why `python3 -m venv` with pip cannot run here.
func pipVenv() string {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		return "/usr/bin/python3 is not installed"
	}
	d, err := os.MkdirTemp("", "venv-probe")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(d)
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", filepath.Join(d, "v")).CombinedOutput(); err != nil {
		return "python3 -m venv with pip does not work (apt install python3-venv): " + strings.TrimSpace(string(out))
	}
	return ""
}

// writeWheel writes a pure-Python wheel of package tiny 1.0 into dir.
func writeWheel(t *testing.T, dir string) {
	f, err := os.Create(filepath.Join(dir, "tiny-1.0-py3-none-any.whl"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for _, e := range [][2]string{
		{"tiny/__init__.py", "X = 1\n"},
		{"tiny-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n"},
		{"tiny-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: diffgate-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{"tiny-1.0.dist-info/RECORD", "tiny/__init__.py,,\ntiny-1.0.dist-info/METADATA,,\ntiny-1.0.dist-info/WHEEL,,\ntiny-1.0.dist-info/RECORD,,\n"},
	} {
		w, err := z.Create(e[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

var profileCases = []profileCase{
	{name: "pip", preset: "python-venv", check: pipVenv,
		setup: func(t *testing.T, ws, outside string) string {
			writeWheel(t, outside)
			return "/usr/bin/python3 -m venv .venv && .venv/bin/pip install -q --no-index --find-links " + outside + " tiny && .venv/bin/python -c 'import tiny'"
		},
		want: []string{".venv/pyvenv.cfg"}},
	{name: "npm", preset: "node",
		check: func() string {
			if _, err := exec.LookPath("npm"); err != nil {
				return "npm is not installed"
			}
			return ""
		},
		setup: func(t *testing.T, ws, outside string) string {
			pkg := filepath.Join(outside, "pkg")
			os.MkdirAll(pkg, 0o755)
			os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name": "tiny", "version": "1.0.0"}`+"\n"), 0o644)
			os.WriteFile(filepath.Join(pkg, "index.js"), []byte("module.exports = 1\n"), 0o644)
			cmd := exec.Command("npm", "pack", "--pack-destination", outside, pkg)
			cmd.Dir = pkg
			cmd.Env = npmEnv(t)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("npm pack: %v\n%s", err, out)
			}
			os.WriteFile(filepath.Join(ws, "package.json"), []byte(`{"name": "app", "version": "1.0.0"}`+"\n"), 0o644)
			return "npm install --no-audit --loglevel=error " + filepath.Join(outside, "tiny-1.0.0.tgz") + " && test -f node_modules/tiny/index.js"
		},
		want: []string{"package.json", "package-lock.json", "node_modules/tiny/index.js"}},
	{name: "go", preset: "go-build",
		check: func() string {
			if goBin() == "" {
				return "go is not installed"
			}
			return ""
		},
		setup: func(t *testing.T, ws, outside string) string {
			os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/hello\n\ngo 1.21\n"), 0o644)
			os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644)
			os.WriteFile(filepath.Join(ws, "main_test.go"), []byte("package main\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n"), 0o644)
			g := goBin()
			return "export GOTOOLCHAIN=local GOFLAGS=-mod=mod && " + g + " build -o bin/ ./... && " + g + " test ./... && " +
				filepath.Join(filepath.Dir(g), "gofmt") + " -w . && ./bin/hello"
		},
		want: []string{"bin/hello"}},
}

// TestProfilesContained: with only --allow preset:X and containment on
// (no --net, no --writable), pip install of a local wheel into a venv, npm
// install of a packed tarball, go build, go test and gofmt -w each succeed
// and pass the gate, direct and staged, as root and as a normal user; the
// tool's cache is the workspace's private one (kept: a second go build is
// warm) and every grant is in the report.
func TestProfilesContained(t *testing.T) {
	testenv.CLI(t)
	t.Run("root", testProfilesContained)
	t.Run("user", func(t *testing.T) {
		if testenv.AsUser(t) {
			return
		}
		testProfilesContained(t)
	})
}

func testProfilesContained(t *testing.T) {
	// The caches persist between runs of the tests (a cold Go build cache
	// costs a minute): a directory of its own per user, never the user's.
	cache := filepath.Join("/tmp", fmt.Sprintf("diffgate-profile-test-%d", os.Geteuid()))
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", cache)
	for _, pc := range profileCases {
		t.Run(pc.name, func(t *testing.T) {
			if why := pc.check(); why != "" {
				t.Skipf("%s: %s", pc.name, why)
			}
			var firstCaches []string
			for _, staged := range []bool{false, true} {
				mode := map[bool]string{false: "direct", true: "staged"}[staged]
				// The same workspace path each time: the same private cache,
				// kept between the runs (the staged run's build is warm).
				ws := filepath.Join(cache, "ws-"+pc.name)
				os.RemoveAll(ws)
				if err := os.MkdirAll(ws, 0o755); err != nil {
					t.Fatal(err)
				}
				outside := t.TempDir()
				script := pc.setup(t, ws, outside)
				sh := filepath.Join(outside, "script.sh")
				os.WriteFile(sh, []byte("#!/bin/sh\nset -e\n"+script+"\n"), 0o755)
				js := filepath.Join(outside, "r.json")
				args := []string{"run", "--workspace", ws, "--allow", "preset:" + pc.preset, "--report", js}
				if staged {
					args = append(args, "--stage", "--db", filepath.Join(outside, "h.db"))
				} else {
					args = append(args, "--no-history")
				}
				code, out, errs := cliRun(t, append(args, "--", sh)...)
				if code != 0 || out != "" {
					t.Fatalf("%s: exit %d, stdout %q, stderr %s", mode, code, out, errs)
				}
				rep := readReport(t, js)
				c := rep.Containment
				if c == nil || !c.Observed || len(rep.Blocked) != 0 {
					t.Fatalf("%s: containment %+v, blocked %+v", mode, c, rep.Blocked)
				}
				changed := map[string]bool{}
				for _, ch := range rep.Changes {
					changed[ch.Path] = true
				}
				for _, p := range pc.want {
					if !changed[p] {
						t.Errorf("%s: no change of %s in the report (%d changes)", mode, p, len(rep.Changes))
					}
				}
				caches := 0
				var targets []string
				for _, g := range c.Grants {
					if g.Kind == "cache" && g.By == "preset:"+pc.preset {
						if !strings.HasPrefix(g.Target[strings.Index(g.Target, "=")+1:], filepath.Join(cache, "diffgate", "caches")+"/") {
							t.Errorf("%s: cache outside diffgate's: %+v", mode, g)
						}
						caches++
						targets = append(targets, g.Target)
					}
				}
				if !staged {
					firstCaches = targets
				} else if strings.Join(targets, " ") != strings.Join(firstCaches, " ") {
					t.Errorf("the staged run's caches %q are not the direct run's %q", targets, firstCaches)
				}
				if caches == 0 || staged && !hasGrant(c.Grants, "stage_mechanism") {
					t.Errorf("%s: grants %+v", mode, c.Grants)
				}
				if !strings.Contains(errs, "\ngranted: cache ") {
					t.Errorf("%s: stderr lacks the grants line:\n%s", mode, errs)
				}
			}
		})
	}
}

func hasGrant(gs []report.Grant, kind string) bool {
	for _, g := range gs {
		if g.Kind == kind {
			return true
		}
	}
	return false
}

// TestProfilesDocumented: the README's profile table and run -h show each
// profile of pipeline.Profiles() with its caches, settings, variables and
// hosts.
func TestProfilesDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, help, _ := cliRun(t, "run", "-h")
	for _, p := range pipeline.Profiles() {
		if _, err := policy.Parse([]string{"preset:" + p.Name}); err != nil {
			t.Errorf("profile %s has no preset: %v", p.Name, err)
		}
		var row string
		for _, line := range strings.Split(string(readme), "\n") {
			if strings.HasPrefix(line, "| `preset:"+p.Name+"` |") && strings.Count(line, " | ") == 4 {
				row = line
			}
		}
		var helpLine string
		for _, line := range strings.Split(help, "\n") {
			if strings.HasPrefix(line, "  preset:"+p.Name+": ") {
				helpLine = line
			}
		}
		want := []string{"`" + strings.Join(p.Pass, " ") + "`", "`" + strings.Join(p.Hosts, " ") + "`"}
		if len(p.Set) > 0 {
			want = append(want, "`"+strings.Join(p.Set, " ")+"`")
		}
		for _, c := range append(p.Caches, p.Files...) {
			want = append(want, "`"+c.Env+"`")
		}
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("README row of preset:%s lacks %s: %q", p.Name, w, row)
			}
			if w := strings.Trim(w, "`"); !strings.Contains(helpLine, w) && !strings.HasPrefix(w, "npm_config_userconfig") {
				t.Errorf("run -h line of preset:%s lacks %s: %q", p.Name, w, helpLine)
			}
		}
	}
}

// TestProfileCacheUnwritable: a profile's cache that cannot be made is
// exit 2 with one line naming XDG_CACHE_HOME; uncontained, no cache is
// made.
func TestProfileCacheUnwritable(t *testing.T) {
	ws, sh := fixture(t, "true")
	t.Setenv("XDG_CACHE_HOME", "/proc/diffgate-nope")
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", "preset:go-build", "--", sh)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "set XDG_CACHE_HOME to a writable directory") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	if code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--contain=off", "--allow", "preset:go-build", "--", sh); code != 0 {
		t.Fatalf("uncontained: exit %d stdout %q stderr %q", code, out, errs)
	}
}
