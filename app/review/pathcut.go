package review

import (
	"strings"

	"fyne.io/fyne/v2/widget"
)

// cutMiddle shortens path until fits accepts it, cutting in the middle and
// keeping the file name: "node_modules/pk…/index.js". The folders are cut
// from their end first; a name too long by itself keeps its end (its
// extension) after "…". A path that fits is returned whole.
func cutMiddle(path string, fits func(string) bool) string {
	if fits(path) {
		return path
	}
	dir, name := "", path
	if i := strings.LastIndexByte(strings.TrimSuffix(path, "/"), '/'); i >= 0 {
		dir, name = path[:i], path[i:] // name keeps its leading "/"
	}
	// The longest prefix of dir that fits before "…" and the name.
	if d := []rune(dir); fits("…" + name) {
		best := longest(len(d), func(k int) bool { return fits(string(d[:k]) + "…" + name) })
		return string(d[:best]) + "…" + name
	}
	// The name alone is too long: keep its end, then as much of its start.
	n := []rune(strings.TrimPrefix(name, "/"))
	tail := min(len(n), 8)
	if t := longest(tail, func(k int) bool { return fits("…" + string(n[len(n)-k:])) }); t < tail {
		return "…" + string(n[len(n)-t:])
	}
	head := longest(len(n)-tail, func(k int) bool { return fits(string(n[:k]) + "…" + string(n[len(n)-tail:])) })
	return string(n[:head]) + "…" + string(n[len(n)-tail:])
}

// longest is the largest k in [0, n] for which ok holds, ok being true up
// to some k and false above (ok(0) is assumed).
func longest(n int, ok func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// pathSegments is path as inline segments of style st, one per component
// ("src/", "vendor/", "app.min.js"): a RichText wrapping words then wraps
// the path after a "/", never inside a name (unless one name alone is
// wider than the line).
func pathSegments(path string, st widget.RichTextStyle) []widget.RichTextSegment {
	st.Inline = true
	var out []widget.RichTextSegment
	for path != "" {
		i := strings.IndexByte(path, '/')
		if i < 0 {
			i = len(path) - 1
		}
		out = append(out, &widget.TextSegment{Text: path[:i+1], Style: st})
		path = path[i+1:]
	}
	return out
}
