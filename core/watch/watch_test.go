//go:build unix

package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(content), 0o644))
}

func appendFile(t *testing.T, p, content string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	must(t, err)
	f.WriteString(content)
	must(t, f.Close())
}

func TestDefaults(t *testing.T) {
	spool := t.TempDir()
	e := Env{Home: "/h", Name: "u", OS: "linux", CronSpool: spool, ZDotDir: "/z"}
	got := map[string]bool{}
	for _, p := range Defaults(e) {
		if !p.Default || !filepath.IsAbs(p.Path) {
			t.Errorf("%+v", p)
		}
		got[p.Path] = true
	}
	for _, want := range []string{"/h/.bashrc", "/h/.bash_profile", "/h/.bash_login", "/h/.profile", "/h/.bash_logout", "/h/.bashrc.d",
		"/h/.zshrc", "/h/.zshenv", "/h/.zprofile", "/h/.zlogin", "/z/.zshrc", "/h/.config/fish/config.fish", "/h/.inputrc",
		"/h/.ssh/authorized_keys", "/h/.ssh/authorized_keys2", "/h/.ssh/rc", "/h/.ssh/config", filepath.Join(spool, "u"),
		"/h/.config/autostart", "/h/.config/systemd/user", "/h/.gitconfig", "/h/.config/git/config"} {
		if !got[want] {
			t.Errorf("the default set lacks %s", want)
		}
	}
	if got["/h/.ssh/id_ed25519"] || got["/h/.ssh"] || got["/h/Library/LaunchAgents"] {
		t.Error("the default set watches a key, the whole of ~/.ssh or macOS's LaunchAgents on Linux")
	}
	e.ConfigHome, e.OS = "/x", "darwin"
	got = map[string]bool{}
	for _, p := range Defaults(e) {
		got[p.Path] = true
	}
	if !got["/x/autostart"] || !got["/x/systemd/user"] || got["/h/.config/autostart"] || !got["/h/Library/LaunchAgents"] {
		t.Errorf("XDG_CONFIG_HOME or macOS: %v", got)
	}
	if len(Defaults(Env{})) != 0 {
		t.Error("a default set without a home")
	}
	if cur := CurrentEnv(); cur.Home == "" || cur.Name == "" {
		t.Errorf("CurrentEnv = %+v", cur)
	}
}

// BenchmarkDefaultSet: recording the default set of a real home directory
// and comparing it (one run's cost: both sides).
func BenchmarkDefaultSet(b *testing.B) {
	paths := Defaults(CurrentEnv())
	for b.Loop() {
		s := Take(paths, Options{})
		Compare(s, s.Again())
	}
}

// BenchmarkFullDirectory: a watched directory at the entry bound (100
// directories of 99 files), both sides.
func BenchmarkFullDirectory(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < 100; i++ {
		d := filepath.Join(dir, fmt.Sprintf("d%03d", i))
		os.Mkdir(d, 0o755)
		for j := 0; j < 99; j++ {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("f%02d", j)), nil, 0o644)
		}
	}
	paths := []Path{{Path: dir}}
	for b.Loop() {
		s := Take(paths, Options{})
		w, out := Compare(s, s.Again())
		if w.Entries != MaxEntries+1 || w.Roots[0].Cut != "" || len(out) != 0 {
			b.Fatalf("%d entries, %d changes", w.Entries, len(out))
		}
	}
}

// TestCompare: watch's own record of a change (its aspects, in its own
// words) and of a path it skipped (the directory that holds it); the gate
// words them for the report (gate.WatchReport).
func TestCompare(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	rc, ws := filepath.Join(dir, "rc"), filepath.Join(dir, "ws")
	writeFile(t, rc, "a\n")
	must(t, os.Mkdir(ws, 0o755))
	before := Take([]Path{{Path: rc}, {Path: filepath.Join(ws, "x")}}, Options{Workspace: ws})
	appendFile(t, rc, "more\n")
	must(t, os.Chmod(rc, 0o600))
	sum, changes := Compare(before, before.Again())
	if len(changes) != 1 || changes[0].Path != rc || changes[0].Kind != "changed" ||
		!slices.Contains(changes[0].Aspects, AspectSize) || !slices.Contains(changes[0].Aspects, AspectMode) {
		t.Fatalf("changes %+v", changes)
	}
	if len(sum.Roots) != 2 || sum.Roots[0].SkippedIn != "" || sum.Roots[1].SkippedIn != ws || sum.Entries != 1 {
		t.Errorf("summary %+v", sum)
	}
}
