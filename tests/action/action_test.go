// Package action runs the repository's GitHub Action (../../action.yml)
// locally: each run: step in bash, the way a runner does (bash --noprofile
// --norc -eo pipefail, GITHUB_OUTPUT, GITHUB_PATH, GITHUB_STEP_SUMMARY,
// GITHUB_WORKSPACE, RUNNER_TEMP, the step's env: with its ${{ }}
// expressions evaluated, INPUT_* for the inputs), against real scripts.
// uses: steps (setup-go, upload-artifact) are not run: the test checks what
// they would be given. An expression the runner does not know fails the test,
// so the action stays within what is tested here.
package action

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"gopkg.in/yaml.v3"

	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/internal/pgtest"
)

type actionFile struct {
	Inputs map[string]struct {
		Default  string `yaml:"default"`
		Required bool   `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []step `yaml:"steps"`
	} `yaml:"runs"`
}

type step struct {
	Name       string            `yaml:"name"`
	ID         string            `yaml:"id"`
	If         string            `yaml:"if"`
	Shell      string            `yaml:"shell"`
	Run        string            `yaml:"run"`
	Uses       string            `yaml:"uses"`
	WorkingDir string            `yaml:"working-directory"`
	Env        map[string]string `yaml:"env"`
	With       map[string]string `yaml:"with"`
}

// job is one run of the action: its context and what it left.
type job struct {
	t         *testing.T
	act       *actionFile
	inputs    map[string]string
	github    map[string]string // github.action_path, github.workspace
	temp      string            // runner.temp
	steps     map[string]map[string]string
	path      []string // GITHUB_PATH entries, newest first
	summary   string   // the GITHUB_STEP_SUMMARY file
	failed    bool
	exitCode  int                 // the first failing step's exit status
	uploads   []map[string]string // what upload-artifact was given
	stepsDone []string
}

var exprRe = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// ref evaluates a reference: inputs.X, github.X, runner.temp,
// steps.ID.outputs.X.
func (j *job) ref(r string) string {
	j.t.Helper()
	parts := strings.Split(r, ".")
	switch {
	case len(parts) == 2 && parts[0] == "inputs":
		v, ok := j.inputs[parts[1]]
		if !ok {
			j.t.Fatalf("action.yml: unknown input %q", r)
		}
		return v
	case len(parts) == 2 && parts[0] == "github":
		v, ok := j.github[parts[1]]
		if !ok {
			j.t.Fatalf("action.yml: the local runner does not know %q", r)
		}
		return v
	case r == "runner.temp":
		return j.temp
	case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
		return j.steps[parts[1]][parts[3]]
	}
	j.t.Fatalf("action.yml: the local runner does not know the expression %q", r)
	return ""
}

// expand replaces each ${{ ref }} in s.
func (j *job) expand(s string) string {
	return exprRe.ReplaceAllStringFunc(s, func(m string) string {
		return j.ref(exprRe.FindStringSubmatch(m)[1])
	})
}

var condRe = regexp.MustCompile(`^(\S+)\s*(==|!=)\s*'([^']*)'$`)

// cond evaluates an if: made of terms joined by &&: always(), REF == 'x',
// REF != 'x'. A step runs after a failure only when it says always().
func (j *job) cond(s string) bool {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "${{"), "}}"))
	always := false
	ok := true
	if s != "" {
		for _, term := range strings.Split(s, "&&") {
			term = strings.TrimSpace(term)
			if term == "always()" {
				always = true
				continue
			}
			m := condRe.FindStringSubmatch(term)
			if m == nil {
				j.t.Fatalf("action.yml: the local runner does not know the condition %q", term)
			}
			eq := j.ref(m[1]) == m[3]
			if eq != (m[2] == "==") {
				ok = false
			}
		}
	}
	return ok && (always || !j.failed)
}

func loadAction(t *testing.T) *actionFile {
	t.Helper()
	data, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml: runs.using %q, want composite", a.Runs.Using)
	}
	return &a
}

