package watch

import (
	"os"
	"os/user"
	"path/filepath"
	"runtime"
)

// Env is what the default set depends on.
type Env struct {
	// Home is the user's home directory; Name the user's login name (for
	// the crontab).
	Home, Name string
	// ConfigHome is $XDG_CONFIG_HOME ("" or relative: Home/.config);
	// ZDotDir is $ZDOTDIR (zsh's startup files live there when set).
	ConfigHome, ZDotDir string
	// AppData is %APPDATA% (Windows).
	AppData string
	// OS is runtime.GOOS.
	OS string
	// CronSpool is the directory of the users' crontab files; "" picks the
	// platform's (see Defaults).
	CronSpool string
}

// CurrentEnv is the Env of the process: $HOME (os.UserHomeDir), the
// current user's name, $XDG_CONFIG_HOME, $ZDOTDIR, %APPDATA%.
func CurrentEnv() Env {
	e := Env{ConfigHome: os.Getenv("XDG_CONFIG_HOME"), ZDotDir: os.Getenv("ZDOTDIR"),
		AppData: os.Getenv("APPDATA"), OS: runtime.GOOS}
	e.Home, _ = os.UserHomeDir()
	if u, err := user.Current(); err == nil {
		e.Name = u.Username
	}
	if e.Name == "" {
		e.Name = os.Getenv("USER")
	}
	return e
}

// Defaults is the default watch set: the places where a script leaves
// something that runs later, on the user's next login, shell, ssh session,
// git command or on a timer, outside any workspace:
//
//   - shell startup files: ~/.profile, ~/.bash_profile, ~/.bash_login,
//     ~/.bashrc, ~/.bash_logout, ~/.bashrc.d/, ~/.inputrc, zsh's .zshenv,
//     .zprofile, .zshrc, .zlogin and .zlogout (in ~ and in $ZDOTDIR),
//     fish's config.fish and conf.d/, the X session files ~/.xprofile,
//     ~/.xsessionrc and ~/.xinitrc, and ~/.config/environment.d/;
//   - ssh: ~/.ssh/authorized_keys, authorized_keys2, rc, environment and
//     config (a ProxyCommand runs on the next connection), never the keys;
//   - git: ~/.gitconfig and ~/.config/git/config (core.hooksPath and
//     core.fsmonitor run code in every repository);
//   - jobs: the user's crontab (the cron spool's file for the user:
//     /var/spool/cron/crontabs/USER where that directory exists, else
//     /var/spool/cron/USER; /var/at/tabs/USER on macOS,
//     /var/cron/tabs/USER on the BSDs), ~/.config/autostart/,
//     ~/.config/systemd/user/, and on macOS ~/Library/LaunchAgents/;
//     on Windows the Startup folder.
//
// ~/.config is $XDG_CONFIG_HOME when that is set. A path that does not
// exist is watched too: a file that appears there is added.
func Defaults(e Env) []Path {
	if e.Home == "" {
		return nil
	}
	home := func(p string) string { return filepath.Join(e.Home, p) }
	cfg := e.ConfigHome
	if cfg == "" || !filepath.IsAbs(cfg) {
		cfg = home(".config")
	}
	var out []string
	if e.OS == "windows" {
		if e.AppData != "" {
			out = append(out, filepath.Join(e.AppData, "Microsoft", "Windows", "Start Menu", "Programs", "Startup"))
		}
		out = append(out, home(".gitconfig"), home(filepath.Join(".ssh", "authorized_keys")), home(filepath.Join(".ssh", "config")))
		return paths(out)
	}
	for _, f := range []string{".profile", ".bash_profile", ".bash_login", ".bashrc", ".bash_logout", ".bashrc.d", ".inputrc",
		".xprofile", ".xsessionrc", ".xinitrc"} {
		out = append(out, home(f))
	}
	zsh := []string{e.Home}
	if e.ZDotDir != "" && filepath.IsAbs(e.ZDotDir) && filepath.Clean(e.ZDotDir) != filepath.Clean(e.Home) {
		zsh = append(zsh, e.ZDotDir)
	}
	for _, dir := range zsh {
		for _, f := range []string{".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"} {
			out = append(out, filepath.Join(dir, f))
		}
	}
	out = append(out, filepath.Join(cfg, "fish", "config.fish"), filepath.Join(cfg, "fish", "conf.d"),
		filepath.Join(cfg, "environment.d"))
	for _, f := range []string{"authorized_keys", "authorized_keys2", "rc", "environment", "config"} {
		out = append(out, filepath.Join(e.Home, ".ssh", f))
	}
	out = append(out, home(".gitconfig"), filepath.Join(cfg, "git", "config"))
	if spool := cronSpool(e); spool != "" && e.Name != "" {
		out = append(out, filepath.Join(spool, e.Name))
	}
	out = append(out, filepath.Join(cfg, "autostart"), filepath.Join(cfg, "systemd", "user"))
	if e.OS == "darwin" {
		out = append(out, home(filepath.Join("Library", "LaunchAgents")))
	}
	return paths(out)
}

func paths(ps []string) []Path {
	out := make([]Path, len(ps))
	for i, p := range ps {
		out[i] = Path{Path: filepath.Clean(p), Default: true}
	}
	return out
}

// cronSpool is the directory holding the users' crontab files.
func cronSpool(e Env) string {
	if e.CronSpool != "" {
		return e.CronSpool
	}
	switch e.OS {
	case "darwin":
		return "/var/at/tabs"
	case "freebsd", "dragonfly":
		return "/var/cron/tabs"
	case "linux", "netbsd", "openbsd", "illumos", "solaris":
		// Debian, Ubuntu and Alpine keep them in crontabs/; Red Hat,
		// Fedora and Arch's cronie directly in the spool.
		if st, err := os.Stat("/var/spool/cron/crontabs"); err == nil && st.IsDir() {
			return "/var/spool/cron/crontabs"
		}
		return "/var/spool/cron"
	}
	return ""
}
