package gate

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/fspath"
)

// notObservable starts containment.why while blocked actions are not
// observed.
const notObservable = "blocked actions not observable: "

// contain applies the run's containment policy to spec: the environment
// from the allow list, a private TMPDIR (created outside the workspace;
// the returned cleanup removes it), the supervisor's Landlock rules and
// the paths of the workspace that stay read-only (the hooks and config of
// the git repositories before lists, unless --writable names .git).
func (g *run) contain(spec *proc.Spec, before *snapshot.Manifest) (cleanup func(), err error) {
	pol := g.cfg.Contain
	if !pol.Enabled() {
		return func() {}, nil
	}
	if pol.Mode == contain.On && runtime.GOOS != "linux" {
		return nil, setupf("--contain=on: landlock: not available on %s", runtime.GOOS)
	}
	tmp, cleanup, err := g.makeTmp(spec.Dir)
	if err != nil {
		return nil, err
	}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	home, _ := os.UserHomeDir()
	extra, err := g.prepareProfiles(&pol, home, env)
	if err != nil {
		cleanup()
		return nil, err
	}
	if !pol.Net {
		g.allowHosts(&pol)
	}
	spec.Env = pol.Environ(env, tmp)
	g.dropped = contain.Dropped(env, spec.Env)
	writable := append(g.writable(pol, spec.Dir, tmp), extra...)
	deny := g.denyRead(pol, home, spec.Dir)
	mech := ""
	if st := g.cfg.Stage; st != nil {
		mech = string(st.Mechanism)
	}
	g.grants = append(g.grants, flagGrants(pol.Net, g.cfg.Contain.Env, mech)...)
	spec.Containment = layers(pol, writable, deny)
	spec.Containment.ReadOnly = gitReadOnly(spec.Dir, g.gits, writable)
	if g.cfg.Stage == nil && before != nil {
		// A staged run's script writes to copies (an overlay copies a
		// file up, a copy stage has its own): only a direct run can write
		// through a hard link to a file outside.
		for _, p := range diff.HardlinkEscapes(before) {
			spec.Containment.HardLinks = append(spec.Containment.HardLinks, filepath.Join(spec.Dir, filepath.FromSlash(p)))
		}
	}
	return cleanup, nil
}

// makeTmp makes the run's private TMPDIR, outside the workspace and dir,
// and the cleanup that removes it.
func (g *run) makeTmp(dir string) (tmp string, cleanup func(), err error) {
	tmp, err = privateTmp(g.ws, dir)
	if err != nil {
		return "", nil, setupf("containment: %v", err)
	}
	return tmp, func() {
		if err := os.RemoveAll(tmp); err != nil {
			g.cfg.Log.Warn().Err(err).Str("dir", tmp).Msg("cannot remove the private TMPDIR")
		}
	}, nil
}

// prepareProfiles prepares the tool profiles the allow list names (their
// caches below the cache root): each one's variables go into pol.Env,
// before --env's, its grants into the report; it returns the directories
// they make writable.
func (g *run) prepareProfiles(pol *contain.Policy, home string, env []string) (extra []string, err error) {
	profs := contain.ProfilesOf(g.cfg.Allow)
	if len(profs) == 0 {
		return nil, nil
	}
	root, err := contain.CacheRoot(g.ws)
	if err != nil {
		return nil, setupf("containment: %v", err)
	}
	for _, p := range profs {
		pp, err := p.Prepare(root, home, env)
		if err != nil {
			return nil, setupf("containment: %v (the tool caches are kept below %s: set XDG_CACHE_HOME to a writable directory)", err, filepath.Dir(root))
		}
		// A profile's settings come before --env, which overrides them.
		pol.Env = append(append(append([]string{}, pp.Pass...), pp.Env...), pol.Env...)
		extra = append(extra, pp.Writable...)
		g.grants = append(g.grants, pp.Grants...)
	}
	return extra, nil
}

