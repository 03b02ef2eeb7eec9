package review

import (
	"fmt"
	"image/color"
	"os"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
)

// Banner shows a report's verdict: PASS in the success color or FAIL in the
// error color, the reasons (unexpected changes, exit code, timeout, leftover
// processes with their command lines) and the run's facts.
type Banner struct {
	widget.BaseWidget

	r *report.Report

	bg, accent *canvas.Rectangle
	icon       *widget.Icon
	verdict    *canvas.Text
	// summary wraps (to two lines in a 1024 px window) rather than widen
	// the window or be cut.
	summary *widget.RichText
	// contained says, beside the verdict, whether the script was contained:
	// "NOT CONTAINED" as loudly as a FAIL.
	contained *canvas.Text
	reasons   *fyne.Container
	facts     *fyne.Container
	// Action, when set, may return a control shown under the hints of the
	// blocked actions (Options.BannerAction).
	Action func(r *report.Report) fyne.CanvasObject
}

// newBanner returns a banner for r (which may be nil).
func newBanner(r *report.Report) *Banner {
	b := &Banner{r: r}
	b.bg = canvas.NewRectangle(color.Transparent)
	b.bg.CornerRadius = 6
	b.accent = canvas.NewRectangle(color.Transparent)
	b.accent.CornerRadius = 3
	b.icon = widget.NewIcon(nil)
	b.verdict = canvas.NewText("", color.Black)
	b.verdict.TextStyle = fyne.TextStyle{Bold: true}
	b.summary = widget.NewRichText()
	b.summary.Wrapping = fyne.TextWrapWord
	b.contained = canvas.NewText("", color.Black)
	b.contained.TextStyle = fyne.TextStyle{Bold: true}
	b.reasons = container.New(linesLayout{}) // no padding between rows: the window must fit 1024×700
	b.facts = container.New(layout.NewFormLayout())
	b.ExtendBaseWidget(b)
	return b
}

// SetReport shows r.
func (b *Banner) SetReport(r *report.Report) {
	b.r = r
	b.Refresh()
}

// CreateRenderer implements fyne.Widget.
func (b *Banner) CreateRenderer() fyne.WidgetRenderer {
	b.update()
	th := b.Theme()
	pad := th.Size(theme.SizeNamePadding)
	head := container.NewBorder(nil, nil, container.NewHBox(container.NewGridWrap(fyne.NewSquareSize(36), b.icon), b.verdict,
		container.NewGridWrap(fyne.NewSize(4, 1)), container.NewCenter(b.contained)), nil,
		container.New(vCenter{}, style.Tight(b.summary))) // tight: two lines about as high as the verdict
	// Many reasons (blocked actions and their hints) scroll within a few
	// rows: the window must fit 1024×700 with the review's buttons in it.
	reasons := container.New(&capHeight{o: b.reasons, rows: maxReasonRows}, container.NewVScroll(b.reasons))
	left := container.New(topFirst{}, head, reasons) // no gap: a wrapped headline takes it
	body := container.NewBorder(nil, nil, nil, container.NewHBox(widget.NewSeparator(), b.facts), left)
	inner := container.New(layout.NewCustomPaddedLayout(pad, pad, 4*pad, 2*pad), body)
	accent := container.New(&accentLayout{}, b.accent)
	return widget.NewSimpleRenderer(container.NewStack(b.bg, accent, inner))
}

// setSummary sets the line beside the verdict.
func (b *Banner) setSummary(_ fyne.Theme, text string) {
	b.summary.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text, Style: widget.RichTextStyle{
		ColorName: theme.ColorNameForeground, SizeName: theme.SizeNameSubHeadingText, TextStyle: fyne.TextStyle{Bold: true}}}}
	b.summary.Refresh()
}

// Summary is the line beside the verdict.
func (b *Banner) Summary() string { return segmentsText(b.summary) }

// segmentsText is the text of a RichText's segments, as shown.
func segmentsText(t *widget.RichText) string {
	var s strings.Builder
	for _, seg := range t.Segments {
		s.WriteString(seg.Textual())
	}
	return s.String()
}

// Refresh implements fyne.Widget.
func (b *Banner) Refresh() {
	b.update()
	b.BaseWidget.Refresh()
}

