package web

import (
	"bytes"
	"io"
	"log"
	"strings"
)

// cacheNoise are the errors Fyne logs when it starts in a browser, which
// has no file system for its cache: each one "Fyne error:  REASON"
// followed by its "  Cause:" and "  At:" lines.
var cacheNoise = []string{"Failed to create fyne cache space", "Failed to create app cache space"}

// WithoutCacheNoise runs start (the app's creation) with the standard
// logger's output held back, then writes what start logged to out without
// the cache errors, which say nothing in a browser and would fill the
// console on every load; every other line is kept.
func WithoutCacheNoise(out io.Writer, start func()) {
	var buf bytes.Buffer
	prev := log.Writer()
	log.SetOutput(&buf)
	defer func() {
		log.SetOutput(prev)
		if kept := dropCacheNoise(buf.String()); kept != "" {
			io.WriteString(out, kept)
		}
	}()
	start()
}

func dropCacheNoise(s string) string {
	var kept []string
	skipping := false
	for _, line := range strings.SplitAfter(s, "\n") {
		if line == "" {
			continue
		}
		switch {
		case strings.Contains(line, "Fyne error: "):
			skipping = false
			for _, n := range cacheNoise {
				skipping = skipping || strings.Contains(line, n)
			}
		case strings.Contains(line, "  Cause:"), strings.Contains(line, "  At:"):
			// the error's own lines: skipped with it
		default:
			skipping = false
		}
		if !skipping {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}
