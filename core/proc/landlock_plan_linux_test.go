package proc

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// mapFS is a planFS over a map, rooted at "/".
type mapFS struct {
	fstest.MapFS
	unlistable string // a directory that cannot be listed ("" none)
}

func (m mapFS) Stat(p string) (fs.FileInfo, error) { return fs.Stat(m.MapFS, fsName(p)) }

func (m mapFS) ReadDir(p string) ([]fs.DirEntry, error) {
	if p == m.unlistable {
		return nil, fs.ErrPermission
	}
	return fs.ReadDir(m.MapFS, fsName(p))
}

// fsName is absolute path p as a name in the map.
func fsName(p string) string {
	if p = strings.TrimPrefix(filepath.Clean(p), "/"); p == "" {
		return "."
	}
	return p
}

// TestPlanPathRulesNotUTF8: a writable path whose name is not UTF-8 (a
// workspace may be called anything) gets its rule: the planner reads the
// real file system byte for byte.
func TestPlanPathRulesNotUTF8(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws\xff")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	rules, _ := planPathRules(osFS{}, nil, []string{ws})
	if !slices.Contains(rules, pathRule{ws, handledFS(99)&^readDirRights | readDirRights}) {
		t.Errorf("no writable rule for %q: %v", ws, rules)
	}
}

func TestPlanPathRules(t *testing.T) {
	tree := fstest.MapFS{
		"bin/sh":               {},
		"etc/passwd":           {},
		"home/u/.bashrc":       {},
		"home/u/.ssh/id_rsa":   {},
		"home/u/.npmrc":        {},
		"home/u/ws/a.txt":      {},
		"home/u/ws/.env":       {},
		"home/u/link":          {Mode: fs.ModeSymlink},
		"home/other/notes.txt": {},
		"dev/null":             {Mode: fs.ModeDevice},
	}
	const (
		rd = readDirRights
		rf = readFileRights
	)
	writeDir := handledFS(99) &^ readDirRights
	cases := []struct {
		name     string
		fsys     planFS
		deny, ws []string
		want     []pathRule
		open     []string
	}{{
		name: "nothing denied: one rule for the root",
		fsys: mapFS{MapFS: tree}, ws: []string{"/home/u/ws"},
		want: []pathRule{{"/", rd}, {"/home/u/ws", writeDir | rd}},
	}, {
		name: "a secret: every sibling along its path, the secret none",
		fsys: mapFS{MapFS: tree}, deny: []string{"/home/u/.ssh", "/home/u/.npmrc"}, ws: []string{"/home/u/ws"},
		want: []pathRule{
			{"/bin", rd}, {"/dev", rd}, {"/etc", rd},
			{"/home/other", rd},
			{"/home/u/.bashrc", rf}, {"/home/u/ws", rd},
			{"/home/u/ws", writeDir | rd},
		},
	}, {
		name: "a denied path below the workspace: the workspace's reads come from the walk",
		fsys: mapFS{MapFS: tree}, deny: []string{"/home/u/ws/.env"}, ws: []string{"/home/u/ws"},
		want: []pathRule{
			{"/bin", rd}, {"/dev", rd}, {"/etc", rd},
			{"/home/other", rd},
			{"/home/u/.bashrc", rf}, {"/home/u/.npmrc", rf}, {"/home/u/.ssh", rd},
			{"/home/u/ws/a.txt", rf},
			{"/home/u/ws", writeDir},
		},
	}, {
		name: "the workspace's parent denied: the workspace stays readable and writable",
		fsys: mapFS{MapFS: tree}, deny: []string{"/home/u"}, ws: []string{"/home/u/ws"},
		want: []pathRule{
			{"/bin", rd}, {"/dev", rd}, {"/etc", rd},
			{"/home/other", rd},
			{"/home/u/ws", writeDir | rd},
		},
	}, {
		name: "a directory that cannot be listed stays readable, and its secrets are reported open",
		fsys: mapFS{tree, "/home/u"}, deny: []string{"/home/u/.ssh"}, ws: []string{"/home/u/ws"},
		want: []pathRule{
			{"/bin", rd}, {"/dev", rd}, {"/etc", rd},
			{"/home/other", rd},
			{"/home/u", rd},
			{"/home/u/ws", writeDir | rd},
		},
		open: []string{"/home/u/.ssh"},
	}, {
		name: "a writable path that does not exist gets no rule",
		fsys: mapFS{MapFS: tree}, ws: []string{"/nowhere"},
		want: []pathRule{{"/", rd}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, open := planPathRules(c.fsys, c.deny, c.ws)
			if !slices.Equal(got, c.want) {
				t.Errorf("rules\n got %v\nwant %v", got, c.want)
			}
			if !slices.Equal(open, c.open) {
				t.Errorf("open %v, want %v", open, c.open)
			}
		})
	}
}

func TestDenyRelation(t *testing.T) {
	deny := []string{"/home/u/.ssh", "/etc/shadow"}
	for p, want := range map[string]denyRel{
		"/":               holdsDenied,
		"/home":           holdsDenied,
		"/home/u":         holdsDenied,
		"/home/u/.ssh":    isDenied,
		"/home/u/.ssh/id": isDenied,
		"/home/u/.sshx":   unrelated,
		"/home/u/ws":      unrelated,
		"/etc/shadow":     isDenied,
		"/etc/shadow-":    unrelated,
		"/etc":            holdsDenied,
		"/usr":            unrelated,
	} {
		if got := denyRelation(p, deny); got != want {
			t.Errorf("denyRelation(%s) = %d, want %d", p, got, want)
		}
	}
	if denyRelation("/anything", []string{"/"}) != isDenied {
		t.Error("everything is below a denied root")
	}
}