// runAction runs the action with the given inputs in workspace ws.
func runAction(t *testing.T, ws string, inputs map[string]string) *job {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// The job's history: never the user's (a runner starts with none).
	// XDG_CACHE_HOME stays: go's build cache is below it.
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	j := &job{t: t, act: loadAction(t), inputs: map[string]string{},
		github: map[string]string{"action_path": root, "workspace": ws},
		temp:   filepath.Join(tmp, "runner-temp"), steps: map[string]map[string]string{},
		summary: filepath.Join(tmp, "step-summary.md")}
	os.MkdirAll(j.temp, 0o755)
	os.WriteFile(j.summary, nil, 0o644)
	for k := range inputs {
		if _, ok := j.act.Inputs[k]; !ok {
			t.Fatalf("the test gives an input action.yml does not declare: %s", k)
		}
	}
	for k, in := range j.act.Inputs {
		v, given := inputs[k]
		if !given {
			if in.Required {
				t.Fatalf("required input %s not given", k)
			}
			v = j.expand(in.Default)
		}
		j.inputs[k] = v
	}
	for i, s := range j.act.Runs.Steps {
		name := s.Name
		if name == "" {
			name = fmt.Sprintf("step %d", i)
		}
		if !j.cond(s.If) {
			t.Logf("skip: %s", name)
			continue
		}
		j.stepsDone = append(j.stepsDone, name)
		if s.Uses != "" {
			with := map[string]string{}
			for k, v := range s.With {
				with[k] = j.expand(v)
			}
			t.Logf("uses (not run here): %s %v", s.Uses, with)
			if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
				j.uploads = append(j.uploads, with)
			}
			continue
		}
		if s.Shell != "bash" {
			t.Fatalf("%s: shell %q: the runner runs bash steps only", name, s.Shell)
		}
		code, out := j.runStep(s)
		t.Logf("step %q: exit %d\n%s", name, code, out)
		if code != 0 && !j.failed {
			j.failed, j.exitCode = true, code
		}
	}
	return j
}

// runStep runs one run: step as a runner's bash does.
func (j *job) runStep(s step) (int, string) {
	t := j.t
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "step.sh")
	os.WriteFile(script, []byte(s.Run), 0o644)
	output, pathFile := filepath.Join(dir, "output"), filepath.Join(dir, "path")
	os.WriteFile(output, nil, 0o644)
	os.WriteFile(pathFile, nil, 0o644)
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GITHUB_") && !strings.HasPrefix(e, "RUNNER_") && !strings.HasPrefix(e, "INPUT_") && !strings.HasPrefix(e, "PATH=") {
			env = append(env, e)
		}
	}
	env = append(env,
		"PATH="+strings.Join(append(append([]string{}, j.path...), os.Getenv("PATH")), string(os.PathListSeparator)),
		"GITHUB_ACTIONS=true", "CI=true",
		"GITHUB_OUTPUT="+output, "GITHUB_PATH="+pathFile, "GITHUB_STEP_SUMMARY="+j.summary,
		"GITHUB_WORKSPACE="+j.github["workspace"], "GITHUB_ACTION_PATH="+j.github["action_path"],
		"RUNNER_TEMP="+j.temp)
	for k, v := range j.inputs {
		env = append(env, "INPUT_"+strings.ToUpper(strings.ReplaceAll(k, " ", "_"))+"="+v)
	}
	for k, v := range s.Env {
		env = append(env, k+"="+j.expand(v))
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Env = env
	cmd.Dir = j.github["workspace"]
	if s.WorkingDir != "" {
		cmd.Dir = j.expand(s.WorkingDir)
	}
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("bash: %v", err)
	}
	if s.ID != "" {
		j.steps[s.ID] = parseOutputs(t, output)
	}
	data, _ := os.ReadFile(pathFile)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l != "" {
			j.path = append([]string{l}, j.path...)
		}
	}
	return code, string(out)
}

