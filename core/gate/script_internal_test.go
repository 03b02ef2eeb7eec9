package gate

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestScriptOf pins the rule deciding which file (or inline code) is
// recorded as the run's script; docs/cli.md states it.
func TestScriptOf(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "gen.sh"), []byte("echo\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "req.txt"), []byte("x\n"), 0o644)
	look := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("no %s", name)
		}
		abs, _ := filepath.Abs(p)
		return abs
	}
	bash, env, cp := look("bash"), look("env"), look("cp")
	// A fake interpreter by name: python3.12 in a directory of its own.
	py := filepath.Join(t.TempDir(), "python3.12")
	os.WriteFile(py, []byte("#!/bin/sh\n"), 0o755)
	gen := filepath.Join(ws, "gen.sh")
	cases := []struct {
		name    string
		command string
		args    []string
		path    string
		inline  bool
	}{
		{"interpreter file", bash, []string{"-x", "gen.sh", "req.txt"}, gen, false},
		{"absolute file", bash, []string{gen}, gen, false},
		{"missing file is skipped", bash, []string{"nope.sh", "gen.sh"}, gen, false},
		{"inline", bash, []string{"-e", "-c", "echo hi", "gen.sh"}, bash, true},
		{"-c after a file is an argument", bash, []string{"gen.sh", "-c", "x"}, gen, false},
		{"no file: the interpreter", bash, []string{"-s"}, bash, false},
		{"versioned python", py, []string{"-u", "gen.sh"}, gen, false},
		{"python -c", py, []string{"-c", "print(1)"}, py, true},
		{"python -m", py, []string{"-m", "pip", "install", "-r", "req.txt"}, py, false},
		{"other program", cp, []string{"gen.sh", "x"}, cp, false},
		{"env", env, []string{"-i", "-u", "X", "A=1", "bash", "gen.sh"}, gen, false},
		{"env --", env, []string{"--", "bash", "gen.sh"}, gen, false},
		{"env -S is env", env, []string{"-S", "bash gen.sh"}, env, false},
		{"env unknown program", env, []string{"no-such-program-xyz", "gen.sh"}, env, false},
		{"env relative program", env, []string{"./gen.sh"}, gen, false},
	}
	for _, tc := range cases {
		sc, err := scriptOf(ws, tc.command, tc.args)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if sc.path != tc.path || sc.inline != tc.inline {
			t.Errorf("%s: recorded %s inline %v; want %s inline %v", tc.name, sc.path, sc.inline, tc.path, tc.inline)
		}
	}
	if sc, _ := scriptOf(ws, bash, []string{"-c", "echo hi"}); string(sc.text) != "echo hi" {
		t.Errorf("inline text %q", sc.text)
	}
	if sc, _ := scriptOf(ws, cp, nil); sc.text != nil {
		t.Errorf("a compiled program's bytes were kept as text")
	}
}
