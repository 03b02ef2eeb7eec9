package proc

import (
	"encoding/json"
	"time"
)

// wireSpec is superSpec on the wire to the supervisor. Paths, arguments and
// environment entries travel as bytes (base64 in JSON): encoding/json would
// replace invalid UTF-8 in a string with U+FFFD, and they must reach the
// script byte for byte.
type wireSpec struct {
	Dir         []byte        `json:"dir"`
	Path        []byte        `json:"path"`
	Args        [][]byte      `json:"args"`
	Env         [][]byte      `json:"env"`
	Grace       time.Duration `json:"grace"`
	Containment Containment   `json:"containment"`
	Overlay     *wireOverlay  `json:"overlay,omitempty"`
	MountNS     bool          `json:"mount_ns,omitempty"`
	MountWhy    string        `json:"mount_why,omitempty"`
	Cleanup     time.Duration `json:"cleanup,omitempty"`
	Limits      int           `json:"limits,omitempty"`
	// The containment's paths, as bytes (Containment's own are nil).
	Writable  [][]byte `json:"writable,omitempty"`
	DenyRead  [][]byte `json:"deny_read,omitempty"`
	ReadOnly  [][]byte `json:"read_only,omitempty"`
	HardLinks [][]byte `json:"hard_links,omitempty"`
}

// wireOverlay is Overlay on the wire, its paths as bytes.
type wireOverlay struct {
	Lower, Upper, Work []byte
	UserXattr          bool `json:",omitempty"`
	Copy               bool `json:",omitempty"`
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func fromBytes(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// MarshalJSON encodes the spec with its strings as bytes.
func (s superSpec) MarshalJSON() ([]byte, error) {
	c := s.Containment
	c.Writable, c.DenyRead, c.ReadOnly, c.HardLinks = nil, nil, nil, nil
	return json.Marshal(wireSpec{
		Dir: []byte(s.Dir), Path: []byte(s.Path), Args: toBytes(s.Args), Env: toBytes(s.Env),
		Grace: s.Grace, Containment: c, Overlay: toWireOverlay(s.Overlay), MountNS: s.MountNS, MountWhy: s.MountWhy,
		Cleanup: s.Cleanup, Limits: s.Limits,
		Writable: toBytes(s.Containment.Writable), DenyRead: toBytes(s.Containment.DenyRead),
		ReadOnly: toBytes(s.Containment.ReadOnly), HardLinks: toBytes(s.Containment.HardLinks),
	})
}

// UnmarshalJSON reverses MarshalJSON.
func (s *superSpec) UnmarshalJSON(data []byte) error {
	var w wireSpec
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*s = superSpec{
		Dir: string(w.Dir), Path: string(w.Path), Args: fromBytes(w.Args), Env: fromBytes(w.Env),
		Grace: w.Grace, Containment: w.Containment, MountNS: w.MountNS, MountWhy: w.MountWhy,
		Cleanup: w.Cleanup, Limits: w.Limits,
	}
	if len(w.Writable) > 0 {
		s.Containment.Writable = fromBytes(w.Writable)
	}
	if len(w.DenyRead) > 0 {
		s.Containment.DenyRead = fromBytes(w.DenyRead)
	}
	if len(w.ReadOnly) > 0 {
		s.Containment.ReadOnly = fromBytes(w.ReadOnly)
	}
	if len(w.HardLinks) > 0 {
		s.Containment.HardLinks = fromBytes(w.HardLinks)
	}
	if o := w.Overlay; o != nil {
		s.Overlay = &Overlay{Lower: string(o.Lower), Upper: string(o.Upper), Work: string(o.Work), UserXattr: o.UserXattr, Copy: o.Copy}
	}
	return nil
}

func toWireOverlay(o *Overlay) *wireOverlay {
	if o == nil {
		return nil
	}
	return &wireOverlay{Lower: []byte(o.Lower), Upper: []byte(o.Upper), Work: []byte(o.Work), UserXattr: o.UserXattr, Copy: o.Copy}
}
