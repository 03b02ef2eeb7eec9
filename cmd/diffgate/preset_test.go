package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/report"
)

// presetCase is a real tool run in a gated workspace that passes with its
// preset alone.
type presetCase struct {
	preset string
	// setup prepares the workspace (and what the tool needs outside it).
	setup func(t *testing.T, ws string)
	// script runs the tool in the workspace.
	script func(t *testing.T) string
	// check says why the case cannot run here, or "".
	check func() string
}

func lookTool(name string) func() string {
	return func() string {
		if _, err := exec.LookPath(name); err != nil {
			return name + " is not installed"
		}
		return ""
	}
}

// systemPython is the distribution's python3 (a venv of it links to it).
func systemPython() string {
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, _ := exec.LookPath("python3")
	return p
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return ""
}

var presetCases = []presetCase{
	{preset: "python-venv",
		check: func() string {
			py := systemPython()
			if py == "" {
				return "python3 is not installed"
			}
			d, err := os.MkdirTemp("", "venv-probe")
			if err != nil {
				return err.Error()
			}
			defer os.RemoveAll(d)
			if out, err := exec.Command(py, "-m", "venv", "--without-pip", filepath.Join(d, "v")).CombinedOutput(); err != nil {
				return "python3 -m venv does not work (apt install python3-venv): " + strings.TrimSpace(string(out))
			}
			return ""
		},
		setup: func(t *testing.T, ws string) {},
		script: func(t *testing.T) string {
			return systemPython() + " -m venv --without-pip .venv && .venv/bin/python3 -c 'import sys; assert sys.prefix != sys.base_prefix'"
		},
	},
	{preset: "node",
		// Without npm (the project's test dependencies do not include
		// Node), the script lays out what npm install writes.
		check: func() string { return "" },
		setup: func(t *testing.T, ws string) {
			if !haveNpm() {
				os.WriteFile(filepath.Join(ws, "package.json"), []byte(`{"name": "app", "version": "1.0.0", "dependencies": {"tiny": "file:tiny-1.0.0.tgz"}}`+"\n"), 0o644)
				return
			}
			// A tiny package, packed with npm pack outside the workspace;
			// the workspace depends on the tarball: no network.
			pkg := t.TempDir()
			os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name": "tiny", "version": "1.0.0", "bin": {"tiny": "cli.js"}}`+"\n"), 0o644)
			os.WriteFile(filepath.Join(pkg, "cli.js"), []byte("#!/usr/bin/env node\nconsole.log('tiny')\n"), 0o755)
			os.WriteFile(filepath.Join(pkg, "index.js"), []byte("module.exports = 1\n"), 0o644)
			dest := t.TempDir()
			cmd := exec.Command("npm", "pack", "--pack-destination", dest, pkg)
			cmd.Dir = pkg
			cmd.Env = npmEnv(t)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("npm pack: %v\n%s", err, out)
			}
			tgz := filepath.Join(dest, "tiny-1.0.0.tgz")
			os.WriteFile(filepath.Join(ws, "package.json"), []byte(`{"name": "app", "version": "1.0.0", "dependencies": {"tiny": "file:`+tgz+`"}}`+"\n"), 0o644)
		},
		script: func(t *testing.T) string {
			if !haveNpm() {
				t.Log("npm is not installed: the script writes npm install's layout itself")
				return `mkdir -p node_modules/tiny node_modules/.bin && echo '{"name": "tiny", "version": "1.0.0"}' > node_modules/tiny/package.json && ` +
					`echo 'module.exports = 1' > node_modules/tiny/index.js && printf '#!/usr/bin/env node\n' > node_modules/tiny/cli.js && chmod +x node_modules/tiny/cli.js && ` +
					`ln -s ../tiny/cli.js node_modules/.bin/tiny && echo '{"lockfileVersion": 3}' > node_modules/.package-lock.json && ` +
					`echo '{"name": "app", "lockfileVersion": 3}' > package-lock.json && test -x node_modules/.bin/tiny`
			}
			env := ""
			for _, e := range npmEnv(t) {
				if strings.HasPrefix(e, "npm_config_") || strings.HasPrefix(e, "HOME=") {
					env += "'" + e + "' "
				}
			}
			return "env " + env + "npm install --offline --no-audit --no-fund --loglevel=error && test -x node_modules/.bin/tiny"
		},
	},
	{preset: "go-build",
		check: func() string {
			if goTool() == "" {
				return "go is not on PATH"
			}
			return ""
		},
		setup: func(t *testing.T, ws string) {
			os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/hello\n\ngo 1.21\n"), 0o644)
			os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644)
		},
		script: func(t *testing.T) string {
			return "GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local " + goTool() + " build -o bin/ ./... && ./bin/hello"
		},
	},
	{preset: "git",
		check: lookTool("git"),
		setup: func(t *testing.T, ws string) {},
		script: func(t *testing.T) string {
			return "export GIT_CONFIG_NOSYSTEM=1 HOME=" + t.TempDir() + " && git init -q && git add -A && " +
				"git -c user.name=gate -c user.email=gate@example.com commit -qm first && git gc -q"
		},
	},
}

