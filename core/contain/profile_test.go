package contain

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/report"
)

func TestProfilesOf(t *testing.T) {
	got := ProfilesOf([]string{"logs/", "preset:node=web", "preset:git", "preset:node", " preset:go-build"})
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	if !reflect.DeepEqual(names, []string{"node", "go-build"}) {
		t.Fatalf("profiles %q", names)
	}
	if h := ProfileHosts("python-venv"); !reflect.DeepEqual(h, []string{"pypi.org", "files.pythonhosted.org"}) {
		t.Fatalf("hosts %q", h)
	}
	if ProfileHosts("git") != nil || ProfileHosts("nosuch") != nil {
		t.Fatal("hosts for a preset without a profile")
	}
}

// TestPrepare: the cache is created below the root and kept; Go's
// telemetry mode file says off; only variables that are set are passed;
// npm gets its own (empty) userconfig.
func TestPrepare(t *testing.T) {
	root := t.TempDir()
	home := t.TempDir()
	env := []string{"GOFLAGS=-mod=mod", "HOME=" + home}
	pp, err := ProfileNamed("go-build").Prepare(root, home, env)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GOCACHE=" + filepath.Join(root, "go-build", "build"), "GOMODCACHE=" + filepath.Join(root, "go-build", "mod"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "go-build", "config"), "GOENV=" + filepath.Join(home, ".config", "go", "env"), "GOTELEMETRY=off"}
	if !reflect.DeepEqual(pp.Env, want) || !reflect.DeepEqual(pp.Pass, []string{"GOFLAGS"}) {
		t.Fatalf("env %q pass %q", pp.Env, pp.Pass)
	}
	if b, err := os.ReadFile(filepath.Join(root, "go-build", "config", "go", "telemetry", "mode")); err != nil || string(b) != "off" {
		t.Fatalf("telemetry mode %q %v", b, err)
	}
	for _, w := range pp.Writable {
		if st, err := os.Stat(w); err != nil || !st.IsDir() {
			t.Fatalf("writable %s: %v", w, err)
		}
	}
	os.WriteFile(filepath.Join(root, "go-build", "build", "kept"), []byte("x"), 0o600)
	if _, err := ProfileNamed("go-build").Prepare(root, home, env); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go-build", "build", "kept")); err != nil {
		t.Fatal("the cache was not kept")
	}
	pn, err := ProfileNamed("node").Prepare(root, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(pn.Env, " "), "npm_config_userconfig="+filepath.Join(root, "node", "config", "npmrc")) {
		t.Fatalf("node env %q", pn.Env)
	}
	for _, g := range append(pp.Grants, pn.Grants...) {
		if g.By == "" || g.Kind == "" || g.Target == "" {
			t.Fatalf("grant %+v", g)
		}
	}
}

func TestCacheRootPerWorkspace(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x")
	a, _ := CacheRoot("/w/a")
	b, _ := CacheRoot("/w/b")
	a2, _ := CacheRoot("/w/a/")
	if a == b || a != a2 || !strings.HasPrefix(a, "/x/diffgate/caches/") {
		t.Fatalf("%s %s %s", a, b, a2)
	}
}

func TestDropped(t *testing.T) {
	pol := Policy{Env: []string{"KEEP"}}
	environ := []string{"PATH=/bin", "CI=true", "GITHUB_ACTIONS=true", "AWS_SECRET_ACCESS_KEY=s3cr3t", "KEEP=1", "GOFLAGS=-x", "PIP_INDEX_URL=u"}
	kept := pol.Environ(environ, "")
	got := Dropped(environ, kept)
	if !reflect.DeepEqual(got, []string{"AWS_SECRET_ACCESS_KEY", "GOFLAGS", "PIP_INDEX_URL"}) {
		t.Fatalf("dropped %q (kept %q)", got, kept)
	}
	if strings.Contains(strings.Join(got, ""), "s3cr3t") {
		t.Fatal("a value in the dropped list")
	}
}

func TestHints(t *testing.T) {
	home, ws := "/home/u", "/w"
	bl := []report.Blocked{
		{Kind: "net", Target: "151.101.0.1:443"},
		{Kind: "net", Target: "[::1]:80"},
		{Kind: "write", Target: "/home/u/.cache/go-build/ab/x"},
		{Kind: "create", Target: "/home/u/.config/go/telemetry/local/x"},
		{Kind: "write", Target: "/home/u/.npm/_cacache/x"},
		{Kind: "write", Target: "/w/.git/config"},
		{Kind: "write", Target: "/w/.git/modules/sub/hooks/pre-commit"},
		{Kind: "create", Target: "/tmp/x"},
		{Kind: "read", Target: "/home/u/.ssh/id_ed25519"},
		{Kind: "write", Target: "/opt/data/x"},
		{Kind: "fork", Target: "pids.max"},
	}
	var kinds []string
	var text []string
	for _, h := range Hints(bl, home, ws) {
		kinds = append(kinds, h.Kind+"|"+h.Entry+"|"+h.Flag)
		text = append(text, h.Text)
	}
	want := []string{"net||--net-allow HOST", "cache:go-build|preset:go-build|", "cache:node|preset:node|", "git||--writable .git",
		"tmp||", "secret||", "write||--writable /opt/data"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("hints\n%q\nwant\n%q", kinds, want)
	}
	if !strings.Contains(text[5], "refused on purpose") || !strings.Contains(text[4], "$TMPDIR") {
		t.Fatalf("texts %q", text)
	}
	// A name lookup is network use: the same hint.
	if hs := Hints([]report.Blocked{{Kind: "dns", Target: "example.org"}}, home, ws); len(hs) != 1 || hs[0].Kind != "net" {
		t.Errorf("dns: hints %+v", hs)
	}
	if Hints(nil, home, ws) != nil {
		t.Fatal("hints without a block")
	}
}