// parseOutputs reads a GITHUB_OUTPUT file: NAME=VALUE lines and
// NAME<<DELIMITER blocks.
func parseOutputs(t *testing.T, file string) map[string]string {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if k, delim, ok := strings.Cut(l, "<<"); ok && !strings.Contains(k, "=") {
			var lines []string
			for sc.Scan() && sc.Text() != delim {
				lines = append(lines, sc.Text())
			}
			out[k] = strings.Join(lines, "\n")
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q", l)
		}
		out[k] = v
	}
	return out
}

// output is an output of the action (outputs: value).
func (j *job) output(name string) string {
	o, ok := j.act.Outputs[name]
	if !ok {
		j.t.Fatalf("no output %q", name)
	}
	return j.expand(o.Value)
}

func (j *job) summaryText() string {
	data, err := os.ReadFile(j.summary)
	if err != nil {
		j.t.Fatal(err)
	}
	return string(data)
}

// workspace makes a workspace with a config file and a scripts folder
// outside it holding the given scripts.
func workspace(t *testing.T, scripts map[string]string) (ws, scriptDir string) {
	t.Helper()
	ws = t.TempDir()
	os.MkdirAll(filepath.Join(ws, "logs"), 0o755)
	os.WriteFile(filepath.Join(ws, "config.json"), []byte("{\"a\": 1}\n"), 0o644)
	scriptDir = t.TempDir()
	for name, body := range scripts {
		os.WriteFile(filepath.Join(scriptDir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755)
	}
	return ws, scriptDir
}

// checkReports checks the reports the artifact step was given.
func checkReports(t *testing.T, j *job, verdict string) {
	t.Helper()
	dir := j.output("reports-dir")
	if len(j.uploads) != 1 || j.uploads[0]["path"] != dir || j.uploads[0]["name"] != "diffgate-report" {
		t.Fatalf("upload-artifact given %v, want path %s", j.uploads, dir)
	}
	for _, f := range []string{"report.json", "report.html", "report.md"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("artifact %s: %v", f, err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(dir, "report.json"))
	if !regexp.MustCompile(`"verdict":\s*"` + verdict + `"`).Match(data) {
		t.Errorf("report.json does not say %s", verdict)
	}
}

func TestActionPass(t *testing.T) {
	ws, sd := workspace(t, map[string]string{"gen.sh": "echo built >> logs/run.log"})
	j := runAction(t, ws, map[string]string{"script": filepath.Join(sd, "gen.sh"), "allow": "logs/"})
	if j.failed || j.output("verdict") != "pass" || j.output("exit-code") != "0" {
		t.Fatalf("job failed %v (exit %d), verdict %q", j.failed, j.exitCode, j.output("verdict"))
	}
	if s := j.summaryText(); !strings.Contains(s, "diffgate: PASS") || !strings.Contains(s, "| Workspace | `"+ws+"` |") {
		t.Errorf("job summary:\n%s", s)
	}
	checkReports(t, j, "pass")
}

func TestActionFail(t *testing.T) {
	ws, sd := workspace(t, map[string]string{"gen.sh": "echo built >> logs/run.log; echo '{}' > config.json"})
	j := runAction(t, ws, map[string]string{"script": filepath.Join(sd, "gen.sh"), "allow": "logs/"})
	if !j.failed || j.exitCode != 1 || j.output("verdict") != "fail" || j.output("exit-code") != "1" {
		t.Fatalf("job failed %v exit %d verdict %q: want a failed job, exit 1", j.failed, j.exitCode, j.output("verdict"))
	}
	if last := j.stepsDone[len(j.stepsDone)-1]; last != "Fail the job on FAIL" {
		t.Errorf("the last step run was %q", last)
	}
	s := j.summaryText()
	if !strings.Contains(s, "diffgate: FAIL") || !strings.Contains(s, "config.json") {
		t.Errorf("job summary:\n%s", s)
	}
	findings, _ := os.ReadFile(filepath.Join(j.output("reports-dir"), "findings.txt"))
	if string(findings) != "CHANGED config.json\n" {
		t.Errorf("findings.txt %q", findings)
	}
	checkReports(t, j, "fail")
}

// TestActionHistoryAndProfile: the allowlist comes from the history (an
// approved version in the --db given) and the profile adds a preset; args
// reach the script; extra-args reach diffgate run.
func TestActionHistoryAndProfile(t *testing.T) {
	ws, sd := workspace(t, map[string]string{"gen.sh": `[ "$1" = "two words" ] || exit 7; echo built >> logs/run.log; mkdir -p node_modules/x; echo 1 > node_modules/x/i.js`})
	db := filepath.Join(t.TempDir(), "team.db")
	inputs := map[string]string{"script": filepath.Join(sd, "gen.sh"), "args": "two words\n",
		"profile": "node", "allowlist-from-history": "true", "db": db, "extra-args": "--timeout=2m\n"}
	// No approved version yet: exit 2, said in the summary, the job fails.
	j := runAction(t, ws, inputs)
	if !j.failed || j.exitCode != 2 || j.output("verdict") != "error" {
		t.Fatalf("without an approved version: failed %v exit %d verdict %q", j.failed, j.exitCode, j.output("verdict"))
	}
	if s := j.summaryText(); !strings.Contains(s, "the gate did not run (exit 2)") {
		t.Errorf("job summary:\n%s", s)
	}
	bin := j.steps["install"]["bin"]
	if out, err := exec.Command(bin, "allowlist", "approve", "--workspace", ws, "--allow", "logs/", "--note", "logs are expected", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	j = runAction(t, ws, inputs)
	if j.failed || j.output("verdict") != "pass" {
		t.Fatalf("with the approved version and the node profile: failed %v exit %d verdict %q\n%s", j.failed, j.exitCode, j.output("verdict"), j.summaryText())
	}
	data, _ := os.ReadFile(filepath.Join(j.output("reports-dir"), "report.json"))
	for _, want := range []string{`"logs/"`, `"preset:node"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("report.json's allowlist lacks %s", want)
		}
	}
}

// TestActionTeamStore: the action against a team store on PostgreSQL: the
// reviewer ana approves an allowlist on the server, the job (as the CI
// role) uses it, passes, and its summary says who approved it.
func TestActionTeamStore(t *testing.T) {
	srv := pgtest.Start(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the team store's local caches: never the user's
	t.Setenv(history.EnvDB, "")
	name := srv.NewDB(t, "owner")
	owner, err := history.Open(srv.URL("owner", name), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	owner.Close()
	srv.Exec(t, name, "CREATE ROLE ana LOGIN IN ROLE diffgate_reviewer", "CREATE ROLE ci LOGIN IN ROLE diffgate_ci")
	ws, sd := workspace(t, map[string]string{"gen.sh": "echo built >> logs/run.log"})
	ana, err := history.Open(srv.URL("ana", name), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ana.Approve(context.Background(), ws, []string{"logs/"}, "logs are expected"); err != nil {
		t.Fatal(err)
	}
	ana.Close()
	j := runAction(t, ws, map[string]string{"script": filepath.Join(sd, "gen.sh"), "allowlist-from-history": "true", "db": srv.URL("ci", name)})
	if j.failed || j.output("verdict") != "pass" {
		t.Fatalf("job failed %v (exit %d), verdict %q\n%s", j.failed, j.exitCode, j.output("verdict"), j.summaryText())
	}
	if s := j.summaryText(); !regexp.MustCompile(`\| Approved allowlist \| version 1, approved \S+ by ana \(logs are expected\) \|`).MatchString(s) {
		t.Errorf("job summary lacks who approved the allowlist:\n%s", s)
	}
	checkReports(t, j, "pass")
	// The run is on the server, in its chain.
	db, err := history.Open(srv.URL("ci", name), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, err := db.Count(context.Background(), history.Filter{Workspace: ws}); err != nil || n != 1 {
		t.Errorf("%d runs on the team store, %v; want 1", n, err)
	}
	if b, err := db.Verify(context.Background()); b != nil || err != nil {
		t.Errorf("verify: %+v, %v", b, err)
	}
}
