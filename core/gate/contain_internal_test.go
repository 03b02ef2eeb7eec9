package gate

import (
	"reflect"
	"testing"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/report"
)

// TestFlagGrants: --net, each --env (its name only, never a value) and
// --stage are granted in that order.
func TestFlagGrants(t *testing.T) {
	type flags struct {
		net  bool
		env  []string
		mech string
	}
	cases := []struct {
		name string
		flags
		want []report.Grant
	}{
		{name: "none"},
		{name: "net", flags: flags{net: true}, want: []report.Grant{{Kind: "net", Target: "all", By: "--net"}}},
		{name: "env names only", flags: flags{env: []string{"GOFLAGS", "API_TOKEN=s3cret=x", "EMPTY="}}, want: []report.Grant{
			{Kind: "env", Target: "GOFLAGS", By: "--env"},
			{Kind: "env", Target: "API_TOKEN (set)", By: "--env"},
			{Kind: "env", Target: "EMPTY (set)", By: "--env"},
		}},
		{name: "stage", flags: flags{mech: "copy"}, want: []report.Grant{{Kind: "stage_mechanism", Target: "copy", By: "--stage"}}},
		{name: "all, in order", flags: flags{true, []string{"A=1"}, "overlay"}, want: []report.Grant{
			{Kind: "net", Target: "all", By: "--net"},
			{Kind: "env", Target: "A (set)", By: "--env"},
			{Kind: "stage_mechanism", Target: "overlay", By: "--stage"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := flagGrants(tc.net, tc.env, tc.mech); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("flagGrants = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestLayers: the containment a policy asks for: required only with
// --contain=on, no network unless --net, the layers tests switch off, the
// memory cap and the paths as given.
func TestLayers(t *testing.T) {
	w, d := []string{"/ws", "/tmp/x"}, []string{"/home/u/.ssh"}
	for _, tc := range []struct {
		name string
		pol  contain.Policy
		want proc.Containment
	}{
		{name: "auto", pol: contain.Policy{Mode: contain.Auto},
			want: proc.Containment{Enabled: true, NoNet: true, Writable: w, DenyRead: d}},
		{name: "on", pol: contain.Policy{Mode: contain.On},
			want: proc.Containment{Enabled: true, Required: true, NoNet: true, Writable: w, DenyRead: d}},
		{name: "net", pol: contain.Policy{Mode: contain.Auto, Net: true},
			want: proc.Containment{Enabled: true, Writable: w, DenyRead: d}},
		{name: "net-allow stays without net", pol: contain.Policy{Mode: contain.On, NetAllow: []string{"proxy.golang.org"}},
			want: proc.Containment{Enabled: true, Required: true, NoNet: true, Writable: w, DenyRead: d}},
		{name: "layers off, memory", pol: contain.Policy{Mode: contain.Auto, NoLandlock: true, NoNotify: true, NoMounts: true, Memory: 1 << 30},
			want: proc.Containment{Enabled: true, NoNet: true, Writable: w, DenyRead: d, NoLandlock: true, NoNotify: true, NoMounts: true, Memory: 1 << 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := layers(tc.pol, w, d); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("layers = %+v\nwant     %+v", got, tc.want)
			}
		})
	}
}