// allowHosts adds to pol.NetAllow (and the run's Config) each profile's
// hosts (its registry), with the hosts --net-allow names reachable through
// the gate's recording proxy only (startProxy), and grants them.
func (g *run) allowHosts(pol *contain.Policy) {
	for _, h := range pol.NetAllow {
		g.grants = append(g.grants, report.Grant{Kind: "net", Target: h, By: "--net-allow"})
	}
	pol.NetAllow = slices.Clone(pol.NetAllow)
	for _, p := range contain.ProfilesOf(g.cfg.Allow) {
		pol.NetAllow = append(pol.NetAllow, p.Hosts...)
		g.grants = append(g.grants, contain.HostGrants(p.Name)...)
	}
	g.cfg.Contain.NetAllow = pol.NetAllow
}

// writable returns the paths the script may write: dir (where it runs),
// tmp, the devices, and each --writable (relative to dir; one naming the
// workspace's own means dir's), granting each.
func (g *run) writable(pol contain.Policy, dir, tmp string) []string {
	writable := []string{dir, tmp}
	writable = append(writable, contain.DevWritable...)
	for _, w := range pol.Writable {
		if !filepath.IsAbs(w) {
			// Relative to the workspace (--writable .git).
			w = filepath.Join(dir, w)
		}
		writable = append(writable, g.inRunDir(dir, filepath.Clean(w)))
		g.grants = append(g.grants, report.Grant{Kind: "writable", Target: filepath.Clean(w), By: "--writable"})
	}
	return writable
}

// denyRead returns the paths the script may not read: the secret stores
// below home, the gate's own, and each --deny-read (with its copy in dir),
// granting each.
func (g *run) denyRead(pol contain.Policy, home, dir string) []string {
	deny := append(contain.SecretStores(home), pol.Hidden...)
	for _, d := range pol.DenyRead {
		if a, err := filepath.Abs(d); err == nil {
			// The workspace's file and its copy in a copy stage.
			deny = append(deny, a)
			if c := g.inRunDir(dir, a); c != a {
				deny = append(deny, c)
			}
			g.grants = append(g.grants, report.Grant{Kind: "deny_read", Target: a, By: "--deny-read"})
		}
	}
	return deny
}

// flagGrants returns the grants of --net (net), each --env (its name only:
// a value given may be a secret) and --stage (mech, "" for none), in that
// order.
func flagGrants(net bool, env []string, mech string) []report.Grant {
	var out []report.Grant
	if net {
		out = append(out, report.Grant{Kind: "net", Target: "all", By: "--net"})
	}
	for _, e := range env {
		name, _, set := strings.Cut(e, "=")
		if set {
			name += " (set)"
		}
		out = append(out, report.Grant{Kind: "env", Target: name, By: "--env"})
	}
	if mech != "" {
		out = append(out, report.Grant{Kind: "stage_mechanism", Target: mech, By: "--stage"})
	}
	return out
}

// layers returns the containment pol asks for, with the paths the script
// may write and may not read: required with --contain=on, without network
// unless --net, and each layer a test leaves out off.
func layers(pol contain.Policy, writable, deny []string) proc.Containment {
	return proc.Containment{
		Enabled: true, Required: pol.Mode == contain.On, NoNet: !pol.Net,
		Writable: writable, DenyRead: deny, NoLandlock: pol.NoLandlock, NoNotify: pol.NoNotify, NoMounts: pol.NoMounts, Memory: pol.Memory,
	}
}

// inRunDir maps p, an absolute path inside the workspace, to the same
// path inside dir, where the script runs (a copy stage's copy), and returns
// any other path as it is: a --writable or --deny-read naming a folder or
// file of the workspace by its absolute path means the script's copy of it
// (the real one stays out of reach as the rest of the workspace does).
func (g *run) inRunDir(dir, p string) string {
	if dir == g.ws {
		return p
	}
	for _, q := range []string{p, resolved(p)} {
		if fspath.Within(q, g.ws) {
			rel, _ := filepath.Rel(g.ws, q)
			return filepath.Join(dir, rel)
		}
	}
	return p
}

