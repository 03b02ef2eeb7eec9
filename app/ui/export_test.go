package ui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/diffgate/diffgate/app/internal/uitest"
)

// TestExportShowsItsPath: an export's save dialog starts in the workspace;
// the review then says where the file went and offers Open folder, which
// runs the file manager's launcher on the folder off the UI goroutine; a
// launcher that fails is one line. The workspace's Browse… starts in the
// workspace too.
func TestExportShowsItsPath(t *testing.T) {
	out := filepath.Join(t.TempDir(), "opened")
	fail, missing := false, false
	opener := func(dir string) *exec.Cmd {
		if missing {
			return exec.Command("diffgate-no-such-opener", dir)
		}
		if fail {
			return exec.Command("sh", "-c", "echo 'xdg-open: no method available for opening it' >&2; exit 4")
		}
		return exec.Command("sh", "-c", `printf %s "$1" > "$2"`, "sh", dir, out)
	}
	u, l, w := newTestUI(t, Options{folderOpener: opener})
	w.Resize(fyne.NewSize(1280, 800))
	ws := workspace(t)
	runScript(t, u, l, ws, "echo 'debug = true' > config.ini\n", nil)
	v := u.Review()
	if text, _ := exportLine(v); text != "" {
		t.Fatalf("an export line before any export: %q", text)
	}

	test.Tap(uitest.Button(t, v, "HTML"))
	dlg := w.Canvas().Overlays().Top()
	if dlg == nil || !strings.Contains(topText(w), filepath.Base(ws)) {
		t.Fatalf("the save dialog does not start in the workspace: %q", topText(w))
	}
	test.Tap(uitest.Button(t, dlg, "Save"))
	l.until(t, "the export line", 20*time.Second, func() bool { text, _ := exportLine(v); return text != "" })
	text, canOpen := exportLine(v)
	matches, _ := filepath.Glob(filepath.Join(ws, "diffgate-*.html"))
	if len(matches) != 1 {
		t.Fatalf("exported files in the workspace: %q", matches)
	}
	if text != "Saved to "+matches[0] || !canOpen {
		t.Errorf("export line %q (Open folder %v), want the path %s", text, canOpen, matches[0])
	}
	if b, _ := os.ReadFile(matches[0]); !strings.Contains(string(b), "config.ini") || !strings.HasPrefix(strings.ToLower(string(b)), "<!doctype html") {
		t.Errorf("the export is not the HTML report: %.80q", b)
	}

	uitest.Tap(t, v, "Open folder")
	l.until(t, "the launcher", 20*time.Second, func() bool { b, _ := os.ReadFile(out); return len(b) > 0 })
	if b, _ := os.ReadFile(out); string(b) != ws {
		t.Errorf("Open folder opened %q, want %q", b, ws)
	}

	fail = true
	uitest.Tap(t, v, "Open folder")
	l.until(t, "the failure line", 20*time.Second, func() bool { text, _ := exportLine(v); return strings.Contains(text, "Could not") })
	text, canOpen = exportLine(v)
	if want := "Saved to " + matches[0] + "  Could not open the folder: no file manager is set up to open it (sh exited with 4)."; text != want || !canOpen {
		t.Errorf("after a failed launch: %q (Open folder %v), want %q", text, canOpen, want)
	}

	// A launcher that is not installed: said in one plain line.
	missing = true
	uitest.Tap(t, v, "Open folder")
	l.until(t, "the second failure line", 20*time.Second, func() bool { text, _ := exportLine(v); return strings.Contains(text, "not installed") })
	if text, _ := exportLine(v); text != "Saved to "+matches[0]+"  Could not open the folder: diffgate-no-such-opener is not installed." {
		t.Errorf("without a launcher: %q", text)
	}

	// Browse… for the workspace starts in it.
	u.Tabs.Select(u.runItem)
	test.Tap(u.run.wsBrowse)
	if !strings.Contains(topText(w), filepath.Base(ws)) {
		t.Errorf("the folder dialog does not start in the workspace: %q", topText(w))
	}
}

// exportLine is the review's line under the export buttons ("" when none
// is shown) and whether it offers Open folder.
func exportLine(v fyne.CanvasObject) (text string, canOpen bool) {
	text = uitest.RichTextWhere(v, func(s string) bool { return strings.HasPrefix(s, "Saved to ") || strings.HasPrefix(s, "Not saved") })
	return text, uitest.HasButton(v, "Open folder")
}
