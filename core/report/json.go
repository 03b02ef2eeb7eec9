package report

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
)

// ErrFormat is wrapped by Parse for input that is not a diffgate report.
var ErrFormat = errors.New("not a diffgate report")

// WriteJSON writes the report as indented JSON (schema diffgate.report/v1).
// The changes are encoded one at a time as they are written: the JSON of a
// run that added 300,000 files is hundreds of MiB, which need not be held.
// The bytes are those of encoding the whole report at once.
func (r *Report) WriteJSON(w io.Writer) error {
	c := r.normalized()
	changes := c.Changes
	c.Changes = []diff.Change{}
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return err
	}
	// A top-level key is the only text at two spaces after a newline
	// (strings cannot hold a raw newline).
	const marker = "\n  \"changes\": []"
	i := bytes.Index(head.Bytes(), []byte(marker))
	if len(changes) == 0 || i < 0 {
		if len(changes) > 0 { // cannot happen
			return errors.New("report: no changes field")
		}
		_, err := w.Write(head.Bytes())
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head.Bytes()[:i+len(marker)-1]) // through the '['
	var one bytes.Buffer
	ce := json.NewEncoder(&one)
	ce.SetIndent("    ", "  ")
	ce.SetEscapeHTML(false)
	for k := range changes {
		one.Reset()
		if err := ce.Encode(&changes[k]); err != nil {
			return err
		}
		if k > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(bytes.TrimSuffix(one.Bytes(), []byte("\n")))
	}
	bw.WriteString("\n  ]")
	bw.Write(head.Bytes()[i+len(marker):])
	return bw.Flush()
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
	// Strings that are not valid UTF-8 would reach JSON as U+FFFD: write
	// them quoted (%q), with their raw bytes in a _b64 twin.
	c.Workspace, c.WorkspaceB64 = snapshot.EncodeString(c.Workspace)
	c.Script.Path, c.Script.PathB64 = snapshot.EncodeString(c.Script.Path)
	c.Script.Command, c.Script.CommandB64 = snapshot.EncodeString(c.Script.Command)
	c.Script.ArgsB64 = nil
	for _, a := range c.Script.Args {
		if !utf8.ValidString(a) {
			args := make([]string, len(c.Script.Args))
			c.Script.ArgsB64 = make([]string, len(c.Script.Args))
			for i, a := range c.Script.Args {
				args[i], _ = snapshot.EncodeString(a)
				c.Script.ArgsB64[i] = base64.StdEncoding.EncodeToString([]byte(a))
			}
			c.Script.Args = args
			break
		}
	}
	// Where blocked actions were not observed, why says so in full, as
	// every other format does.
	if note := c.Containment.NotObservable(); note != "" && note != c.Containment.Why {
		cc := *c.Containment
		cc.Why = note
		c.Containment = &cc
	}
	if len(c.Blocked) > 0 {
		c.Blocked = slices.Clone(c.Blocked)
		for i := range c.Blocked {
			b := &c.Blocked[i]
			b.Target, b.TargetB64 = snapshot.EncodeString(b.Target)
		}
	}
	if len(c.Outside) > 0 {
		c.Outside = slices.Clone(c.Outside)
		for i := range c.Outside {
			o := &c.Outside[i]
			o.Path, o.PathB64 = snapshot.EncodeString(o.Path)
			if o.Aspects == nil {
				o.Aspects = []string{}
			}
		}
	}
	if c.Watch != nil {
		w := *c.Watch
		w.Paths, w.Unwatchable = slices.Clone(w.Paths), slices.Clone(w.Unwatchable)
		if w.Paths == nil {
			w.Paths = []WatchedPath{}
		}
		for i := range w.Paths {
			w.Paths[i].Path, w.Paths[i].PathB64 = snapshot.EncodeString(w.Paths[i].Path)
		}
		for i := range w.Unwatchable {
			w.Unwatchable[i].Path, w.Unwatchable[i].PathB64 = snapshot.EncodeString(w.Unwatchable[i].Path)
		}
		c.Watch = &w
	}
	return &c
}

// decodeB64 restores *text from its _b64 twin *b64 (which it clears).
func decodeB64(text, b64 *string, what string) error {
	v, err := snapshot.DecodeString(*text, *b64)
	if err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	*text, *b64 = v, ""
	return nil
}

// decodeRaw restores the strings normalized wrote with a _b64 twin.
func (r *Report) decodeRaw() error {
	var err error
	if r.Workspace, err = snapshot.DecodeString(r.Workspace, r.WorkspaceB64); err != nil {
		return fmt.Errorf("workspace_b64: %v", err)
	}
	if r.Script.Path, err = snapshot.DecodeString(r.Script.Path, r.Script.PathB64); err != nil {
		return fmt.Errorf("script.path_b64: %v", err)
	}
	if r.Script.Command, err = snapshot.DecodeString(r.Script.Command, r.Script.CommandB64); err != nil {
		return fmt.Errorf("script.command_b64: %v", err)
	}
	r.WorkspaceB64, r.Script.PathB64, r.Script.CommandB64 = "", "", ""
	if r.Script.ArgsB64 != nil {
		if len(r.Script.ArgsB64) != len(r.Script.Args) {
			return fmt.Errorf("script.args_b64: %d entries for %d args", len(r.Script.ArgsB64), len(r.Script.Args))
		}
		for i, b := range r.Script.ArgsB64 {
			raw, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				return fmt.Errorf("script.args_b64: %v", err)
			}
			r.Script.Args[i] = string(raw)
		}
		r.Script.ArgsB64 = nil
	}
	for i := range r.Blocked {
		if err := decodeB64(&r.Blocked[i].Target, &r.Blocked[i].TargetB64, "blocked.target_b64"); err != nil {
			return err
		}
	}
	for i := range r.Outside {
		o := &r.Outside[i]
		if err := decodeB64(&o.Path, &o.PathB64, "outside.path_b64"); err != nil {
			return err
		}
		// An entry's JSON has no path: give the sides the change's.
		for _, e := range []*snapshot.Entry{o.Before, o.After} {
			if e != nil {
				e.Path = o.Path
			}
		}
	}
	if w := r.Watch; w != nil {
		for i := range w.Paths {
			if err := decodeB64(&w.Paths[i].Path, &w.Paths[i].PathB64, "watch.paths.path_b64"); err != nil {
				return err
			}
		}
		for i := range w.Unwatchable {
			if err := decodeB64(&w.Unwatchable[i].Path, &w.Unwatchable[i].PathB64, "watch.unwatchable.path_b64"); err != nil {
				return err
			}
		}
	}
	return nil
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
	if err := r.decodeRaw(); err != nil {
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
