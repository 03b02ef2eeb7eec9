package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func networkReport() *Report {
	r := &Report{Schema: Schema, Workspace: "/ws", Script: Script{Path: "/ws/gen.sh", Args: []string{}}, Allowlist: []string{},
		StartedAt: time.Now().UTC(), FinishedAt: time.Now().UTC(),
		Containment: &Containment{Mode: "auto", Observed: true, Layers: []Layer{}}}
	for range 14 {
		r.Network = append(r.Network, NetRequest{Host: "registry.npmjs.org", Port: 443, Method: "CONNECT", BytesOut: 700, BytesIn: 50 << 10,
			Allowed: true, PID: 4211, Cmd: "node npm install", Addr: "104.16.1.35"})
	}
	r.Network = append(r.Network, NetRequest{Host: "203.0.113.7", Port: 80, Method: "GET", Reason: "host not allowed", PID: 4212, Cmd: "curl <x>"})
	r.Blocked = []Blocked{{Kind: "net", Target: "203.0.113.7:80", PID: 4212, Cmd: "curl <x>", Op: "proxy GET", Count: 1}}
	r.Evaluate()
	return r
}

// TestNetworkFormats: the requests through the proxy in the one-line
// summary, the JSON report (network[] with the contract's fields, back
// through Parse), the Markdown and the HTML.
func TestNetworkFormats(t *testing.T) {
	r := networkReport()
	if s := r.NetworkSummary(); s != "network: 15 requests to registry.npmjs.org, 1 refused: 203.0.113.7" {
		t.Errorf("summary %q", s)
	}
	if r.Verdict != Fail || !strings.Contains(strings.Join(r.Lines(), "\n"), "BLOCKED net 203.0.113.7:80") {
		t.Errorf("verdict %s lines %q", r.Verdict, r.Lines())
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Network []map[string]any `json:"network"`
	}
	if err := json.Unmarshal(js.Bytes(), &raw); err != nil || len(raw.Network) != 15 {
		t.Fatalf("json: %v %s", err, js.String())
	}
	for _, k := range []string{"host", "port", "method", "bytes_out", "bytes_in", "allowed", "reason", "pid", "cmd"} {
		if _, ok := raw.Network[14][k]; !ok {
			t.Errorf("network[] lacks %q: %v", k, raw.Network[14])
		}
	}
	back, err := Parse(js.Bytes())
	if err != nil || !reflect.DeepEqual(back.Network, r.Network) {
		t.Fatalf("parse: %v %+v", err, back)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Network | network: 15 requests to registry.npmjs.org, 1 refused: 203.0.113.7 |", "### Network (15)",
		"| ⛔ | GET | `203.0.113.7:80` | 0 B | 0 B | `4212 curl <x>` | host not allowed |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	var h bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<h3 id="network">Network <span class="count">15</span>`, `data-network="refused"`,
		"<code>203.0.113.7:80</code>", "pid 4212 curl &lt;x&gt;", "<dt>Network</dt><dd>network: 15 requests to registry.npmjs.org, 1 refused: 203.0.113.7</dd>"} {
		if !strings.Contains(h.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
}
