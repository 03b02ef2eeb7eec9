package pipeline

import (
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
// report (see contain.Hints).
func ContainHints(blocked []report.Blocked, home, ws string) []ContainHint {
	return contain.Hints(blocked, home, ws)
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
