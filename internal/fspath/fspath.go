// Package fspath holds the path questions several packages ask of the
// filesystem: where a path really is, and whether it lies below a directory.
package fspath

import (
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
