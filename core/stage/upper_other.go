//go:build !linux

package stage

import (
	"io/fs"
	"os"
)

// classify: there is no overlay outside Linux.
func classify(abs string, t fs.FileMode) (upperKind, error) { return plain, nil }

func matchRoot(upper, ws string) error { return nil }

func reflink(out, in *os.File) bool { return false }

func copyXattrs(src string, dst *os.File) error { return nil }
