package review

import (
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/policy"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// suggestion is an allowlist entry that would allow a change.
type suggestion = policy.Suggestion

// suggestions lists the entries that would allow c, narrowest first
// (policy.suggestions, shared with the CLI).
func suggestions(c *diff.Change) []suggestion { return policy.Suggestions(c) }

// suggestTitle is the title of the Suggest allowlist dialog.
const suggestTitle = "Suggest allowlist entries"

// suggestDialog is the Suggest allowlist dialog: the bulk entries
// (policy.Propose: folders added whole, vendor folders, generated files),
// ticked; every other violation (an edit of a file that existed, an added
// source file, a risk) on a line of its own, unticked: the reviewer ticks
// each after reading it. It says what the draft would come to with the
// ticked entries; only Add to draft changes the draft, and the decision
// line then says what the verdict became.
type suggestDialog struct {
	v       *View
	bulk    []*widget.Check
	picks   []*widget.Check
	entries map[*widget.Check][]string
	outcome *widget.RichText
	d       dialog.Dialog
}

// suggestAllowlist opens the Suggest allowlist dialog for the violations
// left (it changes nothing by itself); false when there is nothing to
// suggest or no window to show it in.
func (v *View) suggestAllowlist() bool {
	if v.r == nil || v.side.suggest != nil {
		return false
	}
	p := policy.Propose(v.r.Changes)
	w := windowOf(v)
	if w == nil || len(p.Bulk)+len(p.Picks) == 0 {
		return false
	}
	s := &suggestDialog{v: v, entries: map[*widget.Check][]string{}, outcome: widget.NewRichText()}
	s.outcome.Wrapping = fyne.TextWrapWord
	box := container.NewVBox()
	caption := func(text string) {
		t := widget.NewRichText(&widget.TextSegment{Text: text, Style: widget.RichTextStyle{ColorName: style.Muted, SizeName: theme.SizeNameCaptionText}})
		t.Wrapping = fyne.TextWrapWord
		box.Add(t)
	}
	if len(p.Bulk) > 0 {
		box.Add(widget.NewLabelWithStyle("Added folders, vendor folders and generated files", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
		for _, e := range p.Bulk {
			c := widget.NewCheck(e, func(bool) { s.update() })
			c.Checked = true
			s.entries[c] = []string{e}
			s.bulk = append(s.bulk, c)
			box.Add(c)
		}
	}
	if len(p.Picks) > 0 {
		box.Add(widget.NewLabelWithStyle(fmt.Sprintf("Read each before you allow it (%d)", len(p.Picks)), fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
		caption("Edits of files that existed, added source files and risks: none is ticked for you. Close this and read the change first.")
		for _, pk := range p.Picks {
			what := strings.ToUpper(string(pk.Kind)) + " " + quote.Path(pk.Path)
			if pk.Risk != diff.NoRisk {
				what = "⚠ " + string(pk.Risk) + " · " + what
			}
			c := widget.NewCheck(what+"  ·  entry: "+strings.Join(pk.Entries, ", "), func(bool) { s.update() })
			s.entries[c] = pk.Entries
			s.picks = append(s.picks, c)
			box.Add(c)
		}
	}
	scroll := container.NewVScroll(box)
	size := w.Canvas().Size()
	scroll.SetMinSize(fyne.NewSize(min(720, max(320, size.Width-120)), min(360, max(160, size.Height-260))))
	body := container.NewBorder(nil, s.outcome, nil, nil, scroll)
	s.update()
	d := dialog.NewCustomConfirm(suggestTitle, "Add to draft", "Cancel", body, func(ok bool) {
		if ok {
			s.add()
		}
	}, w)
	d.SetOnClosed(func() { v.side.suggest = nil })
	if m := keys.For(v); m != nil {
		m.Modal(d)
	}
	s.d = d
	v.side.suggest = s
	d.Show()
	return true
}

// ticked is the entries of the ticked lines.
func (s *suggestDialog) ticked() []string {
	var out []string
	for _, c := range slices.Concat(s.bulk, s.picks) {
		if c.Checked {
			out = append(out, s.entries[c]...)
		}
	}
	return out
}

// verdictWith evaluates the run with the draft and entries on a copy.
func (v *View) verdictWith(entries []string) *report.Report {
	all := slices.Concat(v.side.editor.Entries(), entries)
	p, err := policy.Parse(all)
	if err != nil {
		return nil
	}
	r := v.r.Clone()
	r.Apply(p, all)
	return r
}

// outcomeWords says what r's verdict is: "passes" or "still fails: …".
func outcomeWords(r *report.Report) (string, fyne.ThemeColorName) {
	if r.Verdict == report.Pass {
		return "passes", style.PassColor
	}
	n, other := Uncovered(r)
	var why []string
	if n > 0 {
		why = append(why, count.Grouped(n, "violation")+" left")
	}
	why = append(why, other...)
	return "still fails (" + strings.Join(why, ", ") + ")", style.FailColor
}

// update rewrites what the draft would come to.
func (s *suggestDialog) update() {
	entries := s.ticked()
	r := s.v.verdictWith(entries)
	if r == nil {
		return
	}
	words, c := outcomeWords(r)
	s.outcome.Segments = []widget.RichTextSegment{&widget.TextSegment{
		Text:  fmt.Sprintf("With the %s ticked, the run %s. Nothing is saved until you approve.", count.Grouped(len(entries), "entry"), words),
		Style: widget.RichTextStyle{ColorName: c, TextStyle: fyne.TextStyle{Bold: true}}}}
	s.outcome.Refresh()
}

// add puts the ticked entries in the draft and says what the verdict
// became (never silently).
func (s *suggestDialog) add() {
	v := s.v
	entries := s.ticked()
	if len(entries) == 0 || v.r == nil {
		return
	}
	before := v.r.Verdict
	v.side.editor.appendAll(entries)
	words, c := outcomeWords(v.r)
	text := fmt.Sprintf("Suggest added %s to the draft: the run %s", count.Grouped(len(entries), "entry"), words)
	if v.r.Verdict != before {
		text += " (it failed before)"
	}
	v.setDecision(text+". Not saved until you approve.", c)
}
