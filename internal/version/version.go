// Package version says which diffgate this is: the version and the commit
// it was built from, for diffgate --version and the app's About.
//
// A release build sets both with the linker (make package):
//
//	go build -ldflags "-X github.com/diffgate/diffgate/internal/version.version=v0.1.0 \
//	    -X github.com/diffgate/diffgate/internal/version.commit=13456b7..."
//
// Otherwise they come from the build information the go command stamps
// into every binary (runtime/debug.ReadBuildInfo): the module's version when
// installed with go install MODULE@VERSION, and the git revision (vcs.revision,
// vcs.modified) when built inside a clone.
package version

import (
	"runtime/debug"
	"strings"
)

// Set with -ldflags -X (see the package comment); empty otherwise.
var version, commit string

// Info is what a build knows about itself.
type Info struct {
	// Version is a release version (v0.1.0, or git describe's
	// v0.1.0-3-g13456b7), "(devel)" for a build from a clone without a
	// version set.
	Version string
	// Commit is the git revision, "" when unknown; Modified says the
	// clone had uncommitted changes.
	Commit   string
	Modified bool
}

// Get returns this build's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(bi, version, commit)
}

// fromBuild combines the build information with the linker's values (which
// win when set).
func fromBuild(bi *debug.BuildInfo, ldVersion, ldCommit string) Info {
	var in Info
	if bi != nil {
		in.Version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Commit = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	if ldVersion != "" {
		in.Version = ldVersion
		// git describe --dirty says it in the version itself.
		in.Modified = strings.HasSuffix(ldVersion, "-dirty")
	}
	if ldCommit != "" {
		in.Commit = ldCommit
	}
	if in.Version == "" {
		in.Version = "(devel)"
	}
	return in
}

// String is the one line diffgate --version prints:
// "diffgate v0.1.0 (commit 13456b7c0d1e, modified)".
func (in Info) String() string {
	s := "diffgate " + in.Version
	c := in.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	switch {
	case c != "" && in.Modified:
		s += " (commit " + c + ", modified)"
	case c != "":
		s += " (commit " + c + ")"
	case in.Modified:
		s += " (modified)"
	}
	return s
}
