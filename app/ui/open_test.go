package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/internal/uitest"
	"github.com/diffgate/diffgate/app/keys/keytest"
)

// topText is the text drawn in the top overlay ("" when none is shown).
func topText(w fyne.Window) string {
	top := w.Canvas().Overlays().Top()
	if top == nil {
		return ""
	}
	return strings.ReplaceAll(uitest.DrawnText(top), "\n", " ")
}

// errorShown waits for an error dialog and returns its text.
func errorShown(t *testing.T, l *loop, w fyne.Window) string {
	t.Helper()
	l.until(t, "an error dialog", 20*time.Second, func() bool { return w.Canvas().Overlays().Top() != nil })
	return topText(w)
}

// dismiss closes the top dialog with its button named name.
func dismiss(t *testing.T, w fyne.Window, name string) {
	t.Helper()
	test.Tap(uitest.Button(t, w.Canvas().Overlays().Top(), name))
	if w.Canvas().Overlays().Top() != nil {
		t.Fatalf("%s did not close the dialog", name)
	}
}

// TestDropOpensAReport: a dropped file that is a diffgate report opens in
// the review, whatever its name; a script (even a .json one that is not a
// report) and a folder stay the Run tab's; a damaged report is one line in
// an error dialog and changes nothing.
func TestDropOpensAReport(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	dir := t.TempDir()
	report := writeDemoReport(t)
	renamed := filepath.Join(dir, "ci-artifact.txt")
	data, _ := os.ReadFile(report)
	os.WriteFile(renamed, data, 0o644)
	truncated := filepath.Join(dir, "cut.json")
	os.WriteFile(truncated, data[:len(data)/2], 0o644)
	pkg := filepath.Join(dir, "package.json")
	os.WriteFile(pkg, []byte(`{"name": "x", "scripts": {}}`), 0o644)
	script := writeScript(t, dir, "true\n")
	ws := t.TempDir()
	scriptBefore := u.run.script.Text

	uri := storage.NewFileURI
	u.dropped([]fyne.URI{uri(renamed)})
	l.until(t, "the dropped report", 20*time.Second, func() bool { return u.Review().Report() != nil })
	if r := u.Review().Report(); u.Tabs.Selected() != u.reviewItem || r.Workspace != "/home/dev/demo-workspace" || u.reviewID != 0 {
		t.Fatalf("dropped report: tab %q, workspace %q", u.Tabs.Selected().Text, r.Workspace)
	}
	if u.run.script.Text != scriptBefore {
		t.Errorf("the report became the script: %q", u.run.script.Text)
	}

	shown := u.Review().Report()
	u.dropped([]fyne.URI{uri(truncated)})
	msg := errorShown(t, l, w)
	if !strings.Contains(msg, "Cannot open cut.json: not a diffgate report: the JSON is truncated") {
		t.Errorf("error for a truncated report: %q", msg)
	}
	dismiss(t, w, "OK")
	if u.Review().Report() != shown || u.run.script.Text != scriptBefore {
		t.Error("a damaged report changed the review or the script")
	}

	u.dropped([]fyne.URI{uri(pkg)})
	if u.run.script.Text != pkg || u.Tabs.Selected() != u.runItem {
		t.Errorf("a .json that is no report: script %q, tab %q", u.run.script.Text, u.Tabs.Selected().Text)
	}
	u.dropped([]fyne.URI{uri(ws), uri(script)})
	if u.run.workspace.Text != ws || u.run.script.Text != script {
		t.Errorf("folder and script: %q %q", u.run.workspace.Text, u.run.script.Text)
	}
	l.settle(20 * time.Millisecond)
	if u.Review().Report() != shown || w.Canvas().Overlays().Top() != nil {
		t.Error("dropping a script touched the review")
	}
}

// fileItem is the item of a Fyne file dialog that stands for the file
// name (drawn as its base name and its extension), nil when none does.
func fileItem(dialog fyne.CanvasObject, name string) fyne.Tappable {
	ext := filepath.Ext(name)
	var item fyne.Tappable
	uitest.Walk(dialog, func(o fyne.CanvasObject) {
		tp, ok := o.(fyne.Tappable)
		if _, isBtn := o.(*widget.Button); !ok || isBtn {
			return
		}
		lines := strings.Split(uitest.DrawnText(o), "\n")
		if slices.Contains(lines, strings.TrimSuffix(name, ext)) && slices.Contains(lines, ext) && len(lines) <= 3 {
			item = tp
		}
	})
	return item
}

// TestOpenReportMenu: File ▸ Open report… (Ctrl+O, from a text field too)
// shows a file dialog in the workspace offering JSON files; the chosen
// report opens in the review; the next dialog starts in its folder. A file
// that is not a report is one line in an error dialog.
func TestOpenReportMenu(t *testing.T) {
	u, l, w := newTestUI(t, Options{})
	w.Resize(fyne.NewSize(1280, 800))
	ws := t.TempDir()
	data, _ := os.ReadFile(writeDemoReport(t))
	os.WriteFile(filepath.Join(ws, "report.json"), data, 0o644)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(ws, "other.json"), []byte("[1, 2]"), 0o644)
	u.run.workspace.SetText(ws)

	open := func(name string) {
		t.Helper()
		w.Canvas().Focus(u.run.args)
		keytest.Shortcut(w, shortcutOpen)
		top := w.Canvas().Overlays().Top()
		text := topText(w)
		if top == nil || !strings.Contains(text, filepath.Base(ws)) || fileItem(top, "report.json") == nil {
			t.Fatalf("Ctrl+O: the dialog does not show the workspace: %q", text)
		}
		if strings.Contains(text, "notes") {
			t.Errorf("the dialog offers a file that is not JSON: %q", text)
		}
		item := fileItem(top, name)
		if item == nil {
			t.Fatalf("no %s in the dialog", name)
		}
		test.Tap(item)
		test.Tap(uitest.Button(t, top, "Open"))
	}
	open("report.json")
	l.until(t, "the report", 20*time.Second, func() bool { return u.Review().Report() != nil })
	if u.Tabs.Selected() != u.reviewItem || u.Review().Report().Workspace != "/home/dev/demo-workspace" {
		t.Fatalf("opened report: tab %q", u.Tabs.Selected().Text)
	}
	if got := u.app.Preferences().String(prefReportDir); got != ws {
		t.Errorf("remembered report folder %q, want %q", got, ws)
	}
	u.run.workspace.SetText(t.TempDir()) // the next dialog starts where the report was
	open("other.json")
	if msg := errorShown(t, l, w); !strings.Contains(msg, `Cannot open other.json: not a diffgate report: the file is not JSON`) {
		t.Errorf("error for a JSON that is no report: %q", msg)
	}
}
