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
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

// pickFile asks for a file to open.
func pickFile(w fyne.Window, start, title string, done func(string)) {
	p, cancelled, ok := tryNative(func() (string, error) {
		b := native.File().Title(title)
		if start != "" {
			b = b.SetStartDir(start)
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
	if lu := listable(start); lu != nil {
		d.SetLocation(lu)
	}
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

// saveFile asks where to save a file named name (extension ext) and calls
// write with the chosen path.
func saveFile(w fyne.Window, name, ext, title string, write func(path string) error) {
	report := func(err error) {
		if err != nil {
			dialog.ShowError(err, w)
		}
	}
	p, cancelled, ok := tryNative(func() (string, error) {
		return native.File().Title(title).Filter(fmt.Sprintf("%s files", ext), ext).SetStartFile(name).Save()
	})
	if ok {
		if !cancelled {
			if filepath.Ext(p) == "" {
				p += "." + ext
			}
			report(write(p))
		}
		return
	}
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil || wc == nil {
			return
		}
		wc.Close()
		report(write(wc.URI().Path()))
	}, w)
	d.SetFileName(name)
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

func listable(dir string) fyne.ListableURI {
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	lu, err := storage.ListerForURI(storage.NewFileURI(dir))
	if err != nil {
		return nil
	}
	return lu
}
