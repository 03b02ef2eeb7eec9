package contain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/diffgate/diffgate/core/report"
)

// Profile is what a tool needs, beyond its allowlist entries (a preset of
// core/policy with the same name), to run contained: a private cache per
// workspace (never the user's own), settings, its own variables passed on,
// and the hosts it downloads from. Everything a profile grants is recorded
// in the report's containment.grants.
type Profile struct {
	// Name is the preset's name (after "preset:").
	Name string
	// Caches are the variables pointed at a directory of the workspace's
	// private cache (CacheRoot/Name/Dir), created on first use, writable
	// for the run and kept between runs.
	Caches []Cache
	// Files are variables pointed at a file of the cache (CacheRoot/Name/
	// Dir), created empty when missing: the tool's own config, in place of
	// the user's (~/.npmrc holds npm tokens, a secret store).
	Files []Cache
	// Set are NAME=VALUE settings.
	Set []string
	// Pass names the tool's own variables passed on when set.
	Pass []string
	// Hosts are the hosts the tool downloads from (HOST or HOST:PORT), for
	// the network allow list (--net-allow).
	Hosts []string
	// ConfigHome, when set, points XDG_CONFIG_HOME at the cache's "config"
	// directory (with GOENV kept on the user's go env file): Go writes its
	// telemetry there, whose mode file says "off".
	ConfigHome bool
}

// Cache is one variable of a profile's cache.
type Cache struct {
	Env string
	Dir string
}

