// Package contain holds the containment policy of a gated run: what the
// script may write, read and reach, and which environment it gets. It is
// pure data and decisions (portable); core/proc enforces it.
package contain

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Mode is how much containment a run asks for.
type Mode string

// Modes.
const (
	// Auto enforces every layer the platform supports and records which.
	Auto Mode = "auto"
	// On refuses to run when any layer cannot be enforced.
	On Mode = "on"
	// Off enforces nothing.
	Off Mode = "off"
)

// ParseMode parses a --contain value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, On, Off:
		return m, nil
	}
	return "", fmt.Errorf("--contain: %q is not auto, on or off", s)
}

// Policy is what a run asks for.
type Policy struct {
	// Mode is Auto, On or Off; "" means Off.
	Mode Mode
	// Net leaves the network on.
	Net bool
	// NetAllow opens the network to these hosts only (--net-allow
	// HOST[:PORT], *.DOMAIN, !HOST denies), through the gate's proxy;
	// Net beats it.
	NetAllow []string
	// Env names variables to pass on (NAME) or to set (NAME=VALUE).
	Env []string
	// Writable are extra directories the script may write to.
	Writable []string
	// DenyRead are extra paths the script may not read (--deny-read).
	DenyRead []string
	// Hidden are paths the gate itself keeps from the script (the history
	// database): not a grant, not recorded.
	Hidden []string
	// Memory caps the memory of the script's tree in bytes (0: no cap).
	Memory int64
	// NoLandlock pretends the kernel has no Landlock, NoNotify that it has
	// no seccomp user notification (tests).
	NoLandlock bool
	NoNotify   bool
	// NoMounts pretends no mount namespace can be made (tests).
	NoMounts bool
}

// Enabled reports whether the policy contains the script at all.
func (p Policy) Enabled() bool { return p.Mode == Auto || p.Mode == On }

// EnvAllow is the environment a contained script starts from ("LC_*" is
// every variable starting with LC_).
var EnvAllow = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TZ", "TERM", "TMPDIR", "CI", "GITHUB_ACTIONS"}

// SecretName reports whether a variable name looks like it holds a secret
// (*KEY*, *SECRET*, *TOKEN*, *PASSWORD*, case-insensitive): such a
// variable is passed on only when named exactly with --env.
func SecretName(name string) bool {
	u := strings.ToUpper(name)
	for _, s := range []string{"KEY", "SECRET", "TOKEN", "PASSWORD"} {
		if strings.Contains(u, s) {
			return true
		}
	}
	return false
}

func allowedByDefault(name string) bool {
	if SecretName(name) {
		return false
	}
	for _, a := range EnvAllow {
		if a == name || (strings.HasSuffix(a, "*") && strings.HasPrefix(name, strings.TrimSuffix(a, "*"))) {
			return true
		}
	}
	return false
}

// CheckEnv validates --env values: NAME or NAME=VALUE with a non-empty
// NAME without '='.
func CheckEnv(env []string) error {
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if name == "" || strings.ContainsAny(name, "\x00") {
			return fmt.Errorf("--env %q: want NAME or NAME=VALUE", e)
		}
	}
	return nil
}

// Environ reduces environ (NAME=VALUE entries) to what a contained script
// gets: the allow list, the variables --env names, and those it sets, with
// TMPDIR set to tmpdir when tmpdir is not "". The result is sorted.
func (p Policy) Environ(environ []string, tmpdir string) []string {
	named := map[string]bool{}
	set := map[string]string{}
	for _, e := range p.Env {
		if name, val, ok := strings.Cut(e, "="); ok {
			set[name] = val
		} else {
			named[e] = true
		}
	}
	out := map[string]string{}
	for _, e := range environ {
		name, val, ok := strings.Cut(e, "=")
		if !ok || name == "" {
			continue
		}
		if named[name] || allowedByDefault(name) {
			out[name] = val
		}
	}
	for k, v := range set {
		out[k] = v
	}
	if tmpdir != "" {
		out["TMPDIR"] = tmpdir
	}
	res := make([]string, 0, len(out))
	for k, v := range out {
		res = append(res, k+"="+v)
	}
	sort.Strings(res)
	return res
}

