package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

func TestJSONRoundTrip(t *testing.T) {
	for name, r := range map[string]*Report{"failing": fixtureReport(), "passing": passingReport()} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := r.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			got, err := Parse(buf.Bytes())
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := r.normalized()
			if !reflect.DeepEqual(got, want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Fatalf("round trip differs:\n got %s\nwant %s", gj, wj)
			}
			for i := range want.Changes {
				if !reflect.DeepEqual(got.Changes[i], want.Changes[i]) {
					t.Errorf("change %q differs:\n got %+v\nwant %+v", want.Changes[i].Path, got.Changes[i], want.Changes[i])
				}
			}
		})
	}
}

// An invalid UTF-8 path (and symlink target) is carried in path_b64 and
// comes back byte for byte.
func TestJSONInvalidUTF8Path(t *testing.T) {
	raw := "bad-\xff\xfe/\x80name"
	target := "../\xc3(out"
	r := &Report{Verdict: Fail, Changes: []diff.Change{{
		Path: raw, Kind: diff.Added, Aspects: []diff.Aspect{},
		After: &snapshot.Entry{Path: raw, Type: snapshot.Symlink, Perm: 0o777, UID: -1, GID: -1, Target: target},
		Risk:  diff.SymlinkEscape,
	}}}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var generic struct {
		Changes []map[string]any `json:"changes"`
	}
	if err := json.Unmarshal(buf.Bytes(), &generic); err != nil {
		t.Fatal(err)
	}
	if b64 := generic.Changes[0]["path_b64"]; b64 != base64.StdEncoding.EncodeToString([]byte(raw)) {
		t.Fatalf("path_b64 = %v", b64)
	}
	if !strings.Contains(buf.String(), `"path": "\"bad-\\xff\\xfe/\\x80name\""`) {
		t.Fatalf("path text is not the quoted form:\n%s", buf.String())
	}
	got, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Changes[0]; c.Path != raw || c.After.Path != raw || c.After.Target != target {
		t.Fatalf("got path %q (after %q) target %q", c.Path, c.After.Path, c.After.Target)
	}
	// The fixture's invalid path survives too.
	var fb bytes.Buffer
	if err := fixtureReport().WriteJSON(&fb); err != nil {
		t.Fatal(err)
	}
	fr, err := Parse(fb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if p := fr.Changes[len(fr.Changes)-1].Path; p != "weird-\xff\xfe.bin" {
		t.Fatalf("fixture path %q", p)
	}
}

func TestWriteJSONEmptyListsAndSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := (&Report{Verdict: Pass}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	for _, want := range []string{`"schema": "diffgate.report/v1"`, `"reasons": []`, `"allowlist": []`, `"args": []`, `"leftovers": []`, `"changes": []`} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s in\n%s", want, s)
		}
	}
	if strings.Contains(s, "null") {
		t.Errorf("null in\n%s", s)
	}
}

func TestParseErrors(t *testing.T) {
	var good bytes.Buffer
	if err := fixtureReport().WriteJSON(&good); err != nil {
		t.Fatal(err)
	}
	full := good.String()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "the file is empty"},
		{"blank", " \n\t\n", "the file is empty"},
		{"not JSON", "# diffgate report\nFAIL\n", "the file is not JSON"},
		{"HTML", "<!DOCTYPE html><html>", "the file is not JSON"},
		{"truncated", full[:len(full)/2], "the JSON is truncated"},
		{"truncated early", `{"schema": "diffgate.report/v1", "verdict": "fa`, "the JSON is truncated"},
		{"wrong schema", `{"schema": "diffgate.manifest/v1", "root": "/x", "entries": []}`, `schema "diffgate.manifest/v1", want "diffgate.report/v1"`},
		{"future schema", `{"schema": "diffgate.report/v2", "verdict": "pass"}`, `schema "diffgate.report/v2", want "diffgate.report/v1"`},
		{"no schema", `{"verdict": "pass"}`, `no "schema" field`},
		{"bad verdict", `{"schema": "diffgate.report/v1", "verdict": "maybe"}`, `verdict "maybe", want pass or fail`},
		{"broken JSON", `{"schema": "diffgate.report/v1",, "verdict": "pass"}`, "invalid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse([]byte(tc.in))
			if err == nil {
				t.Fatalf("no error, got %+v", r)
			}
			msg := err.Error()
			if !errors.Is(err, ErrFormat) {
				t.Errorf("%q does not wrap ErrFormat", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			if strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error is not one line: %q", msg)
			}
			if !strings.HasPrefix(msg, ErrFormat.Error()+": ") {
				t.Errorf("error %q does not start with %q", msg, ErrFormat.Error())
			}
		})
	}
	// And the untruncated file parses.
	if _, err := Parse([]byte(full)); err != nil {
		t.Fatalf("full report: %v", err)
	}
	if _, err := ReadJSON(strings.NewReader(full)); err != nil {
		t.Fatalf("ReadJSON: %v", err)
	}
}