func resolved(p string) string {
	r, err := fspath.Resolve(p)
	if err != nil {
		return p
	}
	return r
}

// gitReadOnly lists, below dir (where the script runs), the paths of
// contain.GitProtected in every git directory of gits (gitDirs: those a
// manifest holds), whether they exist yet or not: a script must not plant a hook or a
// core.hooksPath, core.fsmonitor or alias that runs later, outside the
// gate. A --writable naming the git directory (or a directory inside it,
// or above it other than dir itself) lifts it.
func gitReadOnly(dir string, gits, writable []string) []string {
	var out []string
	for _, gitDir := range gits {
		lifted := false
		for _, w := range writable {
			lifted = lifted || fspath.Within(w, gitDir) || w != dir && fspath.Within(gitDir, w)
		}
		if !lifted {
			for _, p := range contain.GitProtected {
				out = append(out, filepath.Join(gitDir, p.Name))
			}
		}
	}
	return out
}

// gitDirs lists the git directories the manifest holds, below dir: each
// directory named .git; each directory git would take for one, a HEAD
// file and an objects directory or a commondir file (a submodule's under
// .git/modules, nested ones too, a worktree's under .git/worktrees, a bare
// repository); the target of a .git file's "gitdir:" line when it lies
// below dir.
func gitDirs(dir string, m *snapshot.Manifest) []string {
	if m == nil {
		return nil
	}
	// The manifest is sorted: a few lookups per directory, not a map of
	// every entry (a tenth of a no-op run's CPU on 125,000 entries).
	types := func(p string) snapshot.Type {
		if e := m.Lookup(p); e != nil {
			return e.Type
		}
		return ""
	}
	seen := map[string]bool{}
	var out []string
	add := func(abs string) {
		if !seen[abs] {
			seen[abs] = true
			out = append(out, abs)
		}
	}
	for i := range m.Entries {
		e := &m.Entries[i]
		abs := func() string { return filepath.Join(dir, filepath.FromSlash(e.Path)) }
		switch base := path.Base(e.Path); {
		case e.Type == snapshot.Dir && base == ".git":
			add(abs())
		case e.Type == snapshot.File && base == "HEAD" && e.Path != base:
			// A git directory of another name (a bare repository, a
			// worktree's): HEAD beside objects/ or commondir. Found from
			// its HEAD, not by three lookups for every directory (18 ms
			// of a no-op run on the 125,000-entry real tree).
			d := path.Dir(e.Path)
			if types(d) == snapshot.Dir && (types(d+"/objects") == snapshot.Dir || types(d+"/commondir") == snapshot.File) {
				add(filepath.Join(dir, filepath.FromSlash(d)))
			}
		case e.Type == snapshot.File && base == ".git":
			if t := gitdirTarget(abs()); t != "" && t != dir && fspath.Within(t, dir) {
				if fi, err := os.Lstat(t); err == nil && fi.IsDir() {
					add(t)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// gitdirTarget reads a .git file ("gitdir: PATH", relative to the file's
// directory) and returns its target, cleaned ("" when it is none).
func gitdirTarget(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, _ := io.ReadFull(f, b)
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	t, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "gitdir: ")
	if !ok || t == "" {
		return ""
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(file), t)
	}
	return filepath.Clean(t)
}

// privateTmp creates the run's private TMPDIR outside the workspace (and
// outside the directory the script runs in, a stage's copy).
func privateTmp(dirs ...string) (string, error) {
	for _, parent := range []string{os.TempDir(), "/tmp", "/var/tmp"} {
		if inside(parent, dirs) {
			continue
		}
		d, err := os.MkdirTemp(parent, "diffgate-tmp-")
		if err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("cannot create a private TMPDIR outside the workspace")
}

func inside(p string, dirs []string) bool {
	for _, d := range dirs {
		if d != "" && fspath.Within(p, d) {
			return true
		}
	}
	return false
}

// containmentReport turns the policy and what the supervisor enforced into
// the report's containment object.
func containmentReport(pol contain.Policy, e *proc.Enforced, dropped int, droppedKinds map[string]int) *report.Containment {
	mode := pol.Mode
	if mode == "" {
		mode = contain.Off
	}
	c := &report.Containment{Mode: string(mode), Layers: []report.Layer{}, BlockedDropped: dropped, BlockedDroppedKinds: droppedKinds}
	if !pol.Enabled() {
		return c
	}
	why := "not available on " + runtime.GOOS
	if e == nil {
		e = &proc.Enforced{ObserveWhy: why}
	} else if e.Why != "" {
		why = e.Why
	}
	c.Observed = e.Observed
	if !e.Observed {
		c.Why = notObservable + e.ObserveWhy
	}
	c.LandlockABI = e.LandlockABI
	ll := fmt.Sprintf("landlock v%d", e.LandlockABI)
	layer := func(name string, requested, enforced bool, how string) report.Layer {
		l := report.Layer{Name: name, Requested: requested, Enforced: requested && enforced}
		switch {
		case l.Enforced:
			l.How = how
		case requested && name == "limits" && runtime.GOOS == "linux":
			l.Why = limitsWhy(e, pol.Memory)
		case requested && name == "ipc":
			l.Why = "no namespaces (" + cmp.Or(e.MountsWhy, why) + ")"
		case requested && (name == "metadata" || name == "workspace"):
			l.Why = "no read-only mounts (" + cmp.Or(e.MountsWhy, why) + ")"
			if e.Observed {
				l.Why += "; the supervisor refuses them, best effort: a racing thread can defeat it"
			}
			if name == "workspace" {
				l.Why += "; git's hooks and config are put back after the run, a write through a hard link is not"
			}
		case requested && name == "sockets" && e.ObserveWhy != "":
			l.Why = e.ObserveWhy
		case requested && name == "secrets" && e.Filesystem && e.Observed:
			l.Why = layerWhy(why, name) + "; the supervisor refuses reads there, best effort"
		case requested:
			l.Why = layerWhy(why, name)
		}
		return l
	}
	recorded := ""
	if e.Observed {
		recorded = "; the supervisor records each"
	}
	c.Layers = []report.Layer{
		layer("env", true, true, "allow list, private TMPDIR"),
		layer("filesystem", true, e.Filesystem, ll+": writes only to the workspace, TMPDIR, /dev nodes and --writable"),
		layer("secrets", true, e.Filesystem && e.Secrets, ll+": secret stores and --deny-read not readable"),
		layer("network", !pol.Net, e.Seccomp || e.Net, netHow(e, ll)),
		layer("sockets", true, e.Sockets, socketsHow(e)),
		layer("ipc", true, e.IPC, "an IPC namespace of its own: no System V IPC or POSIX message queue of the host"),
		layer("signals", true, e.Signals, ll+": signals only within the script's tree"),
		layer("limits", true, (e.NProc || e.CgroupPids > 0) && e.FSize && (pol.Memory == 0 || e.CgroupMemory > 0), limitsHow(e)),
		layer("privileges", true, e.Privileges && e.Admin, privilegesHow(e)),
		layer("metadata", true, e.Mounts, "read-only mounts: no change of mode, owner, times or xattrs outside the writable directories"+recorded),
		layer("workspace", true, e.Mounts, "read-only mounts: hooks, config, config.worktree and commondir of every git directory (.git, submodules, worktrees) and hard links to files outside; git directories cannot be moved away; one made past the supervisor is removed after the run"+recorded),
	}
	if !pol.Net && len(pol.NetAllow) > 0 {
		for i := range c.Layers {
			if l := &c.Layers[i]; l.Name == "network" && l.Enforced {
				hosts := "only through the gate's proxy, to " + strings.Join(pol.NetAllow, ", ")
				if !e.StandIns {
					hosts = "the proxy for " + strings.Join(pol.NetAllow, ", ") + " cannot be reached (no stand-in sockets)"
				}
				l.How += "; " + hosts
			}
		}
	}
	c.Contained = len(c.Missing()) == 0
	return c
}

// socketsHow says how AF_UNIX sockets outside the workspace were kept out of
// reach.
func socketsHow(e *proc.Enforced) string {
	if e.Observed {
		return "the supervisor carries out every connect: AF_UNIX only below the writable directories, no abstract sockets"
	}
	return "seccomp: no connect at all (without the supervisor's watch nothing tells where one goes)"
}

// privilegesHow says how the script was kept from administering the host.
func privilegesHow(e *proc.Enforced) string {
	caps := "no capabilities (no_new_privs)"
	if e.KeptCaps != "none" {
		caps = "capabilities cut to " + strings.ReplaceAll(e.KeptCaps, ",", ", ")
	}
	return caps + "; seccomp: host-administration system calls and every call of a foreign ABI (i386, x32) refused"
}

// blockedReport turns the supervisor's blocked actions into the report's.
func blockedReport(bs []proc.Blocked) []report.Blocked {
	var out []report.Blocked
	for _, b := range bs {
		out = append(out, report.Blocked{Kind: b.Kind, Target: b.Target, PID: b.PID, Cmd: b.Cmd, Op: b.Op, Count: b.Count})
	}
	return out
}

// layerWhy picks the part of the supervisor's reason that concerns a layer
// ("net: ...; signals: ..."), or the whole reason (Landlock missing).
func layerWhy(why, layer string) string {
	key := map[string]string{"network": "seccomp: ", "signals": "signals: ", "secrets": "secrets: "}[layer]
	for _, part := range strings.Split(why, "; ") {
		if key != "" && strings.HasPrefix(part, key) {
			return part
		}
	}
	return why
}

// netHow says how the network was turned off.
func netHow(e *proc.Enforced, ll string) string {
	how := "seccomp: no AF_INET/AF_INET6 sockets, no io_uring"
	if e.StandIns {
		how = "seccomp: no AF_INET/AF_INET6 socket reaches the kernel (stand-ins record each address), no io_uring"
	}
	switch {
	case e.Seccomp && e.Net:
		return how + "; " + ll + ": TCP connect and bind denied"
	case e.Seccomp:
		return how
	}
	return ll + ": TCP connect and bind denied (UDP is not: no seccomp filter)"
}

// limitsHow says how the script's tree was limited.
func limitsHow(e *proc.Enforced) string {
	var parts []string
	if e.CgroupPids > 0 {
		parts = append(parts, fmt.Sprintf("cgroup pids.max %d", e.CgroupPids))
	}
	if e.CgroupMemory > 0 {
		parts = append(parts, "cgroup memory limit "+report.Size(e.CgroupMemory))
	}
	if e.NProc {
		parts = append(parts, fmt.Sprintf("soft RLIMIT_NPROC (+%d tasks)", proc.DefaultNProc))
	}
	return strings.Join(append(parts, fmt.Sprintf("RLIMIT_FSIZE (%d TiB)", proc.DefaultFSize>>40)), ", ")
}

// limitsWhy says why the limits layer is missing.
func limitsWhy(e *proc.Enforced, memory int64) string {
	switch {
	case memory > 0 && e.CgroupMemory == 0:
		return "--memory: no cgroup with the memory controller could be made"
	case !e.FSize:
		return "RLIMIT_FSIZE could not be set"
	case !e.NProc && os.Geteuid() == 0:
		return "RLIMIT_NPROC does not hold root, and no cgroup with the pids controller could be made"
	}
	return "RLIMIT_NPROC could not be set"
}
