package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuild(t *testing.T) {
	clone := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "13456b7c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}
	for _, c := range []struct {
		name       string
		bi         *debug.BuildInfo
		ldv, ldc   string
		want       string
		wantCommit string
	}{
		{"clone", clone, "", "", "diffgate (devel) (commit 13456b7c0d1e, modified)", "13456b7c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a"},
		{"go install module@version", installed, "", "", "diffgate v0.2.0", ""},
		{"make package", clone, "v0.1.0-3-g13456b7", "13456b7c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a", "diffgate v0.1.0-3-g13456b7 (commit 13456b7c0d1e)", "13456b7c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a"},
		{"make package, dirty", nil, "v0.1.0-dirty", "abc", "diffgate v0.1.0-dirty (commit abc, modified)", "abc"},
		{"nothing known", nil, "", "", "diffgate (devel)", ""},
	} {
		in := fromBuild(c.bi, c.ldv, c.ldc)
		if got := in.String(); got != c.want || in.Commit != c.wantCommit {
			t.Errorf("%s: %q commit %q, want %q commit %q", c.name, got, in.Commit, c.want, c.wantCommit)
		}
	}
}
