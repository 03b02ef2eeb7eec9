//go:build !js

package ui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	native "github.com/sqweek/dialog"
)

// noNative forces Fyne's own dialogs (DIFFGATE_NO_NATIVE_DIALOG=1), e.g.
// where GTK is present but unwanted.
var noNative = os.Getenv("DIFFGATE_NO_NATIVE_DIALOG") != ""

// tryNative runs a native dialog. It returns ok=false when no native dialog
// is available (no GTK, no display: sqweek/dialog panics then) so the
// caller falls back to Fyne's dialog.
func tryNative(show func() (string, error)) (path string, cancelled, ok bool) {
	if noNative {
		return "", false, false
	}
	defer func() {
		if recover() != nil {
			path, cancelled, ok = "", false, false
		}
	}()
	p, err := show()
	switch {
	case err == nil:
		return p, false, true
	case errors.Is(err, native.ErrCancelled):
		return "", true, true
	default:
		return "", false, false
	}
}

// pickFolder asks for a directory. It is called from a button callback: the
// native dialog runs GTK on this (the UI) thread until it closes.
func pickFolder(w fyne.Window, start, title string, done func(string)) {
	p, cancelled, ok := tryNative(func() (string, error) {
		return native.Directory().Title(title).SetStartDir(start).Browse()
	})
	if ok {
		if !cancelled {
			done(p)
		}
		return
	}
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err == nil && u != nil {
			done(u.Path())
		}
	}, w)
	if lu := listable(start); lu != nil {
		d.SetLocation(lu)
	}
	showSized(d, w)
}

// pickFile asks for a file to open, starting in start (a folder, or a
// file's folder); ext, when not "", offers only files with that extension.
func pickFile(w fyne.Window, start, title, ext string, done func(string)) {
	p, cancelled, ok := tryNative(func() (string, error) {
		b := native.File().Title(title)
		if ext != "" {
			b = b.Filter(fmt.Sprintf("%s files", ext), ext)
		}
		if dir := startDir(start); dir != "" {
			b = b.SetStartDir(dir)
		}
		return b.Load()
	})
	if ok {
		if !cancelled {
			done(p)
		}
		return
	}
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err == nil && r != nil {
			r.Close()
			done(r.URI().Path())
		}
	}, w)
	if ext != "" {
		d.SetFilter(storage.NewExtensionFileFilter([]string{"." + ext}))
	}
	if lu := listable(start); lu != nil {
		d.SetLocation(lu)
	}
	showSized(d, w)
}

// saveFile asks where to save a file named name (extension ext), starting
// in the folder start, and calls save with the chosen path.
func saveFile(w fyne.Window, start, name, ext, title string, save func(path string)) {
	p, cancelled, ok := tryNative(func() (string, error) {
		b := native.File().Title(title).Filter(fmt.Sprintf("%s files", ext), ext).SetStartFile(name)
		if dir := startDir(start); dir != "" {
			b = b.SetStartDir(dir)
		}
		return b.Save()
	})
	if ok {
		if !cancelled {
			if filepath.Ext(p) == "" {
				p += "." + ext
			}
			save(p)
		}
		return
	}
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil || wc == nil {
			return
		}
		wc.Close()
		save(wc.URI().Path())
	}, w)
	d.SetFileName(name)
	if lu := listable(start); lu != nil {
		d.SetLocation(lu)
	}
	showSized(d, w)
}

// startDir is the folder a dialog starts in for start: start itself when
// it is a folder, else the folder holding it when that exists ("" when
// neither: the dialog's own default).
func startDir(start string) string {
	if start == "" {
		return ""
	}
	if st, err := os.Stat(start); err == nil && st.IsDir() {
		return start
	}
	if dir := filepath.Dir(start); dir != start {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir
		}
	}
	return ""
}

func listable(start string) fyne.ListableURI {
	dir := startDir(start)
	if dir == "" {
		return nil
	}
	lu, err := storage.ListerForURI(storage.NewFileURI(dir))
	if err != nil {
		return nil
	}
	return lu
}

// showSized shows a Fyne file dialog as large as fits in w, up to 900×600
// (it must be shown before it is resized: Fyne builds it in Show).
func showSized(d *dialog.FileDialog, w fyne.Window) {
	d.Show()
	s := w.Canvas().Size()
	d.Resize(fyne.NewSize(min(900, s.Width-20), min(600, s.Height-20)))
}
