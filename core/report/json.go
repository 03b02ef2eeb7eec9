package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/diffgate/diffgate/core/diff"
)

// ErrFormat is wrapped by Parse for input that is not a diffgate report.
var ErrFormat = errors.New("not a diffgate report")

// WriteJSON writes the report as indented JSON (schema diffgate.report/v1).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r.normalized())
}

// normalized returns a copy with nil slices made empty, so JSON has [] not null.
func (r *Report) normalized() *Report {
	c := *r
	c.Schema = Schema
	if c.Reasons == nil {
		c.Reasons = []string{}
	}
	if c.Allowlist == nil {
		c.Allowlist = []string{}
	}
	if c.Script.Args == nil {
		c.Script.Args = []string{}
	}
	if c.Process.Leftovers == nil {
		c.Process.Leftovers = []Leftover{}
	}
	if c.Changes == nil {
		c.Changes = []diff.Change{}
	}
	return &c
}

// Parse reads a JSON report, checking its schema. Errors say what is wrong in
// one line: not JSON, truncated, wrong schema.
func Parse(data []byte) (*Report, error) {
	trim := bytes.TrimSpace(data)
	if len(trim) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrFormat)
	}
	if trim[0] != '{' {
		return nil, fmt.Errorf("%w: the file is not JSON", ErrFormat)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(trim, &head); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset >= int64(len(trim)) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: the JSON is truncated", ErrFormat)
		}
		return nil, fmt.Errorf("%w: invalid JSON: %v", ErrFormat, err)
	}
	if head.Schema != Schema {
		if head.Schema == "" {
			return nil, fmt.Errorf("%w: no \"schema\" field (want %q)", ErrFormat, Schema)
		}
		return nil, fmt.Errorf("%w: schema %q, want %q", ErrFormat, head.Schema, Schema)
	}
	var r Report
	if err := json.Unmarshal(trim, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if r.Verdict != Pass && r.Verdict != Fail {
		return nil, fmt.Errorf("%w: verdict %q, want pass or fail", ErrFormat, r.Verdict)
	}
	return &r, nil
}

// ReadJSON reads and parses a JSON report.
func ReadJSON(rd io.Reader) (*Report, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}
