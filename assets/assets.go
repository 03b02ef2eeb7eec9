// Package assets bundles the app icon and the demo: a small workspace, a
// script that misbehaves in the ways the gate catches, and its allowlist.
package assets

import (
	"bytes"
	"embed"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"fyne.io/fyne/v2"

	"github.com/diffgate/diffgate/core/policy"
)

//go:embed icon.png
var iconPNG []byte

// Icon is the app icon (512x512 PNG).
var Icon = fyne.NewStaticResource("icon.png", iconPNG)

//go:embed all:demo
var demoFS embed.FS

// Demo is a copy of the bundled demo on disk.
type Demo struct {
	// Dir holds both the workspace and the script; Remove deletes it.
	Dir string
	// Workspace is the directory the script runs in.
	Workspace string
	// Script is demo.sh, outside the workspace.
	Script string
	// Allowlist is the demo's allowlist: logs/.
	Allowlist []string
}

// DemoAllowlist returns the demo's allowlist entries.
func DemoAllowlist() []string {
	data, _ := demoFS.ReadFile("demo/allowlist.txt")
	entries, _ := policy.ReadEntries(bytes.NewReader(data))
	return entries
}

// NewDemo copies the demo into a fresh temporary directory (under dir, or
// the system's temporary directory when dir is "") and returns its paths.
func NewDemo(dir string) (*Demo, error) {
	root, err := os.MkdirTemp(dir, "diffgate-demo-")
	if err != nil {
		return nil, err
	}
	err = fs.WalkDir(demoFS, "demo", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := p[len("demo"):]
		if rel == "" || path.Base(p) == "allowlist.txt" {
			return nil
		}
		dst := filepath.Join(root, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := demoFS.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if path.Ext(p) == ".sh" {
			mode = 0o755
		}
		return os.WriteFile(dst, data, mode)
	})
	if err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	return &Demo{
		Dir:       root,
		Workspace: filepath.Join(root, "workspace"),
		Script:    filepath.Join(root, "demo.sh"),
		Allowlist: DemoAllowlist(),
	}, nil
}

// Remove deletes the demo's directory.
func (d *Demo) Remove() error { return os.RemoveAll(d.Dir) }