func (b *Banner) update() {
	th := b.Theme()
	r := b.r
	if r == nil {
		b.verdict.Text = ""
		b.setSummary(th, "No report")
		b.reasons.Objects = nil
		b.facts.Objects = nil
		return
	}
	name := style.VerdictColor(r.Verdict)
	c := style.Color(th, name)
	b.updateHead(th, r, name, c)
	b.reasons.Objects = append(b.verdictReasons(th, c, r), containmentReasons(th, c, r)...)
	// Content changes left without a text diff for want of a copy, of
	// room or for their size (not for being binary) are said: a diff for
	// some files only must never look like all there is.
	if cov := r.DiffCoverage(); cov.Missing() > 0 {
		b.reasons.Objects = append(b.reasons.Objects, reasonRow(th, style.Color(th, style.Muted), cov.Summary(), false))
	}
	b.updateFacts(r)
}

// updateHead shows the verdict in its color, its icon, the summary line
// and the containment mark.
func (b *Banner) updateHead(th fyne.Theme, r *report.Report, name fyne.ThemeColorName, c color.Color) {
	b.bg.FillColor = style.Tint(c, 0x1c)
	b.accent.FillColor = c
	b.verdict.Text = strings.ToUpper(r.Verdict)
	b.verdict.Color = c
	b.verdict.TextSize = th.Size(theme.SizeNameHeadingText) * 1.4
	icon := theme.ErrorIcon()
	if r.Verdict == report.Pass {
		icon = theme.ConfirmIcon()
	}
	b.icon.SetResource(style.Colored(icon, name))

	b.setSummary(th, summaryLine(r))
	b.contained.Text, b.contained.Color = "", c
	if ct := r.Containment; ct != nil && r.Script.Path != "" {
		b.contained.TextSize = th.Size(theme.SizeNameSubHeadingText)
		if ct.Contained {
			b.contained.Text = "· contained"
			b.contained.Color = style.Color(th, style.Muted)
		} else {
			// As loud as the verdict: in the error color, at its size.
			b.contained.Text = "NOT CONTAINED"
			b.contained.Color = style.Color(th, style.FailColor)
			b.contained.TextSize = th.Size(theme.SizeNameHeadingText) * 1.4
		}
	}
}

// verdictReasons are the rows of the report's reasons, each with what it
// names under it (the leftover processes, the time limit, the blocked
// actions with their hints and the host's action).
func (b *Banner) verdictReasons(th fyne.Theme, c color.Color, r *report.Report) []fyne.CanvasObject {
	var rows []fyne.CanvasObject
	for _, reason := range r.Reasons {
		rows = append(rows, reasonRow(th, c, groupedCount(reason), false))
		if strings.Contains(reason, "leftover process") {
			for _, l := range r.Process.Leftovers {
				rows = append(rows, reasonRow(th, c, fmt.Sprintf("pid %d   %s", l.PID, l.Cmd), true))
			}
		}
		if strings.Contains(reason, "timed out") && r.Process.Timeout != "" {
			rows = append(rows, reasonRow(th, c, "limit "+r.Process.Timeout, true))
		}
		if strings.Contains(reason, "blocked action") {
			rows = append(rows, b.blockedReasons(th, c, r)...)
		}
	}
	return rows
}

// blockedReasons are the blocked actions, the fix for each kind (as the
// CLI prints it under the summary) and the host's action, if any.
func (b *Banner) blockedReasons(th fyne.Theme, c color.Color, r *report.Report) []fyne.CanvasObject {
	rows := blockedRows(th, c, r.Blocked)
	home, _ := os.UserHomeDir()
	for _, h := range pipeline.ContainHints(r, home) {
		rows = append(rows, reasonRow(th, c, "hint: "+h.Text, true))
	}
	if b.Action != nil {
		if o := b.Action(r); o != nil {
			rows = append(rows, container.NewHBox(o))
		}
	}
	return rows
}

// containmentReasons say how a run that was not (wholly) contained ran,
// and the grants it had.
func containmentReasons(th fyne.Theme, c color.Color, r *report.Report) []fyne.CanvasObject {
	ct := r.Containment
	if ct == nil || r.Script.Path == "" {
		return nil
	}
	var rows []fyne.CanvasObject
	if miss := ct.Missing(); ct.Mode == "off" {
		rows = append(rows, reasonRow(th, c, ct.Summary(), false))
	} else if len(miss) > 0 {
		// The layers only: why each is missing is the report's (and
		// the Run tab's) to say, a line of its own would widen the
		// banner past the window.
		names := make([]string, len(miss))
		for i, l := range miss {
			names[i] = l.Name
		}
		rows = append(rows, reasonRow(th, c, "NOT CONTAINED: "+strings.Join(names, ", "), false))
	}
	if ct.Mode != "off" && !ct.Observed && ct.Why != "" {
		rows = append(rows, reasonRow(th, c, ct.Why, false))
	}
	if g := ct.GrantsLine(); g != "" {
		rows = append(rows, reasonRow(th, style.Color(th, style.Muted), g, false))
	}
	return rows
}

