// Package pkgtest checks packaging/nfpm.yaml cheaply, in make test: nfpm
// (go tool nfpm, pinned in go.mod) builds a .deb from it with stand-in
// binaries, and the package has the paths, the Depends and the version
// that make package relies on. The real package on a fresh machine is
// check.sh (make package-test).
package pkgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestNfpmConfig(t *testing.T) {
	dpkgDeb, err := exec.LookPath("dpkg-deb")
	if err != nil {
		t.Skip("no dpkg-deb to read the package with (not a Debian system)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// A tree like the repository's after make package's staging, with
	// stand-ins for the binaries and the man page.
	dir := t.TempDir()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v %q", err, docs)
	}
	files := []string{"packaging/nfpm.yaml", "packaging/diffgate.desktop", "assets/icon.png", "README.md"}
	for _, d := range docs {
		files = append(files, "docs/"+filepath.Base(d))
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "build/pkg"), 0o755)
	for _, f := range []string{"diffgate", "diffgate-app", "diffgate.1.gz"} {
		os.WriteFile(filepath.Join(dir, "build/pkg", f), []byte("stand-in "+f), 0o644)
	}
	// go tool -n: the path of the tool go.mod pins (built if needed).
	where := exec.Command("go", "tool", "-n", "nfpm")
	where.Dir = root
	nfpm, err := where.Output()
	if err != nil {
		t.Fatalf("go tool -n nfpm: %v", err)
	}
	cmd := exec.Command(strings.TrimSpace(string(nfpm)), "package", "-f", "packaging/nfpm.yaml", "-p", "deb", "-t", "build/")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "VERSION=v0.1.0-dev.g13456b7")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go tool nfpm: %v\n%s", err, out)
	}
	deb := filepath.Join(dir, "build", "diffgate_0.1.0~dev.g13456b7_amd64.deb")
	fields, err := exec.Command(dpkgDeb, "-f", deb, "Package", "Version", "Architecture", "Depends").Output()
	if err != nil {
		t.Fatalf("dpkg-deb -f %s: %v", deb, err)
	}
	for _, want := range []string{"Package: diffgate\n", "Version: 0.1.0~dev.g13456b7\n", "Architecture: amd64\n", "libgtk-3-0", "libgl1", "libx11-6"} {
		if !strings.Contains(string(fields), want) {
			t.Errorf("control fields lack %q:\n%s", want, fields)
		}
	}
	list, err := exec.Command(dpkgDeb, "-c", deb).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-rwxr-xr-x root/root .* ./usr/bin/diffgate$", "-rwxr-xr-x root/root .* ./usr/bin/diffgate-app$",
		"./usr/share/man/man1/diffgate.1.gz$", "./usr/share/applications/diffgate.desktop$", "./usr/share/icons/hicolor/512x512/apps/diffgate.png$",
		"-rw-r--r-- root/root .* ./usr/share/doc/diffgate/README.md$", "-rw-r--r-- root/root .* ./usr/share/doc/diffgate/docs/cli.md$",
		"-rw-r--r-- root/root .* ./usr/share/doc/diffgate/docs/containment.md$"} {
		found := false
		for _, l := range strings.Split(string(list), "\n") {
			if matched(t, want, l) {
				found = true
			}
		}
		if !found {
			t.Errorf("the package lacks %s:\n%s", want, list)
		}
	}
}

func matched(t *testing.T, pattern, line string) bool {
	t.Helper()
	parts := strings.Split(strings.TrimSuffix(pattern, "$"), " .* ")
	if len(parts) == 2 {
		return strings.HasPrefix(line, parts[0]) && strings.HasSuffix(line, parts[1])
	}
	return strings.HasSuffix(line, parts[0])
}
