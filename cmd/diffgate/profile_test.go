package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/testenv"
	"github.com/diffgate/diffgate/internal/toolserve"
)

// profileCase is a real tool run contained, with only its preset (and
// --net-allow for the local servers it fetches from).
type profileCase struct {
	name, preset string
	// check says why the case cannot run here ("" when it can).
	check func() string
	// setup fills the workspace, starts the local servers the tool fetches
	// from (reg.add) and returns the script (shell text).
	setup func(t *testing.T, ws, outside string, reg *localHosts) string
	// want are the paths the run must change (and the report allow).
	want []string
}

// localHosts are the servers of one run, each under a made-up name that
// the gate's proxy maps to 127.0.0.1 (DIFFGATE_TEST_NET_HOSTS).
type localHosts struct {
	names   []string
	servers []*toolserve.Server
}

// add names s; it returns NAME:PORT, the address the script uses.
func (l *localHosts) add(name string, s *toolserve.Server) string {
	l.names = append(l.names, name)
	l.servers = append(l.servers, s)
	return name + ":" + s.Port()
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

// onPath says why a tool is missing ("" when it is there).
func onPath(tools ...string) func() string {
	return func() string {
		for _, tool := range tools {
			if _, err := exec.LookPath(tool); err != nil {
				return tool + " is not installed (make test-deps)"
			}
		}
		return ""
	}
}

var profileCases = []profileCase{
	{name: "pip", preset: "python-venv", check: pipVenv,
		setup: func(t *testing.T, ws, outside string, reg *localHosts) string {
			index := reg.add("pypi.test", toolserve.PyPI(t))
			return "/usr/bin/python3 -m venv .venv && .venv/bin/pip install -q --index-url http://" + index + "/simple/ --trusted-host pypi.test " +
				toolserve.PyPIPackage + " && .venv/bin/python -c 'import tinypkg; assert tinypkg.VALUE == 42'"
		},
		want: []string{".venv/pyvenv.cfg", ".venv/lib/python3." + pyMinor() + "/site-packages/tinypkg/__init__.py"}},
	{name: "npm", preset: "node", check: onPath("npm", "node"),
		setup: func(t *testing.T, ws, outside string, reg *localHosts) string {
			registry := reg.add("npm.test", toolserve.NPM(t))
			os.WriteFile(filepath.Join(ws, "package.json"), []byte(`{"name": "app", "version": "1.0.0"}`+"\n"), 0o644)
			return "npm install --no-audit --loglevel=error --registry http://" + registry + "/ " + toolserve.NPMPackage +
				" && node -e 'if (require(\"tiny\") !== 42) process.exit(2)'"
		},
		want: []string{"package.json", "package-lock.json", "node_modules/tiny/index.js"}},
	{name: "go", preset: "go-build",
		check: func() string {
			if goBin() == "" {
				return "go is not installed"
			}
			return ""
		},
		setup: func(t *testing.T, ws, outside string, reg *localHosts) string {
			// A version of its own each run: the private module cache is
			// kept, and the module must come through the proxy.
			const mod = "example.test/tiny"
			ver := fmt.Sprintf("v0.1.%d", time.Now().UnixNano()/1000)
			proxy := reg.add("goproxy.test", toolserve.GoProxy(t, mod, ver))
			// The tool's own variables, passed on by the profile.
			t.Setenv("GOPROXY", "http://"+proxy)
			t.Setenv("GOSUMDB", "off")
			t.Setenv("GOFLAGS", "-mod=mod")
			t.Setenv("GOTOOLCHAIN", "local")
			os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/hello\n\ngo 1.21\n\nrequire "+mod+" "+ver+"\n"), 0o644)
			os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nimport \"example.test/tiny\"\n\nfunc main() { println(\"hello\", tiny.Value) }\n"), 0o644)
			os.WriteFile(filepath.Join(ws, "main_test.go"), []byte("package main\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n"), 0o644)
			g := goBin()
			return g + " mod download && " + g + " build -o bin/ ./... && " + g + " test ./... && " +
				filepath.Join(filepath.Dir(g), "gofmt") + " -w . && ./bin/hello"
		},
		want: []string{"bin/hello", "go.sum"}},
	{name: "git", preset: "git", check: onPath("git"),
		setup: func(t *testing.T, ws, outside string, reg *localHosts) string {
			git := func(args ...string) {
				cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-C", ws}, args...)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %q: %v\n%s", args, err, out)
				}
			}
			git("init", "-q", "-b", "main")
			os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
			git("add", "a.txt")
			git("commit", "-qm", "a")
			os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b\n"), 0o644)
			return "g() { git -c user.name=t -c user.email=t@example.com \"$@\"; }; g add b.txt && g commit -qm b && g gc -q && g log --oneline | grep -q ' b$'"
		},
		want: []string{".git/index", ".git/packed-refs"}},
}