// updateFacts shows the workspace and, for a run, its script, the
// script's hash and how its process ended.
func (b *Banner) updateFacts(r *report.Report) {
	b.facts.Objects = nil
	b.addFact("Workspace", r.Workspace, false)
	if r.Script.Path == "" {
		// A comparison of two manifests: no script ran, no process to show.
		b.facts.Refresh()
		return
	}
	// An inline script as sh -c '<code>' (cut), a file with its arguments.
	script := r.Script.Line()
	if script == r.Script.Path && len(r.Script.Args) > 0 {
		script += " " + strings.Join(r.Script.Args, " ")
	}
	b.addFact("Script", script, false)
	if r.Script.SHA256 != "" {
		b.addFact("SHA-256", shortHash(r.Script.SHA256), true)
	}
	b.addFact("Process", processEnd(r), false)
	b.facts.Refresh()
}

// addFact adds a caption and its value (cut to one line) to the facts.
func (b *Banner) addFact(label, value string, mono bool) {
	k := styledText(label, style.Muted, theme.SizeNameCaptionText, fyne.TextStyle{})
	l := widget.NewLabel(value)
	l.Truncation = fyne.TextTruncateEllipsis
	l.TextStyle.Monospace = mono
	l.SizeName = theme.SizeNameCaptionText
	b.facts.Objects = append(b.facts.Objects, style.Tight(k), style.Tight(container.NewGridWrap(fyne.NewSize(320, l.MinSize().Height), l)))
}

// processEnd is how the script's process ended, and after how long.
func processEnd(r *report.Report) string {
	exit := fmt.Sprintf("exit %d", r.Process.ExitCode)
	switch {
	case r.Process.Cancelled:
		exit = "cancelled"
	case r.Process.TimedOut:
		exit = "timed out"
	case r.Process.Signal != "":
		exit = "killed by " + r.Process.Signal
	}
	if d := r.FinishedAt.Sub(r.StartedAt); d > 0 {
		exit += " after " + d.Round(time.Millisecond).String()
	}
	return exit
}

// vCenter lays its objects out full width, at their minimum height,
// centered vertically (a VBox with spacers would add padding). It asks
// for headBleed less than their height: a headline wrapped to two lines may
// reach into the banner's padding rather than make the window taller.
type vCenter struct{}

const headBleed = 8

func (vCenter) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	for _, o := range objs {
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, (s.Height-h)/2))
		o.Resize(fyne.NewSize(s.Width, h))
	}
}

func (vCenter) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objs {
		m = m.Max(o.MinSize())
	}
	return fyne.NewSize(m.Width, fyne.Max(0, m.Height-headBleed))
}

// linesLayout stacks its objects at their minimum heights, full width,
// with no gap: lines of text, spaced by their own line height.
type linesLayout struct{}

func (linesLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	y := float32(0)
	for _, o := range objs {
		if !o.Visible() {
			continue
		}
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(s.Width, h))
		y += h
	}
}

func (linesLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objs {
		if o.Visible() {
			ms := o.MinSize()
			m = fyne.NewSize(fyne.Max(m.Width, ms.Width), m.Height+ms.Height)
		}
	}
	return m
}

// maxReasonRows is how many reason rows the banner shows before they
// scroll.
const maxReasonRows = 5

// capHeight lays its one object (a scroll of o) out over its bounds and
// asks for o's minimum height up to rows lines of text: past that, o
// scrolls.
type capHeight struct {
	o    fyne.CanvasObject
	rows int
}

func (c *capHeight) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(s)
	}
}

func (c *capHeight) MinSize([]fyne.CanvasObject) fyne.Size {
	m := c.o.MinSize()
	line := fyne.MeasureText("Mg", theme.TextSize(), fyne.TextStyle{}).Height
	return fyne.NewSize(m.Width, fyne.Min(m.Height, float32(c.rows)*line))
}

// maxBannerBlocked bounds the blocked actions the banner lists (the
// review's Blocked group has them all).
const maxBannerBlocked = 3

