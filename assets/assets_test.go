package assets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewDemo(t *testing.T) {
	d, err := NewDemo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"config.json", "README.md", "src/app.py", "build.lock", "logs/.keep"} {
		if _, err := os.Stat(filepath.Join(d.Workspace, p)); err != nil {
			t.Errorf("workspace lacks %s: %v", p, err)
		}
	}
	st, err := os.Stat(d.Script)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o100 == 0 {
		t.Errorf("demo.sh mode %v, want executable", st.Mode())
	}
	if filepath.Dir(d.Script) == d.Workspace {
		t.Error("the script must live outside the workspace")
	}
	if got := strings.Join(d.Allowlist, ","); got != "logs/" {
		t.Errorf("allowlist %q, want logs/", got)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Dir); !os.IsNotExist(err) {
		t.Errorf("Remove left %s", d.Dir)
	}
}