// pyMinor is the minor version of /usr/bin/python3 ("11" on Debian 12).
func pyMinor() string {
	out, err := exec.Command("/usr/bin/python3", "-c", "import sys; print(sys.version_info[1])").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// TestProfilesContained: with only --allow preset:X (and --net-allow for
// the local servers the tools fetch from) and containment on (no --net, no
// --writable), a venv and a pip install from a PyPI-style index, an npm
// install from a registry, go mod download from a GOPROXY with go build,
// go test and gofmt -w, and git commit and gc each succeed and pass the
// gate, direct and staged, as root and as a normal user. Each request the
// tool made is in the report (as many as its server answered, with the
// process); the tool's cache is the workspace's private one (kept: the
// staged run's is the direct run's) and every grant is in the report.
// Where the machine cannot contain fully (no mount namespace: a chroot)
// and the tool fails, the case skips with the report's reason.
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

// notContained says why the report's run was not fully contained ("" when
// it was): a layer not enforced, blocked actions not observed, or a copy
// stage that could not run at the workspace's path.
func notContained(rep *report.Report) string {
	c := rep.Containment
	if c == nil {
		return "no containment in the report"
	}
	var why []string
	if !c.Observed {
		why = append(why, "blocked actions not observed: "+c.Why)
	}
	for _, l := range c.Layers {
		if l.Requested && !l.Enforced {
			why = append(why, l.Name+": "+l.Why)
		}
	}
	if rep.Stage != nil && rep.Stage.RunAt != "" {
		why = append(why, "the copy stage ran at "+rep.Stage.RunAt+", not at the workspace's path")
	}
	return strings.Join(why, "; ")
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
				reg := &localHosts{}
				script := pc.setup(t, ws, outside, reg)
				t.Setenv("DIFFGATE_TEST_NET_HOSTS", strings.Join(reg.names, ","))
				sh := filepath.Join(outside, "script.sh")
				os.WriteFile(sh, []byte("#!/bin/sh\nset -e\n"+script+"\n"), 0o755)
				js := filepath.Join(outside, "r.json")
				args := []string{"run", "--workspace", ws, "--allow", "preset:" + pc.preset, "--report", js}
				for i, name := range reg.names {
					args = append(args, "--net-allow", name+":"+reg.servers[i].Port())
				}
				if staged {
					args = append(args, "--stage", "--db", filepath.Join(outside, "h.db"))
				} else {
					args = append(args, "--no-history")
				}
				code, out, errs := cliRun(t, append(args, "--", sh)...)
				if code != 0 || out != "" {
					if _, err := os.Stat(js); err == nil {
						if why := notContained(readReport(t, js)); why != "" {
							t.Skipf("%s: the tool failed (exit %d) where the run is not fully contained (%s):\n%s", mode, code, why, errs)
						}
					}
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
				checkRequests(t, mode, rep, reg)
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
				profile := pipeline.ProfileNamed(pc.preset)
				if profile != nil && len(profile.Caches) > 0 && caches == 0 || staged && !hasGrant(c.Grants, "stage_mechanism") {
					t.Errorf("%s: grants %+v", mode, c.Grants)
				}
				if profile != nil && !strings.Contains(errs, "\ngranted: cache ") {
					t.Errorf("%s: stderr lacks the grants line:\n%s", mode, errs)
				}
			}
		})
	}
}

// checkRequests: each request a local server answered is in the report's
// network list, allowed, with the process that made it, and nothing was
// refused; the --net-allow grant is on the record.
func checkRequests(t *testing.T, mode string, rep *report.Report, reg *localHosts) {
	t.Helper()
	for _, q := range rep.Network {
		if !q.Allowed {
			t.Errorf("%s: refused request %+v", mode, q)
		}
	}
	for i, name := range reg.names {
		s := reg.servers[i]
		port, _ := strconv.Atoi(s.Port())
		n := 0
		for _, q := range rep.Network {
			if q.Host == name && q.Port == port && q.Allowed {
				n++
				if q.PID <= 0 || q.Cmd == "" || q.BytesIn <= 0 {
					t.Errorf("%s: request without its process or bytes: %+v", mode, q)
				}
			}
		}
		if n == 0 || int64(n) != s.Hits() {
			t.Errorf("%s: %d requests to %s in the report, its server answered %d: %+v", mode, n, name, s.Hits(), rep.Network)
		}
		if !slices.ContainsFunc(rep.Containment.Grants, func(g report.Grant) bool {
			return g.Kind == "net" && g.Target == name+":"+s.Port()
		}) {
			t.Errorf("%s: no net grant of %s:%s: %+v", mode, name, s.Port(), rep.Containment.Grants)
		}
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

// TestProfilesDocumented: docs/allowlist.md's profile table and run -h show each
// profile of pipeline.Profiles() with its caches, settings, variables and
// hosts.
func TestProfilesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/allowlist.md")
	if err != nil {
		t.Fatal(err)
	}
	_, help, _ := cliRun(t, "run", "-h")
	for _, p := range pipeline.Profiles() {
		if _, err := policy.Parse([]string{"preset:" + p.Name}); err != nil {
			t.Errorf("profile %s has no preset: %v", p.Name, err)
		}
		var row string
		for _, line := range strings.Split(string(doc), "\n") {
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
				t.Errorf("docs/allowlist.md row of preset:%s lacks %s: %q", p.Name, w, row)
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
