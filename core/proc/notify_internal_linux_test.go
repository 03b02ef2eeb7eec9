package proc

import "testing"

// TestTaskPath: /proc/self and /proc/thread-self name the script's task,
// never the supervisor; nothing else is changed.
func TestTaskPath(t *testing.T) {
	const task = "/proc/42"
	cases := map[string]string{
		"/proc/self":                  "/proc/42",
		"/proc/self/":                 "/proc/42/",
		"/proc/self/root/etc/shadow":  "/proc/42/root/etc/shadow",
		"/proc/thread-self":           "/proc/42",
		"/proc/thread-self/fd/3":      "/proc/42/fd/3",
		"/proc/selfish":               "/proc/selfish",
		"/proc/thread-selfish/x":      "/proc/thread-selfish/x",
		"/proc/1/root":                "/proc/1/root",
		"proc/self/root":              "proc/self/root",
		"/etc/passwd":                 "/etc/passwd",
		"/proc/self/../thread-self/x": "/proc/42/../thread-self/x",
	}
	for in, want := range cases {
		if got := taskPath(task, in); got != want {
			t.Errorf("taskPath(%q): %q, want %q", in, got, want)
		}
	}
}

// TestSplitParent: a path that does not exist resolves through its
// parent; a last name of ".", ".." or none has none.
func TestSplitParent(t *testing.T) {
	cases := []struct {
		path, dir, name string
		ok              bool
	}{
		{"a", ".", "a", true},
		{"a/", ".", "a", true},
		{"d/a", "d/", "a", true},
		{"/w/d/a//", "/w/d/", "a", true},
		{"/a", "/", "a", true},
		{"/", "", "", false},
		{"//", "", "", false},
		{".", "", "", false},
		{"..", "", "", false},
		{"d/..", "", "", false},
		{"d/./", "", "", false},
	}
	for _, c := range cases {
		dir, name, ok := splitParent(c.path)
		if dir != c.dir || name != c.name || ok != c.ok {
			t.Errorf("splitParent(%q): %q, %q, %v; want %q, %q, %v", c.path, dir, name, ok, c.dir, c.name, c.ok)
		}
	}
}