func haveNpm() bool {
	_, err := exec.LookPath("npm")
	return err == nil && os.Getenv("DIFFGATE_TEST_NO_NPM") == ""
}

// npmEnv keeps npm's cache and config out of the user's home.
func npmEnv(t *testing.T) []string {
	home := filepath.Join(os.TempDir(), "diffgate-npm-test-home")
	os.MkdirAll(home, 0o755)
	return append(os.Environ(), "HOME="+home, "npm_config_cache="+filepath.Join(home, "cache"), "npm_config_update_notifier=false")
}

// TestPresetsOnRealTools runs each tool for real through the gate: its
// preset alone makes the run pass, without it the run fails, and a
// forbidden edit next to the tool's work still fails with its line.
func TestPresetsOnRealTools(t *testing.T) {
	for _, pc := range presetCases {
		t.Run(pc.preset, func(t *testing.T) {
			if why := pc.check(); why != "" {
				t.Skipf("preset:%s not tested on a real run: %s", pc.preset, why)
			}
			gated := func(extra, allow string) (int, string, string) {
				ws, sh := fixture(t, pc.script(t)+extra)
				pc.setup(t, ws)
				// Uncontained: the tools use caches in HOME and the
				// network (contained, they need --writable and --net).
				args := []string{"run", "--workspace", ws, "--no-history", "--contain=off"}
				if allow != "" {
					args = append(args, "--allow", allow)
				}
				return cliRun(t, append(args, "--", sh)...)
			}
			preset := "preset:" + pc.preset
			if code, out, errs := gated("", preset); code != 0 || out != "" {
				t.Fatalf("with %s: exit %d, stdout %q, stderr %q", preset, code, out, errs)
			}
			if code, out, _ := gated("", ""); code != 1 || out == "" {
				t.Fatalf("without the preset: exit %d, stdout %q", code, out)
			}
			if code, out, errs := gated(" && echo x >> config.json", preset); code != 1 || out != "CHANGED config.json\n" {
				t.Fatalf("forbidden edit with %s: exit %d, stdout %q, stderr %q", preset, code, out, errs)
			}
		})
	}
}

// TestVenvFindingNamesItsEntry: a venv allowed only as a folder fails on its
// interpreter link alone, and the line names the entry that would allow it;
// with the preset, the report's rule names the preset's entry.
func TestVenvFindingNamesItsEntry(t *testing.T) {
	if why := presetCases[0].check(); why != "" {
		t.Skip(why)
	}
	ws, sh := fixture(t, presetCases[0].script(t))
	code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", ".venv/", "--", sh)
	// python3 links outside; python and python3.11 link to python3, so
	// they resolve outside too (symlinks are resolved as the kernel does).
	found := false
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(line, "ADDED .venv/bin/python") || !strings.Contains(line, "(symlink-escape -> ") {
			found = false
			break
		}
		found = found || strings.HasPrefix(line, "ADDED .venv/bin/python3 (symlink-escape -> ") &&
			strings.HasSuffix(line, ", allow with symlink-escape:.venv/bin/python3)")
	}
	if code != 1 || !found {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	ws, sh = fixture(t, presetCases[0].script(t))
	js := filepath.Join(t.TempDir(), "r.json")
	if code, out, errs := cliRun(t, "run", "--workspace", ws, "--no-history", "--allow", "preset:python-venv", "--report", js, "--", sh); code != 0 {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	f, err := os.Open(js)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := report.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{}
	for _, c := range rep.Changes {
		rules[c.Path] = c.Rule
	}
	if rules[".venv/bin/python3"] != "symlink-escape:.venv/bin/python* (preset:python-venv)" || rules[".venv/pyvenv.cfg"] != ".venv/ (preset:python-venv)" {
		t.Fatalf("rules %q", rules)
	}
	if len(rep.Allowlist) != 1 || rep.Allowlist[0] != "preset:python-venv" {
		t.Fatalf("allowlist %q", rep.Allowlist)
	}
}
