package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/internal/testenv"
)

// diffBase is the workspace every mutation of the differential test starts
// from: nested folders, a read-only folder, an empty one, a symlink, a
// FIFO, a socket, an extended attribute and, as root, a device and a file
// of another owner.
const diffBase = `mkdir -p sub/dir/deep keep empty ro
echo f > sub/dir/f.txt; echo g > sub/dir/deep/g.txt; echo k > keep/k.txt
echo a > a.txt; echo b > b.txt; echo r > ro/r.txt; chmod 555 ro
ln -s a.txt link
mkfifo fifo
/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'
setfattr -n user.note -v base a.txt
if [ "$(id -u)" = 0 ]; then mknod dev c 1 3; echo o > owned.txt; chown 4321:4321 owned.txt; fi
`

// diffCase is one mutation: a shell snippet the script runs in the
// workspace, the allowlist flags of the runs, and whether it needs root.
// setup adds to the base workspace; unfit says the overlay cannot stage
// the workspace it makes (stage.OverlayUnfit: the copy is used). applyGap,
// when set, says why apply does not reach the direct run's tree.
type diffCase struct {
	name, setup, script, applyGap string
	allow                         []string
	root, unfit                   bool
	// userOverlay, when set, is the documented way a normal user's
	// overlay run differs (docs/containment.md, "What does not hold").
	userOverlay string
	// absPaths: the script writes its working directory's absolute path,
	// which differs when a copy stage cannot run at the workspace's path
	// (no mount namespace; the report says so: stage.run_at).
	absPaths bool
}

var diffCorpus = []diffCase{
	{name: "noop", script: "true"},
	{name: "dir-to-file", script: "rm -r sub/dir && echo x > sub/dir", allow: []string{"changed:**"}},
	{name: "dir-to-symlink", script: "rm -r sub/dir && ln -s ../a.txt sub/dir", allow: []string{"changed:**"}},
	{name: "file-to-dir", script: "rm a.txt && mkdir a.txt && echo in > a.txt/in"},
	{name: "chmod-dir", script: "chmod 700 sub/dir"},
	{name: "chmod-file", script: "chmod 600 b.txt"},
	{name: "write-read-only-dir", script: "chmod 755 ro && echo n > ro/n.txt && chmod 555 ro"},
	{name: "add-fifo", script: "mkfifo newfifo"},
	{name: "remove-fifo", script: "rm fifo"},
	{name: "add-socket", script: `/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("newsock")'`},
	{name: "remove-socket", script: "rm sock"},
	{name: "add-device", script: "mknod newdev c 1 5", root: true},
	{name: "remove-device", script: "rm dev", root: true},
	{name: "chown", script: "chown 1234:1234 a.txt", root: true},
	{name: "chown-back", script: "chown 0:0 owned.txt", root: true},
	{name: "add-hardlink", script: "ln a.txt a2.txt",
		applyGap: "apply writes a new name of a file it does not change as a copy, not as a link"},
	{name: "write-through-hardlink", setup: "ln keep/k.txt hard.txt", script: "echo more >> hard.txt", unfit: true},
	{name: "set-xattr", script: "setfattr -n user.k -v v b.txt"},
	{name: "remove-xattr", script: "setfattr -x user.note a.txt"},
	{name: "set-overlay-xattr", script: "setfattr -n user.overlay.k -v v a.txt",
		userOverlay: "overlayfs mounted with userxattr refuses a user.overlay.* attribute: the script's setfattr fails, nothing changes"},
	{name: "touch-overlay-xattr-file", setup: "setfattr -n user.overlay.pre -v 1 b.txt", script: "echo more >> b.txt", unfit: true},
	{name: "whiteout-like-device", setup: "mknod wh c 0 0", script: "rm wh && echo x > a.txt", root: true, unfit: true},
	{name: "rename-file", script: "mv a.txt renamed.txt"},
	{name: "rename-dir", script: "mv sub/dir sub/moved"},
	{name: "deep-tree", script: "mkdir -p x/1/2/3/4/5/6/7/8/9 && echo d > x/1/2/3/4/5/6/7/8/9/f"},
	{name: "odd-names", script: `printf n > "$(printf 'new\nline')"; echo s > 'with space'; echo d > ./-dash; printf x > "$(printf 'bad\377')"`},
	{name: "remove-tree", script: "rm -r sub"},
	{name: "retarget-symlink", script: "ln -sfn b.txt link"},
	// An untouched symlink that now leads outside through a folder the
	// script turned into a symlink.
	{name: "escape-through-dir", setup: "mkdir via && ln -s via/etc through", script: "rm -r via && ln -s / via"},
	{name: "add-empty-dir", script: "mkdir newempty"},
	{name: "remove-empty-dir", script: "rmdir empty"},
	{name: "absolute-paths", script: `pwd > where.txt; ln -s "$PWD/a.txt" abs-link`, absPaths: true},
	{name: "venv", script: "/usr/bin/python3 -m venv --without-pip .venv", absPaths: true},
	{name: "remove-and-recreate", script: "rm -r keep && mkdir keep && echo k2 > keep/k.txt"},
}

