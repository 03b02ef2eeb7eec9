package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/report"
)

// notObservable is containment.why while blocked actions are not observed.
const notObservable = "blocked actions not observable: the supervisor does not yet read seccomp notifications or Landlock audit records"

// contain applies the run's containment policy to spec: the environment
// from the allow list, a private TMPDIR (created outside the workspace;
// the returned cleanup removes it) and the supervisor's Landlock rules.
func (g *run) contain(spec *proc.Spec) (cleanup func(), err error) {
	pol := g.cfg.Contain
	if !pol.Enabled() {
		return func() {}, nil
	}
	if pol.Mode == contain.On && runtime.GOOS != "linux" {
		return nil, setupf("--contain=on: landlock: not available on %s", runtime.GOOS)
	}
	tmp, err := privateTmp(g.ws, spec.Dir)
	if err != nil {
		return nil, setupf("containment: %v", err)
	}
	cleanup = func() {
		if err := os.RemoveAll(tmp); err != nil {
			g.cfg.Log.Warn().Err(err).Str("dir", tmp).Msg("cannot remove the private TMPDIR")
		}
	}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	spec.Env = pol.Environ(env, tmp)
	writable := []string{spec.Dir, tmp}
	writable = append(writable, contain.DevWritable...)
	for _, w := range pol.Writable {
		if !filepath.IsAbs(w) {
			// Relative to the workspace (--writable .git).
			w = filepath.Join(spec.Dir, w)
		}
		writable = append(writable, filepath.Clean(w))
	}
	home, _ := os.UserHomeDir()
	deny := contain.SecretStores(home)
	for _, d := range pol.DenyRead {
		if a, err := filepath.Abs(d); err == nil {
			deny = append(deny, a)
		}
	}
	spec.Containment = proc.Containment{
		Enabled: true, Required: pol.Mode == contain.On, NoNet: !pol.Net,
		Writable: writable, DenyRead: deny, NoLandlock: pol.NoLandlock,
	}
	return cleanup, nil
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
		if d != "" && (p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/")) {
			return true
		}
	}
	return false
}

// containmentReport turns the policy and what the supervisor enforced into
// the report's containment object.
func containmentReport(pol contain.Policy, e *proc.Enforced) *report.Containment {
	mode := pol.Mode
	if mode == "" {
		mode = contain.Off
	}
	c := &report.Containment{Mode: string(mode), Why: notObservable, Layers: []report.Layer{}}
	if !pol.Enabled() {
		c.Why = ""
		return c
	}
	why := "not available on " + runtime.GOOS
	if e == nil {
		e = &proc.Enforced{}
	} else if e.Why != "" {
		why = e.Why
	}
	c.LandlockABI = e.LandlockABI
	ll := fmt.Sprintf("landlock v%d", e.LandlockABI)
	layer := func(name string, requested, enforced bool, how string) report.Layer {
		l := report.Layer{Name: name, Requested: requested, Enforced: requested && enforced}
		switch {
		case l.Enforced:
			l.How = how
		case requested && name == "limits" && runtime.GOOS == "linux":
			l.Why = limitsWhy(e)
		case requested:
			l.Why = layerWhy(why, name)
		}
		return l
	}
	c.Layers = []report.Layer{
		layer("env", true, true, "allow list, private TMPDIR"),
		layer("filesystem", true, e.Filesystem, ll+": writes only to the workspace, TMPDIR, /dev nodes and --writable"),
		layer("secrets", true, e.Filesystem && e.Secrets, ll+": secret stores and --deny-read not readable"),
		layer("network", !pol.Net, e.Seccomp || e.Net, netHow(e, ll)),
		layer("signals", true, e.Signals, ll+": signals only within the script's tree"),
		layer("limits", true, e.NProc && e.FSize, fmt.Sprintf("soft RLIMIT_NPROC (+%d tasks), RLIMIT_FSIZE (%d TiB)", proc.DefaultNProc, proc.DefaultFSize>>40)),
	}
	c.Contained = len(c.Missing()) == 0
	return c
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
	switch {
	case e.Seccomp && e.Net:
		return "seccomp: no AF_INET/AF_INET6 sockets, no io_uring; " + ll + ": TCP connect and bind denied"
	case e.Seccomp:
		return "seccomp: no AF_INET/AF_INET6 sockets, no io_uring"
	}
	return ll + ": TCP connect and bind denied (UDP is not: no seccomp filter)"
}

// limitsWhy says why the limits layer is missing.
func limitsWhy(e *proc.Enforced) string {
	switch {
	case !e.FSize:
		return "RLIMIT_FSIZE could not be set"
	case !e.NProc && os.Geteuid() == 0:
		return "RLIMIT_NPROC does not hold root"
	}
	return "RLIMIT_NPROC could not be set"
}
