package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/diffgate/diffgate/internal/oneline"
	"github.com/diffgate/diffgate/internal/quote"
)

// ErrNotExecutable is the cause of the SetupError for a script without
// execute permission: the CLI exits 126 for it, as a shell does.
var ErrNotExecutable = errors.New("script not executable")

// lookCommand resolves SCRIPT as a shell would: a name without a slash is
// looked up on PATH, anything else is a path (relative to the current
// directory). The result is an absolute path to a regular file.
func lookCommand(name string) (string, error) {
	p := name
	if !strings.Contains(name, "/") {
		found, err := exec.LookPath(name)
		switch {
		case errors.Is(err, exec.ErrDot):
			// A shell would run it; the gate does not run what a relative
			// PATH entry finds (as os/exec), but says how to.
			return "", setupf("script %s: found as %s through a relative PATH entry; give that path to run it", quote.Path(name), quote.Path(found))
		case err != nil:
			return "", setupf("script %s: not found on PATH", quote.Path(name))
		}
		p = found
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", setupf("script %s: %s", quote.Path(name), oneline.Reason(err))
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", setupf("script %s: %s", quote.Path(name), oneline.Reason(err))
	}
	if !st.Mode().IsRegular() {
		return "", setupf("script %s: not a regular file", quote.Path(name))
	}
	if st.Mode()&0o111 == 0 {
		// As a shell would refuse it (exit 126), before any snapshot.
		return "", &SetupError{Msg: fmt.Sprintf("script %s: permission denied: not executable (chmod +x it, or run it as sh %s)", quote.Path(name), quote.Path(name)), Err: ErrNotExecutable}
	}
	return abs, nil
}

// script is the file (or inline code) recorded as the run's script.
type script struct {
	path, sha256 string
	text         []byte
	inline       bool
}

// interpreters maps the known interpreters' base names (without a version
// suffix) to their inline-code option, "" when the gate knows of none.
var interpreters = map[string]string{
	"sh": "-c", "bash": "-c", "dash": "-c", "zsh": "-c", "ksh": "-c", "mksh": "-c", "ash": "-c", "yash": "-c", "fish": "-c",
	"python": "-c", "pypy": "-c",
	"node": "-e", "nodejs": "-e", "perl": "-e", "ruby": "-e",
	"busybox": "", "php": "", "lua": "", "luajit": "", "tclsh": "", "Rscript": "", "deno": "", "bun": "",
}

// interpreter reports whether base names a known interpreter (python3.12
// is python), and its inline-code option.
func interpreter(base string) (known bool, inline string) {
	inline, known = interpreters[strings.TrimRight(base, "0123456789.")]
	return known, inline
}

// pythonish reports whether base names python or pypy (any version).
func pythonish(base string) bool {
	t := strings.TrimRight(base, "0123456789.")
	return t == "python" || t == "pypy"
}

// scriptOf decides what is recorded as the script of the command line
// COMMAND ARGS run in the workspace ws:
//   - env [OPTION]... [NAME=VALUE]... PROGRAM ARGS is read as PROGRAM ARGS
//     (PROGRAM looked up on PATH when it has no slash, else relative to ws);
//   - when the program is not a known interpreter (by its base name without
//     a version suffix: sh, bash, dash, zsh, ksh, python, pypy, node, perl,
//     ruby, php, …): the program itself (./gen.sh, make, go);
//   - else, when its inline-code option (-c for the shells and python, -e
//     for node, perl and ruby) comes before any argument that is not an
//     option: the code that follows it (inline); when python's -m does:
//     the interpreter itself;
//   - else the first argument that does not start with "-" and names an
//     existing regular file, relative to ws as the interpreter sees it
//     (bash gen.sh, python3 -u x.py);
//   - else the interpreter itself.
//
// The bytes of a compiled program (ELF, Mach-O or PE) are hashed, not kept
// as text.
func scriptOf(ws, command string, args []string) (*script, error) {
	prog := command
	if filepath.Base(command) == "env" {
		if p, rest, ok := envProgram(ws, args); ok {
			prog, args = p, rest
		}
	}
	known, flag := interpreter(filepath.Base(prog))
	if !known {
		return hashFile(prog, prog)
	}
	module := pythonish(filepath.Base(prog))
	if flag != "" {
		for i, a := range args {
			if !strings.HasPrefix(a, "-") {
				break
			}
			if module && a == "-m" {
				// python -m MODULE runs a module, not a file.
				return hashFile(prog, prog)
			}
			if a == flag && i+1 < len(args) {
				code := []byte(args[i+1])
				sum := sha256.Sum256(code)
				return &script{path: prog, sha256: hex.EncodeToString(sum[:]), text: code, inline: true}, nil
			}
		}
	}
	for _, a := range args {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return hashFile(a, p)
		}
	}
	return hashFile(prog, prog)
}

// envProgram finds the program env will run: the first argument after
// env's options (-i, -0, -u NAME, -C DIR, --) and NAME=VALUE assignments.
// ok is false when it cannot tell (-S, an unknown option, no program, a
// program that cannot be found).
func envProgram(ws string, args []string) (prog string, rest []string, ok bool) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i++
		case a == "-u" || a == "-C" || a == "--unset" || a == "--chdir":
			i++
			continue
		case a == "-i" || a == "-0" || a == "-" || a == "--ignore-environment" || a == "--null" ||
			strings.HasPrefix(a, "--unset=") || (strings.HasPrefix(a, "-u") && len(a) > 2):
			continue
		case strings.HasPrefix(a, "-"):
			return "", nil, false
		case strings.Contains(a, "="):
			continue
		}
		break
	}
	if i >= len(args) {
		return "", nil, false
	}
	name := args[i]
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(ws, name)
		}
	} else {
		found, err := exec.LookPath(name)
		if err != nil {
			return "", nil, false
		}
		name = found
	}
	if st, err := os.Stat(name); err != nil || !st.Mode().IsRegular() {
		return "", nil, false
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", nil, false
	}
	return abs, args[i+1:], true
}

// isProgram reports whether the file starts with an executable format's
// magic number (ELF, Mach-O, PE).
func isProgram(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	if n, _ := io.ReadFull(f, b[:]); n < 2 {
		return false
	}
	switch {
	case bytes.Equal(b[:], []byte("\x7fELF")),
		bytes.Equal(b[:], []byte{0xfe, 0xed, 0xfa, 0xce}), bytes.Equal(b[:], []byte{0xce, 0xfa, 0xed, 0xfe}),
		bytes.Equal(b[:], []byte{0xfe, 0xed, 0xfa, 0xcf}), bytes.Equal(b[:], []byte{0xcf, 0xfa, 0xed, 0xfe}),
		bytes.Equal(b[:], []byte{0xca, 0xfe, 0xba, 0xbe}),
		bytes.Equal(b[:2], []byte("MZ")):
		return true
	}
	return false
}

// hashFile hashes the file at path (named as name in errors) and keeps its
// head as text (bounded).
func hashFile(name, path string) (*script, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, setupf("script %s: %s", quote.Path(name), oneline.Reason(err))
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, setupf("script %s: %s", quote.Path(name), oneline.Reason(err))
	}
	defer f.Close()
	h := sha256.New()
	var body bytes.Buffer
	if _, err := io.Copy(io.MultiWriter(h, &limitWriter{&body, maxScriptText}), f); err != nil {
		return nil, setupf("script %s: %s", quote.Path(name), oneline.Reason(err))
	}
	sc := &script{path: abs, sha256: hex.EncodeToString(h.Sum(nil))}
	if !isProgram(abs) {
		sc.text = body.Bytes()
	}
	return sc, nil
}