// blockedRows lists the first blocked actions under their reason.
func blockedRows(th fyne.Theme, c color.Color, bs []report.Blocked) []fyne.CanvasObject {
	var rows []fyne.CanvasObject
	for i, b := range bs {
		if i == maxBannerBlocked {
			rows = append(rows, reasonRow(th, c, fmt.Sprintf("… and %d more in the Blocked group", len(bs)-i), true))
			break
		}
		rows = append(rows, reasonRow(th, c, strings.TrimPrefix(b.Line(), "BLOCKED ")+"   "+b.Cmd, true))
	}
	return rows
}

// summaryLine is one sentence on the verdict.
func summaryLine(r *report.Report) string {
	n := r.Count()
	if r.Verdict == report.Pass {
		if len(r.Changes) == 0 {
			return "The script changed nothing in the workspace."
		}
		return fmt.Sprintf("Every change is covered by the allowlist (%s allowed).", count.Digits(n.Allowed))
	}
	if n.Violations == 0 {
		return "The file changes are allowed, but the process did not end cleanly."
	}
	switch {
	case len(r.Changes) == 1:
		return "The one change is not covered by the allowlist."
	case n.Violations == 1:
		return fmt.Sprintf("1 of %s changes is not covered by the allowlist.", count.Digits(len(r.Changes)))
	}
	return fmt.Sprintf("%s of %s changes are not covered by the allowlist.", count.Digits(n.Violations), count.Digits(len(r.Changes)))
}

// maxRow and maxSubRow bound a reason line and a detail row (a leftover's
// or blocked action's command line, monospace), in characters: the banner
// must not grow wider than a 1024 px window. A longer reason wraps onto
// more lines (at spaces); a longer detail row is cut.
const (
	maxRow    = 80
	maxSubRow = 48
)

func reasonRow(th fyne.Theme, c color.Color, text string, sub bool) fyne.CanvasObject {
	dot := canvas.NewText("•", c)
	dot.TextStyle.Bold = true
	if sub {
		if r := []rune(text); len(r) > maxSubRow {
			text = string(r[:maxSubRow-1]) + "…"
		}
		t := canvas.NewText(text, style.Color(th, style.Muted))
		t.TextStyle.Monospace = true
		dot.Text = "   "
		return container.NewHBox(dot, t)
	}
	lines := container.NewVBox()
	for _, l := range wrapWords(text, maxRow) {
		lines.Add(canvas.NewText(l, style.Color(th, theme.ColorNameForeground)))
	}
	first := canvas.NewText("X", color.Black)
	bullet := canvas.NewCircle(c)
	return container.NewHBox(container.New(&bulletLayout{line: first.MinSize().Height}, bullet), style.Tight(lines))
}

// bulletLayout draws a reason's bullet: a dot bulletSize across, centred
// on the first line of the text beside it, clear of the text (which
// style.Tight draws over its cell's edge).
type bulletLayout struct{ line float32 }

// bulletSize is a bullet's diameter: the "•" glyph was a speck.
const bulletSize = 7

func (l *bulletLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	y := max(0, (l.line-bulletSize)/2-(theme.InnerPadding()-2)) // the text is drawn higher (style.Tight)
	for _, o := range objs {
		o.Move(fyne.NewPos(2, y))
		o.Resize(fyne.NewSquareSize(bulletSize))
	}
}

func (l *bulletLayout) MinSize([]fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(bulletSize+2+theme.InnerPadding(), l.line)
}

// wrapWords breaks text into lines of at most n characters at spaces (a
// word longer than n is cut).
func wrapWords(text string, n int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(text) {
		if r := []rune(w); len(r) > n {
			w = string(r[:n-1]) + "…"
		}
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) <= n:
			line += " " + w
		default:
			out = append(out, line)
			line = w
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// accentLayout draws its object as a thin bar along the left edge.
type accentLayout struct{}

func (accentLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(fyne.NewSize(6, s.Height))
	}
}

func (accentLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(6, 0) }

func shortHash(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

// styledText is a one-segment RichText in a theme color and size.
func styledText(text string, colorName fyne.ThemeColorName, size fyne.ThemeSizeName, ts fyne.TextStyle) *widget.RichText {
	return widget.NewRichText(&widget.TextSegment{Text: text, Style: widget.RichTextStyle{
		ColorName: colorName, SizeName: size, TextStyle: ts, Inline: true}})
}

// groupedCount writes the count a reason starts with in groups of three
// ("4604 unexpected changes" reads "4,604 unexpected changes", as the
// chips and the headline count); the report's own reasons keep the plain
// digits the contract's summary line has.
func groupedCount(reason string) string {
	num, rest, ok := strings.Cut(reason, " ")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 1000 {
		return reason
	}
	return count.Digits(n) + " " + rest
}
