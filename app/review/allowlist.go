package review

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/policy"
)

// Problem is an allowlist line the policy parser rejects (policy.ParseLines).
type Problem = policy.LineProblem

// AllowlistEditor edits allowlist entries, one per line, validating as the
// reviewer types: the entry turns red and each bad line is listed with the
// parser's message. Both the run tab and the review view use it.
type AllowlistEditor struct {
	widget.BaseWidget

	// OnChanged is called after every edit with the valid entries and the
	// problems (empty when every line parses).
	OnChanged func(entries []string, problems []Problem)

	entry    *keys.Entry
	problems *fyne.Container
	entries  []string
	bad      []Problem
}

// NewAllowlistEditor returns an empty editor.
func NewAllowlistEditor() *AllowlistEditor {
	e := &AllowlistEditor{}
	e.entry = keys.NewMultiLineEntry()
	e.entry.TextStyle = fyne.TextStyle{Monospace: true}
	e.entry.SetPlaceHolder("one entry per line, e.g.\nlogs/\n.cache/\nadded:out/**/*.o")
	e.entry.Wrapping = fyne.TextWrapOff
	e.entry.SetMinRowsVisible(2) // it grows with its pane; 2 rows keep a 1024×700 window whole with a NOT CONTAINED banner
	e.entry.AlwaysShowValidationError = true
	e.entry.Validator = func(string) error {
		if len(e.bad) == 0 {
			return nil
		}
		if len(e.bad) == 1 {
			return errors.New(e.bad[0].String())
		}
		return fmt.Errorf("%d invalid entries", len(e.bad))
	}
	e.problems = container.NewVBox()
	e.entry.OnChanged = func(string) { e.reparse(true) }
	e.ExtendBaseWidget(e)
	return e
}

// CreateRenderer implements fyne.Widget.
func (e *AllowlistEditor) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewBorder(nil, e.problems, nil, nil, e.entry))
}

// SetEntries replaces the text with entries, one per line.
func (e *AllowlistEditor) SetEntries(entries []string) {
	text := strings.Join(entries, "\n")
	if len(entries) > 0 {
		text += "\n"
	}
	e.SetText(text)
}

// SetText replaces the editor's text.
func (e *AllowlistEditor) SetText(text string) {
	e.entry.OnChanged = nil
	e.entry.SetText(text)
	e.entry.OnChanged = func(string) { e.reparse(true) }
	e.reparse(true)
}

// Text is the editor's text as typed.
func (e *AllowlistEditor) Text() string { return e.entry.Text }

// Entries returns the valid entries.
func (e *AllowlistEditor) Entries() []string { return append([]string(nil), e.entries...) }

// Problems returns the lines the parser rejects.
func (e *AllowlistEditor) Problems() []Problem { return append([]Problem(nil), e.bad...) }

// Append adds entry on a line of its own unless it is already there.
func (e *AllowlistEditor) Append(entry string) { e.appendAll([]string{entry}) }

// appendAll adds each entry not already there on a line of its own, with
// one re-evaluation for all of them.
func (e *AllowlistEditor) appendAll(entries []string) {
	text := e.entry.Text
	added := false
	for _, entry := range entries {
		if slices.Contains(e.entries, entry) || strings.Contains("\n"+text, "\n"+entry+"\n") {
			continue
		}
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += entry + "\n"
		added = true
	}
	if added {
		e.SetText(text)
	}
}

// Entry is the underlying text entry (to focus it or set its size).
func (e *AllowlistEditor) Entry() *keys.Entry { return e.entry }

// setOnEscape sets where Escape takes the focus from the editor (nil:
// nowhere).
func (e *AllowlistEditor) setOnEscape(f func()) { e.entry.OnEscape = f }

// Disable and Enable switch editing off and on.
func (e *AllowlistEditor) Disable() { e.entry.Disable() }

// Enable switches editing on.
func (e *AllowlistEditor) Enable() { e.entry.Enable() }

func (e *AllowlistEditor) reparse(notify bool) {
	e.entries, e.bad = policy.ParseLines(e.entry.Text)
	e.entry.Validate()
	objs := make([]fyne.CanvasObject, 0, len(e.bad))
	for i, p := range e.bad {
		if i == 5 && len(e.bad) > 6 {
			objs = append(objs, problemLabel(fmt.Sprintf("… and %d more invalid entries", len(e.bad)-5)))
			break
		}
		objs = append(objs, problemLabel(p.String()))
	}
	e.problems.Objects = objs
	e.problems.Refresh()
	if notify && e.OnChanged != nil {
		e.OnChanged(e.Entries(), e.Problems())
	}
}

func problemLabel(text string) fyne.CanvasObject {
	t := widget.NewRichText(&widget.TextSegment{Text: text, Style: widget.RichTextStyle{
		ColorName: style.FailColor, SizeName: theme.SizeNameCaptionText, Inline: true}})
	t.Wrapping = fyne.TextWrapWord
	return t
}
