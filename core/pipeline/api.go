package pipeline

import (
	"strings"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/report"
)

// The pipeline's API for the front ends: what they need of a run's
// containment, so that they import the pipeline and not the layers below
// it (arch_test.go). This file builds for js/wasm too (the browser app's
// review shows the containment hints of a report); api_native.go holds
// the rest.

// Containment policy and modes (core/contain).
type (
	// ContainPolicy is a run's containment policy (Config.Contain).
	ContainPolicy = contain.Policy
	// ContainMode is auto, on or off.
	ContainMode = contain.Mode
	// ContainHint is the fix for one kind of blocked action.
	ContainHint = contain.Hint
	// Profile is a tool profile (preset:NAME grants).
	Profile = contain.Profile
	// SecretStore is a secret store a contained script may not read.
	SecretStore = contain.SecretStore
	// GitPath is a protected name in the workspace's git directories.
	GitPath = contain.GitPath
)

// The containment modes.
const (
	ContainAuto = contain.Auto
	ContainOn   = contain.On
	ContainOff  = contain.Off
)

// ParseContainMode parses --contain's value (auto, on, off).
func ParseContainMode(s string) (ContainMode, error) { return contain.ParseMode(s) }

// CheckContainEnv checks --env's names and NAME=VALUE pairs.
func CheckContainEnv(env []string) error { return contain.CheckEnv(env) }

// ContainHints computes the fix for each kind of blocked action of a
// report (see contain.Hints). A copy stage that could not run at the
// workspace's path ran the script at the copy's (Stage.RunAt): a blocked
// path below it names the workspace's counterpart here, since a grant on
// the copy, made anew for each run, would grant nothing.
func ContainHints(r *report.Report, home string) []ContainHint {
	blocked := r.Blocked
	if r.Stage != nil && r.Stage.RunAt != "" && r.Workspace != "" {
		blocked = make([]report.Blocked, len(r.Blocked))
		for i, b := range r.Blocked {
			b.Target = atWorkspace(b.Target, r.Stage.RunAt, r.Workspace)
			blocked[i] = b
		}
	}
	return contain.Hints(blocked, home, r.Workspace)
}

// atWorkspace rewrites the paths of target (a path, or "FROM -> TO") that
// lie at or below runAt to the same place below ws.
func atWorkspace(target, runAt, ws string) string {
	one := func(p string) string {
		if p == runAt {
			return ws
		}
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(runAt, "/")+"/"); ok {
			return strings.TrimSuffix(ws, "/") + "/" + rest
		}
		return p
	}
	if from, to, ok := strings.Cut(target, " -> "); ok {
		return one(from) + " -> " + one(to)
	}
	return one(target)
}

// SecretStores lists the secret stores a contained script may not read.
func SecretStores() []SecretStore { return contain.SecretStoreList }

// Profiles lists the tool profiles.
func Profiles() []Profile { return contain.ProfileList }

// ProfileNamed is the tool profile named NAME (preset:NAME), or nil.
func ProfileNamed(name string) *Profile { return contain.ProfileNamed(name) }

// GitProtected lists the names protected in every git directory of the
// workspace.
func GitProtected() []GitPath { return contain.GitProtected }
