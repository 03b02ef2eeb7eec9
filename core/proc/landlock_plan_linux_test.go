package proc

import (
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"
)

// unlistable is a file system in which one directory cannot be listed (a
// directory the user may traverse but not read).
type unlistable struct {
	fstest.MapFS
	dir string
}

func (u unlistable) ReadDir(name string) ([]fs.DirEntry, error) {
	if name == u.dir {
		return nil, fs.ErrPermission
	}
	return u.MapFS.ReadDir(name)
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
		fsys     fs.FS
		deny, ws []string
		want     []pathRule
		open     []string
	}{{
		name: "nothing denied: one rule for the root",
		fsys: tree, ws: []string{"/home/u/ws"},
		want: []pathRule{{"/", rd}, {"/home/u/ws", writeDir | rd}},
	}, {
		name: "a secret: every sibling along its path, the secret none",
		fsys: tree, deny: []string{"/home/u/.ssh", "/home/u/.npmrc"}, ws: []string{"/home/u/ws"},
		want: []pathRule{
			{"/bin", rd}, {"/dev", rd}, {"/etc", rd},
			{"/home/other", rd},
			{"/home/u/.bashrc", rf}, {"/home/u/ws", rd},
			{"/home/u/ws", writeDir | rd},
		},
	}, {
		name: "a denied path below the workspace: the workspace's reads come from the walk",
		fsys: tree, deny: []string{"/home/u/ws/.env"}, ws: []string{"/home/u/ws"},
		want: []pathRule{
			{"/bin", rd}, {"/dev", rd}, {"/etc", rd},
			{"/home/other", rd},
			{"/home/u/.bashrc", rf}, {"/home/u/.npmrc", rf}, {"/home/u/.ssh", rd},
			{"/home/u/ws/a.txt", rf},
			{"/home/u/ws", writeDir},
		},
	}, {
		name: "the workspace's parent denied: the workspace stays readable and writable",
		fsys: tree, deny: []string{"/home/u"}, ws: []string{"/home/u/ws"},
		want: []pathRule{
			{"/bin", rd}, {"/dev", rd}, {"/etc", rd},
			{"/home/other", rd},
			{"/home/u/ws", writeDir | rd},
		},
	}, {
		name: "a directory that cannot be listed stays readable, and its secrets are reported open",
		fsys: unlistable{tree, "home/u"}, deny: []string{"/home/u/.ssh"}, ws: []string{"/home/u/ws"},
		want: []pathRule{
			{"/bin", rd}, {"/dev", rd}, {"/etc", rd},
			{"/home/other", rd},
			{"/home/u", rd},
			{"/home/u/ws", writeDir | rd},
		},
		open: []string{"/home/u/.ssh"},
	}, {
		name: "a writable path that does not exist gets no rule",
		fsys: tree, ws: []string{"/nowhere"},
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
