package policy

import (
	"fmt"
	"strings"
)

// Preset is a named set of allowlist entries for what a common tool writes.
// An entry "preset:NAME" stands for them; "preset:NAME=DIR" moves them under
// DIR (a venv elsewhere than .venv, a package in a subfolder).
type Preset struct {
	// Name is what follows "preset:".
	Name string
	// Dir is where the entries apply when no =DIR is given ("" is the
	// workspace root).
	Dir string
	// Entries are relative to Dir.
	Entries []string
	// Doc says what the tool writes and why each entry is there.
	Doc string
}

// Presets lists every preset, in the order docs/allowlist.md documents them.
var Presets = []Preset{
	{Name: "python-venv", Dir: ".venv",
		Entries: []string{"./", "symlink-escape:bin/python*"},
		Doc: "`python3 -m venv .venv` and `pip install` into it: everything under the venv, " +
			"and the risk `symlink-escape` only for its `bin/python*` links (they point at the system interpreter)"},
	{Name: "node", Dir: "",
		Entries: []string{"node_modules/", "added,changed:package-lock.json", "changed:package.json"},
		Doc: "`npm install` / `npm ci` / `npm install PKG`: `node_modules/`, `package-lock.json` (added or changed, never removed) " +
			"and `package.json` changed (the dependency `npm install PKG` adds; never added or removed); no risk"},
	{Name: "go-build", Dir: "",
		Entries: []string{"bin/", "added,changed:go.sum"},
		Doc: "`go build -o bin/ ./...` with `-mod=mod`: the binaries in `bin/` and `go.sum` (added or changed); " +
			"the build and module caches live outside the workspace; no risk"},
	{Name: "cargo", Dir: "",
		Entries: []string{"target/", "added,changed:Cargo.lock"},
		Doc:     "`cargo build`: the build in `target/` and `Cargo.lock` (added or changed); the registry lives in the profile's CARGO_HOME; no risk"},
	{Name: "git", Dir: "",
		Entries: []string{".git/"},
		Doc:     "`git init`, `git add`, `git commit`, `git gc`: the repository in `.git/`, nothing in the work tree; no risk"},
}

// presetPrefix starts an entry that names a preset.
const presetPrefix = "preset:"

// expandPreset returns the rules an entry "preset:NAME[=DIR]" stands for.
// Each rule's Text is its own entry followed by the preset entry in
// parentheses, so a decision names both.
func expandPreset(text string) ([]Rule, error) {
	spec := strings.TrimPrefix(text, presetPrefix)
	name, dir, hasDir := strings.Cut(spec, "=")
	var pr *Preset
	var names []string
	for i := range Presets {
		names = append(names, Presets[i].Name)
		if Presets[i].Name == name {
			pr = &Presets[i]
		}
	}
	if pr == nil {
		return nil, fmt.Errorf("allowlist entry %q: unknown preset %q (presets: %s)", text, name, strings.Join(names, ", "))
	}
	if !hasDir {
		dir = pr.Dir
	} else if dir = strings.TrimSuffix(strings.TrimPrefix(dir, "./"), "/"); dir == "" || strings.ContainsAny(dir, "*?[{\\") {
		return nil, fmt.Errorf("allowlist entry %q: =DIR must name a folder (no glob)", text)
	}
	var out []Rule
	for _, e := range pr.Entries {
		quals, pat := "", e
		if head, rest, ok := strings.Cut(e, ":"); ok && looksLikeQualifiers(head) {
			quals, pat = head+":", rest
		}
		pat = strings.TrimPrefix(pat, "./")
		if dir != "" {
			pat = dir + "/" + pat
		}
		if pat == "" {
			return nil, fmt.Errorf("allowlist entry %q: preset covers the whole workspace", text)
		}
		r, err := ParseRule(quals + pat)
		if err != nil {
			return nil, fmt.Errorf("allowlist entry %q: %v", text, err)
		}
		r.Text = quals + pat + " (" + text + ")"
		out = append(out, r)
	}
	return out, nil
}