// TestStagedVerdictEqualsDirect: every mutation of the corpus, run direct,
// staged by overlay and staged by copy, as root and as a normal user,
// prints the same findings, exits the same and reports the same changes;
// the staged runs leave the workspace untouched, and applying them
// reaches the direct run's tree (content, mode, owner, symlink targets,
// xattrs, device numbers).
func TestStagedVerdictEqualsDirect(t *testing.T) {
	testenv.CLI(t)
	for _, bin := range []string{"/usr/bin/python3", "/usr/bin/setfattr", "/usr/bin/mkfifo"} {
		if _, err := os.Stat(bin); err != nil {
			t.Skipf("the corpus needs %s", bin)
		}
	}
	t.Run("root", func(t *testing.T) { testStagedVerdict(t) })
	t.Run("user", func(t *testing.T) {
		if testenv.AsUser(t) {
			return
		}
		testStagedVerdict(t)
	})
}

func testStagedVerdict(t *testing.T) {
	if !xattrsWork(t) {
		t.Skip("no user extended attributes on the temporary directory's filesystem")
	}
	for _, c := range diffCorpus {
		if c.root && !testenv.IsRoot() {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			d := runDiffCase(t, c, "", false)
			for _, v := range []struct {
				mech  pipeline.StageMechanism
				known bool
			}{{pipeline.StageOverlay, false}, {pipeline.StageOverlay, true}, {pipeline.StageCopy, false}} {
				name := string(v.mech)
				if v.known {
					name += "-known-shape"
				}
				mech := v.mech
				t.Run(name, func(t *testing.T) {
					s := runDiffCase(t, c, mech, v.known)
					if mech == pipeline.StageOverlay && c.userOverlay != "" && !testenv.IsRoot() {
						if s.code != 0 || s.changes != "" {
							t.Fatalf("a normal user's overlay run: exit %d, changes %s", s.code, s.changes)
						}
						t.Logf("as a normal user, by overlay: %s", c.userOverlay)
						return
					}
					if mech == pipeline.StageCopy && c.absPaths && strings.Contains(s.errs, "not at the workspace's path") {
						// No mount namespace here (a chroot): the copy ran at its
						// own path, which the report says; what it wrote names it.
						t.Skipf("the copy stage could not run at the workspace's path here: %s", s.errs)
					}
					if s.code != d.code || s.out != d.out || s.changes != d.changes {
						t.Fatalf("staged %s: exit %d\n%s\nchanges:\n%s\ndirect: exit %d\n%s\nchanges:\n%s\n(stderr %s)",
							mech, s.code, s.out, s.changes, d.code, d.out, d.changes, s.errs)
					}
					if c.applyGap != "" {
						t.Logf("not compared after apply: %s", c.applyGap)
					} else if s.tree != d.tree {
						t.Fatalf("after apply (%s):\n%s\ndirect run:\n%s", mech, s.tree, d.tree)
					}
				})
			}
		})
	}
}

type diffOutcome struct {
	code               int
	out, errs, changes string
	tree               string // after the run (direct) or after apply (staged)
}

