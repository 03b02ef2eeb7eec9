package contain

import (
	"path"
	"slices"
	"strings"
	"testing"
)

func TestEnviron(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "AWS_SECRET_ACCESS_KEY=s", "GITHUB_TOKEN=t",
		"FOO=bar", "MY_PASSWORD=p", "TMPDIR=/tmp", "API_KEY=k", "LC_TOKEN=x", "noeq"}
	p := Policy{Mode: Auto, Env: []string{"FOO", "API_KEY", "NEW=1", "PATH=/x"}}
	got := p.Environ(env, "/priv")
	want := []string{"API_KEY=k", "FOO=bar", "HOME=/h", "LC_ALL=C", "NEW=1", "PATH=/x", "TMPDIR=/priv"}
	if !slices.Equal(got, want) {
		t.Fatalf("Environ = %q, want %q", got, want)
	}
}

func TestParseModeAndCheckEnv(t *testing.T) {
	for _, s := range []string{"auto", "on", "off"} {
		if _, err := ParseMode(s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ParseMode("yes"); err == nil {
		t.Fatal("ParseMode(yes) succeeded")
	}
	if err := CheckEnv([]string{"=x"}); err == nil {
		t.Fatal("CheckEnv(=x) succeeded")
	}
}

func TestSecretStores(t *testing.T) {
	s := SecretStores("/home/u")
	if !slices.Contains(s, "/home/u/.ssh") || !slices.Contains(s, "/home/u/.docker/config.json") {
		t.Fatalf("SecretStores = %q", s)
	}
}

// TestSecretStoreList: every entry is a clean relative path, named once,
// with a reason.
func TestSecretStoreList(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range SecretStoreList {
		if s.Path == "" || s.Path != path.Clean(s.Path) || path.IsAbs(s.Path) || strings.HasPrefix(s.Path, "..") || s.Why == "" || seen[s.Path] {
			t.Errorf("bad entry %+v", s)
		}
		seen[s.Path] = true
	}
}
