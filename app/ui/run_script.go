//go:build !js

package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/oneline"
)

// scriptPane shows the chosen script's text and, under its heading, its
// SHA-256 and size (the hash computed off the UI goroutine).
type scriptPane struct {
	do         func(func())
	scriptView *widget.TextGrid
	scriptInfo *widget.RichText
	// scriptSHA is the shown script's SHA-256 ("" until it is computed);
	// hashGen counts the loads (the hash of an older one is dropped).
	scriptSHA string
	hashGen   int
}

func newScriptPane(do func(func())) *scriptPane {
	s := &scriptPane{do: do}
	s.scriptView = widget.NewTextGrid()
	s.scriptView.Scroll = fyne.ScrollBoth
	s.scriptView.ShowLineNumbers = true
	s.scriptInfo = widget.NewRichText()
	s.scriptInfo.Wrapping = fyne.TextWrapBreak
	return s
}

// pane is the script's heading, its info line and its text.
func (s *scriptPane) pane() fyne.CanvasObject {
	return container.NewBorder(
		container.NewVBox(heading("Script (read it before you run it)"), s.scriptInfo), nil, nil, nil,
		framed(s.scriptView))
}

// showScript shows the script at p ("" for none) and starts hashing it.
func (s *scriptPane) showScript(p string) {
	s.hashGen++
	gen := s.hashGen
	s.scriptSHA = ""
	if p == "" {
		s.scriptView.SetText("")
		s.setScriptInfo("No script selected.", style.Muted)
		return
	}
	size, err := s.preview(p)
	if err != nil {
		s.scriptView.SetText("")
		s.setScriptInfo(err.Error(), style.FailColor)
		return
	}
	s.setScriptInfo("SHA-256 …  ·  "+report.Size(size), style.Muted)
	go func() {
		sum, err := hashFile(p)
		s.do(func() {
			if gen != s.hashGen {
				return
			}
			if err != nil {
				s.setScriptInfo(oneline.Flat(err.Error()), style.FailColor)
				return
			}
			s.scriptSHA = sum
			s.setScriptInfo("SHA-256 "+sum+"  ·  "+report.Size(size), style.Muted)
		})
	}()
}

// preview puts the head of the script at p in the view and returns its
// size; the error is the line to show instead.
func (s *scriptPane) preview(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, errors.New(oneline.Flat(err.Error()))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		return 0, errors.New(p + " is a folder, not a script")
	}
	head, _ := io.ReadAll(io.LimitReader(f, previewLimit))
	text := string(head)
	switch {
	case !looksText(head):
		text = "(binary file: no preview)"
	case st.Size() > previewLimit:
		text += "\n… (preview cut at 256 KiB)"
	}
	s.scriptView.SetText(strings.ToValidUTF8(strings.ReplaceAll(text, "\t", "    "), "\uFFFD"))
	return st.Size(), nil
}

func (s *scriptPane) setScriptInfo(text string, c fyne.ThemeColorName) {
	s.scriptInfo.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text,
		Style: widget.RichTextStyle{ColorName: c, SizeName: theme.SizeNameCaptionText, TextStyle: fyne.TextStyle{Monospace: true}}}}
	s.scriptInfo.Refresh()
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func looksText(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	for _, c := range b {
		if c == 0 {
			return false
		}
	}
	return utf8.Valid(b) || len(b) == previewLimit
}