// ProfileList is the one table of the profiles: `diffgate run -h` prints
// it and docs/allowlist.md lists it (a test keeps them equal).
var ProfileList = []Profile{
	{Name: "python-venv",
		Caches: []Cache{{"PIP_CACHE_DIR", "pip"}},
		Set:    []string{"PIP_DISABLE_PIP_VERSION_CHECK=1"},
		Pass: []string{"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_FIND_LINKS", "PIP_NO_INDEX",
			"PIP_CERT", "PIP_DEFAULT_TIMEOUT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "VIRTUAL_ENV"},
		Hosts: []string{"pypi.org", "files.pythonhosted.org"}},
	{Name: "node",
		Caches: []Cache{{"npm_config_cache", "npm"}},
		Files:  []Cache{{"npm_config_userconfig", "config/npmrc"}},
		Set:    []string{"npm_config_update_notifier=false", "npm_config_fund=false"},
		Pass: []string{"npm_config_registry", "NODE_EXTRA_CA_CERTS", "NODE_OPTIONS", "NODE_ENV", "npm_config_strict_ssl",
			"npm_config_cafile", "npm_config_offline", "npm_config_prefer_offline"},
		Hosts: []string{"registry.npmjs.org"}},
	{Name: "go-build",
		Caches: []Cache{{"GOCACHE", "build"}, {"GOMODCACHE", "mod"}},
		Set:    []string{"GOTELEMETRY=off"},
		Pass: []string{"GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "GONOSUMDB", "GONOPROXY", "GOPRIVATE", "GOSUMDB", "GOINSECURE",
			"GOENV", "GOOS", "GOARCH", "CGO_ENABLED", "GOEXPERIMENT", "GODEBUG"},
		Hosts:      []string{"proxy.golang.org", "sum.golang.org"},
		ConfigHome: true},
	{Name: "cargo",
		Caches: []Cache{{"CARGO_HOME", "cargo"}},
		Pass:   []string{"CARGO_REGISTRIES_CRATES_IO_PROTOCOL", "CARGO_NET_OFFLINE", "RUSTFLAGS", "RUSTUP_TOOLCHAIN", "RUSTUP_HOME"},
		Hosts:  []string{"index.crates.io", "static.crates.io"}},
}

// ProfileNamed returns the profile of a preset name, or nil.
func ProfileNamed(name string) *Profile {
	for i := range ProfileList {
		if ProfileList[i].Name == name {
			return &ProfileList[i]
		}
	}
	return nil
}

// ProfileHosts returns the hosts of the named profile (nil for none), for
// the network allow list.
func ProfileHosts(name string) []string {
	if p := ProfileNamed(name); p != nil {
		return append([]string(nil), p.Hosts...)
	}
	return nil
}

// HostGrants are the grants of the named profile's hosts (kind "hosts"),
// for the run that lets them through the network allow list.
func HostGrants(name string) []report.Grant {
	var out []report.Grant
	for _, h := range ProfileHosts(name) {
		out = append(out, report.Grant{Kind: "hosts", Target: h, By: "preset:" + name})
	}
	return out
}

// ProfilesOf returns the profiles an allowlist names ("preset:NAME" or
// "preset:NAME=DIR" entries), each once, in the order named.
func ProfilesOf(allow []string) []*Profile {
	var out []*Profile
	seen := map[string]bool{}
	for _, e := range allow {
		spec, ok := strings.CutPrefix(strings.TrimSpace(e), "preset:")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(spec, "=")
		if p := ProfileNamed(name); p != nil && !seen[name] {
			seen[name] = true
			out = append(out, p)
		}
	}
	return out
}

// CacheRoot is the directory of a workspace's private tool caches:
// os.UserCacheDir()/diffgate/caches/ID, with ID from the workspace's
// absolute path.
func CacheRoot(workspace string) (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("tool cache: %v (set XDG_CACHE_HOME)", err)
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return filepath.Join(c, "diffgate", "caches", hex.EncodeToString(sum[:8])), nil
}

// Prepared is what a profile adds to a run: variables set, names passed
// on, directories made writable.
type Prepared struct {
	Env      []string
	Pass     []string
	Writable []string
	Grants   []report.Grant
}

// Prepare creates the profile's cache below root (kept between runs) and
// returns what it adds to the run. home is the user's home directory
// (for GOENV), environ the gate's environment.
func (p *Profile) Prepare(root, home string, environ []string) (Prepared, error) {
	by := "preset:" + p.Name
	var out Prepared
	dir := filepath.Join(root, p.Name)
	for _, c := range p.Caches {
		d := filepath.Join(dir, c.Dir)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return out, fmt.Errorf("preset:%s cache: %v", p.Name, err)
		}
		out.Env = append(out.Env, c.Env+"="+d)
		out.Writable = append(out.Writable, d)
		out.Grants = append(out.Grants, report.Grant{Kind: "cache", Target: c.Env + "=" + d, By: by})
	}
	for _, c := range p.Files {
		f := filepath.Join(dir, c.Dir)
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			return out, fmt.Errorf("preset:%s cache: %v", p.Name, err)
		}
		fd, err := os.OpenFile(f, os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			return out, fmt.Errorf("preset:%s cache: %v", p.Name, err)
		}
		fd.Close()
		out.Env = append(out.Env, c.Env+"="+f)
		out.Writable = append(out.Writable, filepath.Dir(f))
		out.Grants = append(out.Grants, report.Grant{Kind: "cache", Target: c.Env + "=" + f, By: by})
	}
	if p.ConfigHome {
		cfg := filepath.Join(dir, "config")
		tel := filepath.Join(cfg, "go", "telemetry")
		if err := os.MkdirAll(tel, 0o700); err != nil {
			return out, fmt.Errorf("preset:%s cache: %v", p.Name, err)
		}
		if err := os.WriteFile(filepath.Join(tel, "mode"), []byte("off"), 0o600); err != nil {
			return out, fmt.Errorf("preset:%s cache: %v", p.Name, err)
		}
		out.Env = append(out.Env, "XDG_CONFIG_HOME="+cfg)
		out.Writable = append(out.Writable, cfg)
		out.Grants = append(out.Grants, report.Grant{Kind: "cache", Target: "XDG_CONFIG_HOME=" + cfg, By: by})
		if !hasVar(environ, "GOENV") {
			ucfg := lookup(environ, "XDG_CONFIG_HOME")
			if ucfg == "" && home != "" {
				ucfg = filepath.Join(home, ".config")
			}
			if ucfg != "" {
				out.Env = append(out.Env, "GOENV="+filepath.Join(ucfg, "go", "env"))
			}
		}
	}
	for _, s := range p.Set {
		out.Env = append(out.Env, s)
		out.Grants = append(out.Grants, report.Grant{Kind: "env", Target: s, By: by})
	}
	for _, n := range p.Pass {
		if hasVar(environ, n) {
			out.Pass = append(out.Pass, n)
			out.Grants = append(out.Grants, report.Grant{Kind: "env", Target: n, By: by})
		}
	}
	// The hosts are granted by the network allow list (ProfileHosts),
	// which records them itself.
	return out, nil
}

func lookup(environ []string, name string) string {
	for _, e := range environ {
		if n, v, ok := strings.Cut(e, "="); ok && n == name {
			return v
		}
	}
	return ""
}

func hasVar(environ []string, name string) bool {
	for _, e := range environ {
		if n, _, ok := strings.Cut(e, "="); ok && n == name {
			return true
		}
	}
	return false
}

// Dropped returns the names of the variables of environ that the script
// does not get (kept, its environment), sorted: names only, never values.
func Dropped(environ, kept []string) []string {
	have := map[string]bool{}
	for _, e := range kept {
		n, _, _ := strings.Cut(e, "=")
		have[n] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range environ {
		n, _, ok := strings.Cut(e, "=")
		if !ok || n == "" || have[n] || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