// SecretStore is a path under the home directory that holds credentials
// (or what a user typed, passwords included): a contained script may not
// read it.
type SecretStore struct {
	// Path is relative to the home directory, slash-separated.
	Path string
	// Dir says it is a directory (everything below it is hidden).
	Dir bool
	// Why says what it holds.
	Why string
}

// SecretStoreList is the one list of the secret stores: the supervisor
// hides each, `diffgate run -h` prints it, and docs/containment.md's containment
// table lists it (a test keeps the three equal).
var SecretStoreList = []SecretStore{
	{".ssh", true, "SSH keys"},
	{".gnupg", true, "GnuPG keys"},
	{".password-store", true, "pass passwords"},
	{".local/share/keyrings", true, "GNOME keyring"},
	{".aws", true, "AWS credentials"},
	{".azure", true, "Azure CLI tokens"},
	{".config/gcloud", true, "Google Cloud tokens"},
	{".kube", true, "Kubernetes credentials"},
	{".docker/config.json", false, "registry logins"},
	{".config/gh", true, "GitHub CLI token"},
	{".config/hub", false, "hub's GitHub token"},
	{".git-credentials", false, "git credential store"},
	{".config/git/credentials", false, "git credential store"},
	{".netrc", false, "logins for curl, git, ftp"},
	{".pgpass", false, "PostgreSQL passwords"},
	{".npmrc", false, "npm tokens"},
	{".yarnrc.yml", false, "yarn tokens"},
	{".pypirc", false, "PyPI tokens"},
	{".cargo/credentials.toml", false, "crates.io token"},
	{".cargo/credentials", false, "crates.io token (old name)"},
	{".gem/credentials", false, "RubyGems key"},
	{".m2/settings.xml", false, "Maven passwords"},
	{".terraform.d/credentials.tfrc.json", false, "Terraform tokens"},
	{".vault-token", false, "Vault token"},
	{".config/rclone/rclone.conf", false, "cloud storage logins"},
	{".bash_history", false, "shell history"},
	{".zsh_history", false, "shell history"},
	{".python_history", false, "Python history"},
	{".psql_history", false, "psql history"},
	{".mysql_history", false, "MySQL history"},
	{".mozilla", true, "Firefox profiles"},
	{".config/google-chrome", true, "Chrome profiles"},
	{".config/chromium", true, "Chromium profiles"},
	{".config/BraveSoftware", true, "Brave profiles"},
}

// Name is the store as the help and docs/containment.md show it: ~/PATH, with a
// trailing slash for a directory.
func (s SecretStore) Name() string {
	if s.Dir {
		return "~/" + s.Path + "/"
	}
	return "~/" + s.Path
}

// SecretStores returns the user's secret stores under home (absolute),
// which a contained script may not read.
func SecretStores(home string) []string {
	if home == "" {
		return nil
	}
	out := make([]string, len(SecretStoreList))
	for i, s := range SecretStoreList {
		out[i] = filepath.Join(home, filepath.FromSlash(s.Path))
	}
	return out
}

// GitPath is a name inside a git directory that makes git run programs.
type GitPath struct {
	Name string
	Dir  bool
	Why  string
}

// GitProtected are the names, in every git directory the workspace holds
// (a .git, a submodule's under .git/modules, a worktree's under
// .git/worktrees, a bare repository, a .git file's gitdir: target), that a
// contained script may not write, create, remove or rename, whether they
// exist or not: each would make git run the script's code later, outside
// the gate. --writable naming the git directory (or one above it inside
// the workspace: .git) lifts it.
var GitProtected = []GitPath{
	{"hooks", true, "hooks run by commit, checkout, merge, push"},
	{"config", false, "core.hooksPath, core.fsmonitor, aliases, filters, pagers run programs"},
	{"config.worktree", false, "the same settings, per worktree (extensions.worktreeConfig)"},
	{"commondir", false, "points git at another directory's config and hooks"},
}

// DevWritable are the device nodes a contained script may write to.
var DevWritable = []string{"/dev/null", "/dev/tty", "/dev/zero", "/dev/urandom"}
