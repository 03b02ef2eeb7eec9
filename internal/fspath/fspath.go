// Package fspath holds the path questions several packages ask of the
// filesystem: where a path really is, and whether it lies below a directory.
package fspath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Resolve makes p absolute and resolves the symlinks in its longest
// existing prefix; the part that does not exist yet is joined on as given.
func Resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// Within reports whether p is dir or lies below it (lexically: both are
// taken as given, resolve them first where links matter). Two clean
// absolute paths (what the kernel and filepath.EvalSymlinks return) are
// compared without filepath.Rel, which cleans both and allocates: the
// supervisor asks this for every file the script opens.
func Within(p, dir string) bool {
	if filepath.Separator == '/' && cleanAbs(p) && cleanAbs(dir) {
		return dir == "/" || strings.HasPrefix(p, dir) && (len(p) == len(dir) || p[len(dir)] == '/')
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// cleanAbs reports whether p is an absolute slash-separated path that
// filepath.Clean leaves as it is: no empty, "." or ".." element and no
// trailing slash (but "/" itself).
func cleanAbs(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	if p == "/" {
		return true
	}
	start := 1
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		if e := p[start:i]; e == "" || e == "." || e == ".." {
			return false
		}
		start = i + 1
	}
	return true
}

// Dir is a directory resolved once (ResolveDir): absolute, its symlinks
// resolved, and a directory when it was resolved. It is passed down as is,
// so that no layer below resolves the path again. The zero Dir is none.
type Dir struct{ path, given string }

// ErrNotDir is ResolveDir's error for a path that is not a directory.
var ErrNotDir = errors.New("not a directory")

// ResolveDir resolves p into a Dir. The error is the cause alone (the
// caller names the path): a missing path's or ErrNotDir.
func ResolveDir(p string) (Dir, error) {
	abs, err := filepath.Abs(p)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return Dir{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Dir{}, err
	}
	if !st.IsDir() {
		return Dir{}, ErrNotDir
	}
	return Dir{path: abs, given: p}, nil
}

// Path is the resolved path ("" for the zero Dir).
func (d Dir) Path() string { return d.path }

// Given is the path as it was given to ResolveDir (for messages).
func (d Dir) Given() string { return d.given }

// IsZero reports whether d is the zero Dir (nothing resolved).
func (d Dir) IsZero() bool { return d.path == "" }