// runDiffCase builds the base workspace, runs c directly (mech "") or
// staged and applied, and returns what it printed and the tree it left.
// known first runs a staged no-op on the workspace with the same history,
// so that the history holds its shape: an overlay-staged run then takes no
// before-snapshot (unless the workspace is unfit for the overlay).
func runDiffCase(t *testing.T, c diffCase, mech pipeline.StageMechanism, known bool) diffOutcome {
	t.Helper()
	stageFlag := ""
	if mech != "" {
		stageFlag = stageEnv(t, mech)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(ws, 0o755)
	t.Cleanup(func() { // read-only folders, for TempDir's removal
		filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	sh := exec.Command("/bin/sh", "-ec", diffBase+c.setup)
	sh.Dir = ws
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("base: %v\n%s", err, out)
	}
	script := filepath.Join(t.TempDir(), "s.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755)
	rep := filepath.Join(t.TempDir(), "r.json")
	args := []string{"run", "--workspace", ws, "--report", rep}
	for _, a := range c.allow {
		args = append(args, "--allow", a)
	}
	var db string
	if mech == "" {
		args = append(args, "--no-history")
	} else {
		db = filepath.Join(t.TempDir(), "h.db")
		args = append(args, "--stage", stageFlag, "--db", db)
	}
	if known {
		knownShape(t, ws, db, stageFlag)
		t.Setenv("DIFFGATE_DEV", "1") // the log says whether the run walked
	}
	before := fullDigest(t, ws)
	var o diffOutcome
	o.code, o.out, o.errs = cliRun(t, append(args, "--", script)...)
	if known {
		walked := !strings.Contains(o.errs, "no before-snapshot")
		if walked != c.unfit {
			t.Fatalf("known shape, unfit %v: walked the workspace before the script: %v\n%s", c.unfit, walked, o.errs)
		}
	}
	o.changes = canonicalChanges(t, rep)
	if mech != "" {
		want := mech
		if c.unfit {
			want = pipeline.StageCopy
		}
		if r := readReport(t, rep); r.Stage == nil || r.Stage.Mechanism != string(want) {
			t.Fatalf("report stage %+v, want mechanism %s", r.Stage, want)
		}
		if got := fullDigest(t, ws); got != before {
			t.Fatalf("the staged run touched the workspace:\n%s\nwant\n%s", got, before)
		}
		if len(c.allow) > 0 && o.code != 0 {
			// Only what was allowed: never a removal that was not.
			code, out, errs := cliRun(t, "apply", "last", "--only-allowed", "--db", db)
			if code != 0 || !strings.Contains(errs, "held back sub/dir: a change below it was not chosen") {
				t.Fatalf("apply --only-allowed: exit %d %s %s", code, out, errs)
			}
			for _, p := range []string{"sub/dir/f.txt", "sub/dir/deep/g.txt"} {
				if _, err := os.Lstat(filepath.Join(ws, p)); err != nil {
					t.Fatalf("apply --only-allowed removed %s, whose removal was not allowed: %v", p, err)
				}
			}
			if got := fullDigest(t, ws); got != before {
				t.Fatalf("apply --only-allowed applied what needs a removal that was not allowed:\n%s", got)
			}
			// Again for the whole apply.
			o.tree = runDiffCase(t, diffCase{name: c.name, setup: c.setup, script: c.script, unfit: c.unfit}, mech, known).tree
			return o
		}
		code, out, errs := cliRun(t, "apply", "last", "--db", db)
		if code == 1 && strings.Contains(errs, "--force") {
			code, out, errs = cliRun(t, "apply", "last", "--force", "--db", db)
		}
		if code != 0 {
			t.Fatalf("apply: exit %d %s %s", code, out, errs)
		}
	}
	o.tree = fullDigest(t, ws)
	return o
}

// canonicalChanges lists a report's changes, one a line: kind, path,
// aspects, allowed and risk, sorted.
func canonicalChanges(t *testing.T, rep string) string {
	t.Helper()
	r := readReport(t, rep)
	var lines []string
	for _, c := range r.Changes {
		lines = append(lines, fmt.Sprintf("%s %q %v allowed=%v risk=%s", c.Kind, c.Path, c.Aspects, c.Allowed, c.Risk))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// fullDigest is treeDigest with owners, device numbers, extended
// attributes (names and values) and hard links within the tree. The
// tree's own path, in contents and symlink targets, reads as $WS (each run
// has its workspace: a direct run's where a staged one's is must match).
func fullDigest(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	inodes := map[uint64]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		st := fi.Sys().(*syscall.Stat_t)
		l := fmt.Sprintf("%q %v %d:%d", rel, fi.Mode(), st.Uid, st.Gid)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			l += " -> " + strings.ReplaceAll(target, dir, "$WS")
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			l += " " + sha256Hex(bytes.ReplaceAll(b, []byte(dir), []byte("$WS")))
			if st.Nlink > 1 {
				if first, ok := inodes[st.Ino]; ok {
					l += " link=" + first
				} else {
					inodes[st.Ino] = rel
				}
			}
		case fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice) != 0:
			l += fmt.Sprintf(" rdev=%d", st.Rdev)
		}
		l += " " + xattrDigest(p)
		lines = append(lines, l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func xattrDigest(p string) string {
	buf := make([]byte, 64<<10)
	n, err := unix.Llistxattr(p, buf)
	if err != nil || n == 0 {
		return "-"
	}
	names := strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00")
	sort.Strings(names)
	var out []string
	for _, name := range names {
		v := make([]byte, 64<<10)
		m, err := unix.Lgetxattr(p, name, v)
		if err != nil {
			out = append(out, name+"=?")
			continue
		}
		out = append(out, name+"="+hex.EncodeToString(v[:m]))
	}
	return strings.Join(out, ",")
}

func xattrsWork(t *testing.T) bool {
	f := filepath.Join(t.TempDir(), "x")
	os.WriteFile(f, nil, 0o644)
	return unix.Setxattr(f, "user.probe", []byte("1"), 0) == nil
}
