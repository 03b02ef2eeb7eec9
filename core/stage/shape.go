package stage

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/diffgate/diffgate/core/snapshot"
)

// Shape is what a staged run must know of the whole workspace before its
// script runs, as the latest full walk of it found: whether an overlay can
// stage it faithfully (OverlayUnfit), its git directories (their hooks and
// config are read-only to the script) and how many of its entries could not
// be read. An overlay-staged run that has a Shape with nothing unfit and
// nothing unreadable (Delta) takes no before-snapshot: the workspace is the
// lower layer, which the script cannot write, so it is the before-state,
// and the upper layer holds exactly the changes (Read). A pipeline keeps
// the shape of a workspace's latest full walk and forgets it when anything
// else changes the workspace (a direct run, an apply).
type Shape struct {
	// Unfit is OverlayUnfit's reason ("": an overlay can stage it).
	Unfit string `json:"unfit,omitempty"`
	// GitDirs lists the git directories, relative to the workspace.
	GitDirs []string `json:"git_dirs,omitempty"`
	// Unreadable counts the entries the walk could not read (the root's
	// own included).
	Unreadable int `json:"unreadable,omitempty"`
}

// ShapeOf is the shape of m, a full manifest of workspace ws, whose git
// directories (absolute, below ws) are gitDirs.
func ShapeOf(ws string, m *snapshot.Manifest, gitDirs []string) *Shape {
	s := &Shape{Unfit: OverlayUnfit(m)}
	if m.Self != nil && m.Self.Unreadable() {
		s.Unreadable++
	}
	for i := range m.Entries {
		if m.Entries[i].Unreadable() {
			s.Unreadable++
		}
	}
	for _, d := range gitDirs {
		if rel, err := filepath.Rel(ws, d); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			s.GitDirs = append(s.GitDirs, filepath.ToSlash(rel))
		}
	}
	return s
}

// Delta says whether an overlay-staged run of a workspace of this shape can
// read only what its script changed (see Shape).
func (s *Shape) Delta() bool { return s != nil && s.Unfit == "" && s.Unreadable == 0 }

// Encode returns the shape as stored (history.SetWorkspaceShape).
func (s *Shape) Encode() []byte {
	b, _ := json.Marshal(s)
	return b
}

// DecodeShape reads a stored shape.
func DecodeShape(b []byte) (*Shape, error) {
	var s Shape
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("stage: workspace shape: %v", err)
	}
	return &s, nil
}
