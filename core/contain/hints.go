package contain

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/fspath"
)

// Hint is the fix for one kind of blocked action.
type Hint struct {
	// Kind groups the blocked actions it answers ("net", "cache:go-build",
	// "git", "tmp", "secret", "write"); one hint per kind.
	Kind string
	// Entry is an allowlist entry that grants the fix ("preset:go-build"),
	// Flag a run flag ("--writable .git"); either may be "".
	Entry, Flag string
	// Text is the hint as the CLI prints it, after "hint: ".
	Text string
	// Example is the first blocked target it answers.
	Example string
}

// toolCaches maps a tool's own cache or config below the home directory to
// the profile that gives it a private one.
var toolCaches = []struct{ dir, profile string }{
	{".cache/go-build", "go-build"},
	{".config/go/telemetry", "go-build"},
	{"go/pkg/mod", "go-build"},
	{".npm", "node"},
	{".cache/pip", "python-venv"},
	{".cargo/registry", "cargo"},
	{".cargo/git", "cargo"},
}

// Hints computes the fix for each kind of blocked action, once per kind,
// in the order first blocked: the network (a connect or a name lookup)
// names --net-allow HOST or a
// profile; a known tool cache its profile; a git directory's config or
// hooks --writable .git; /tmp $TMPDIR; a secret store says it is refused on
// purpose; another write --writable DIR. home is the user's home directory
// ("" when unknown), ws the workspace.
func Hints(blocked []report.Blocked, home, ws string) []Hint {
	var out []Hint
	seen := map[string]bool{}
	add := func(h Hint) {
		if !seen[h.Kind] {
			seen[h.Kind] = true
			out = append(out, h)
		}
	}
	for i := range blocked {
		b := &blocked[i]
		t := b.Target
		switch {
		case (b.Kind == "net" || b.Kind == "dns") && !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "@"):
			add(Hint{Kind: "net", Flag: "--net-allow HOST", Example: t,
				Text: "network: allow the hosts the script needs with --net-allow HOST, or a profile that names them (--allow preset:node, preset:python-venv, preset:go-build); --net allows everything"})
		case b.Kind == "read" || secretPath(t, home):
			add(Hint{Kind: "secret", Example: t,
				Text: "secret store: refused on purpose (credentials, keys, history); no allowlist entry or flag lifts it"})
		case b.Kind == "fork" || b.Kind == "memory" || b.Kind == "syscall-abi":
			// Limits and foreign system calls have no fix to grant.
		default:
			if p := cacheProfile(t, home); p != "" {
				add(Hint{Kind: "cache:" + p, Entry: "preset:" + p, Example: t,
					Text: "tool cache: --allow preset:" + p + " gives the tool a private cache per workspace (never your own)"})
				continue
			}
			if g := gitDirOf(t, ws); g != "" {
				add(Hint{Kind: "git", Flag: "--writable " + g, Example: t,
					Text: "git config or hooks: --writable " + g + " lets the script change them (git runs what they name later, outside the gate)"})
				continue
			}
			if t == "/tmp" || strings.HasPrefix(t, "/tmp/") || t == "/var/tmp" || strings.HasPrefix(t, "/var/tmp/") {
				add(Hint{Kind: "tmp", Example: t,
					Text: "/tmp: write to $TMPDIR instead (a private one, set for the script)"})
				continue
			}
			if strings.HasPrefix(t, "/") {
				dir := path.Dir(t)
				add(Hint{Kind: "write", Flag: "--writable " + dir, Example: t,
					Text: "write outside the workspace: --writable DIR lets the script write below DIR (" + dir + ")"})
			}
		}
	}
	return out
}

// cacheProfile returns the profile for a path in a known tool cache below
// home, or "".
func cacheProfile(p, home string) string {
	if home == "" {
		return ""
	}
	for _, c := range toolCaches {
		if fspath.Within(p, filepath.Join(home, c.dir)) {
			return c.profile
		}
	}
	return ""
}

// secretPath reports whether p is a secret store below home.
func secretPath(p, home string) bool {
	if home == "" {
		return false
	}
	for _, s := range SecretStoreList {
		d := filepath.Join(home, s.Path)
		if p == d || s.Dir && fspath.Within(p, d) {
			return true
		}
	}
	return false
}

// gitDirOf returns, for a protected name in a git directory (its config,
// hooks, ...), that directory as --writable takes it (relative to the
// workspace when inside it), or "".
func gitDirOf(p, ws string) string {
	for _, g := range GitProtected {
		i := strings.LastIndex(p, "/"+g.Name)
		if i < 0 || !(len(p) == i+1+len(g.Name) || g.Dir && p[i+1+len(g.Name)] == '/') {
			continue
		}
		dir := p[:i]
		if path.Base(dir) != ".git" && !strings.Contains(dir, "/.git/") {
			continue
		}
		if ws != "" {
			if rel, ok := strings.CutPrefix(dir, strings.TrimSuffix(ws, "/")+"/"); ok {
				// The top git directory lifts its submodules' too.
				if rel == ".git" || strings.HasPrefix(rel, ".git/") {
					return ".git"
				}
				if i := strings.Index(rel, "/.git/"); i >= 0 {
					return rel[:i+len("/.git")]
				}
				return rel
			}
		}
		return dir
	}
	return ""
}
