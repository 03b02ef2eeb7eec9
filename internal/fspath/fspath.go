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
// taken as given, resolve them first where links matter).
func Within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
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
