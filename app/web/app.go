// Package web is the browser build of the diffgate review app: the same
// review view as the desktop (app/review), around it a header to open a
// report, compare two snapshots and download the drafted allowlist, an
// error bar and a welcome page.
//
// Everything the browser provides (the file picker, downloads, drag and
// drop, ?report=URL, the test hook) is reached through Host; the js
// implementation lives in host_js.go (GOOS=js), so this file and its tests
// build and run anywhere with Fyne's test driver.
package web

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/assets"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

// Host is what the browser does for the app. Its callbacks may be called on
// any goroutine; App moves them onto the UI goroutine.
type Host interface {
	// PickFile shows the browser's file picker and calls done with the
	// chosen file's name and bytes (or a read error). It is not called when
	// the user cancels.
	PickFile(accept string, done func(name string, data []byte, err error))
	// Download offers data as a file download.
	Download(name, mime string, data []byte) error
	// Publish exposes the status to the page (window.diffgate).
	Publish(s Status)
}

// Status is what the page (and the browser tests) can see of the app, as
// window.diffgate.
type Status struct {
	// Seq increases with every change of the status.
	Seq int `json:"seq"`
	// Source names what is shown: a file name, a URL, "demo" or "a.json → b.json".
	Source string `json:"source"`
	// Verdict is "pass", "fail", or "" when no report is open.
	Verdict    string   `json:"verdict"`
	Reasons    []string `json:"reasons"`
	Added      int      `json:"added"`
	Removed    int      `json:"removed"`
	Changed    int      `json:"changed"`
	Violations int      `json:"violations"`
	Allowed    int      `json:"allowed"`
	Risky      int      `json:"risky"`
	// Allowlist is the draft allowlist the verdict was evaluated with.
	Allowlist []string `json:"allowlist"`
	// Selected is the path of the selected change ("" if none).
	Selected string `json:"selected"`
	// Error is the message of the error bar ("" if none).
	Error string `json:"error"`
	// Compare is true while the compare dialog is open.
	Compare bool `json:"compare"`
}

// Options configure the app.
type Options struct {
	// Do runs f on the UI goroutine; fyne.Do unless a test has its own loop.
	Do func(f func())
}

// App is the web app's window content and state.
type App struct {
	win  fyne.Window
	host Host
	do   func(func())

	view    *review.View
	body    *fyne.Container
	welcome fyne.CanvasObject

	errBar  *fyne.Container
	errText *widget.RichText

	source                                   string
	sourceText                               *widget.RichText
	openBtn, compareBtn, demoBtn             *widget.Button
	allowlistBtn                             *widget.Button
	headerBg, errBg, welcomeBg               *canvas.Rectangle
	nameText, downloadText                   *canvas.Text
	downloads                                *fyne.Container
	welcomeOpen, welcomeCompare, welcomeDemo *widget.Button
	named                                    map[string]fyne.CanvasObject
	cmp                                      *compareDialog
	cmpState                                 *compareState
	errMsg                                   string
	last                                     Status
	published                                bool
	content                                  fyne.CanvasObject
}

// ReportAccept is the file picker's accept filter for reports and manifests.
const ReportAccept = ".json,application/json"

// New builds the app in w: it sets the diffgate theme and the content.
func New(a fyne.App, w fyne.Window, h Host, opts Options) *App {
	x := &App{win: w, host: h, do: opts.Do, named: map[string]fyne.CanvasObject{}}
	if x.do == nil {
		x.do = fyne.Do
	}
	a.Settings().SetTheme(Theme{})
	a.SetIcon(assets.Icon)
	x.build()
	a.Settings().AddListener(func(fyne.Settings) { x.do(x.applyTheme) })
	w.SetContent(x.content)
	c := w.Canvas()
	c.SetOnTypedKey(func(ev *fyne.KeyEvent) {
		if x.view.Report() != nil && x.cmp == nil {
			x.view.TypedKey(ev)
		}
		x.publish()
	})
	c.SetOnTypedRune(func(r rune) {
		if x.view.Report() != nil && x.cmp == nil {
			x.view.TypedRune(r)
		}
		x.publish()
	})
	x.publish()
	return x
}

// Content is the window content.
func (x *App) Content() fyne.CanvasObject { return x.content }

// View is the review view.
func (x *App) View() *review.View { return x.view }

// Named returns the control the page's test hook calls name, or nil when it
// is not shown: the header's "open", "compare", "demo",
// "download-allowlist", "download-report"; "welcome-open"; "banner",
// "allowlist-editor"; "error-bar", "error-close"; the compare dialog's
// "compare-before", "compare-after", "compare-allowlist", "compare-run",
// "compare-cancel"; and "focused", the focused widget.
func (x *App) Named(name string) fyne.CanvasObject {
	if name == "focused" {
		if f, ok := x.win.Canvas().Focused().(fyne.CanvasObject); ok {
			return f
		}
		return nil
	}
	o := x.named[name]
	switch {
	case o == nil || !o.Visible():
		return nil
	case strings.HasPrefix(name, "compare-") && x.cmp == nil,
		strings.HasPrefix(name, "download-") && !x.downloads.Visible(),
		strings.HasPrefix(name, "welcome-") && x.body.Objects[0] != x.welcome,
		strings.HasPrefix(name, "error-") && !x.errBar.Visible(),
		(name == "allowlist-editor" || name == "banner") && x.view.Report() == nil:
		return nil
	}
	return o
}

func (x *App) build() {
	x.view = review.New(nil, review.Options{
		Export: x.export,
		OnDraftChanged: func([]string) {
			x.updateTitle()
			x.publish()
		},
	})

	x.openBtn = widget.NewButtonWithIcon("Open report…", theme.FolderOpenIcon(), x.PickReport)
	x.openBtn.Importance = widget.HighImportance
	x.compareBtn = widget.NewButtonWithIcon("Compare snapshots…", theme.ContentCopyIcon(), x.ShowCompare)
	x.demoBtn = widget.NewButtonWithIcon("Demo", theme.MediaPlayIcon(), x.OpenDemo)
	x.demoBtn.Importance = widget.LowImportance
	x.allowlistBtn = widget.NewButtonWithIcon("Allowlist", theme.DownloadIcon(), x.DownloadAllowlist)

	x.sourceText = widget.NewRichText()
	x.sourceText.Truncation = fyne.TextTruncateEllipsis

	logo := canvas.NewImageFromResource(assets.Icon)
	logo.FillMode = canvas.ImageFillContain
	logo.SetMinSize(fyne.NewSquareSize(28))
	x.nameText = canvas.NewText("diffgate", nil)
	x.nameText.TextStyle.Bold = true
	x.nameText.TextSize = theme.TextSubHeadingSize()
	left := container.NewHBox(logo, x.nameText, widget.NewSeparator())
	x.downloadText = canvas.NewText("Download", nil)
	x.downloads = container.NewHBox(widget.NewSeparator(), container.NewCenter(x.downloadText), x.allowlistBtn) // the report: the review's Export JSON
	right := container.NewHBox(x.openBtn, x.compareBtn, x.demoBtn, x.downloads)
	header := container.NewBorder(nil, nil, left, right, x.sourceText)
	x.headerBg = canvas.NewRectangle(nil)
	top := container.NewVBox(container.NewStack(x.headerBg, container.NewPadded(header)), widget.NewSeparator())

	x.errText = widget.NewRichText()
	x.errText.Wrapping = fyne.TextWrapWord
	closeErr := widget.NewButtonWithIcon("", theme.CancelIcon(), x.ClearError)
	closeErr.Importance = widget.LowImportance
	errIcon := widget.NewIcon(style.Colored(theme.ErrorIcon(), style.FailColor))
	x.errBg = canvas.NewRectangle(nil)
	x.errBg.CornerRadius = 6
	x.errBg.StrokeWidth = 1.5
	x.errBar = container.NewPadded(container.NewStack(x.errBg, container.NewPadded(
		container.NewBorder(nil, nil, container.NewCenter(errIcon), container.NewCenter(closeErr), x.errText))))
	x.errBar.Hide()
	x.downloads.Hide()

	x.welcome = x.buildWelcome()
	x.body = container.NewStack(x.welcome)
	x.content = container.NewBorder(container.NewVBox(top, x.errBar), nil, nil, nil, x.body)

	x.applyTheme()
	x.named["open"] = x.openBtn
	x.named["compare"] = x.compareBtn
	x.named["demo"] = x.demoBtn
	x.named["download-allowlist"] = x.allowlistBtn
	x.named["download-report"] = x.view.ExportButton(review.JSON) // one JSON download, not two
	x.named["allowlist-editor"] = x.view.Editor().Entry()
	x.named["error-close"] = closeErr
	x.named["error-bar"] = x.errBar
	x.named["banner"] = x.view.Banner()
	x.setSource("")
}

func (x *App) buildWelcome() fyne.CanvasObject {
	logo := canvas.NewImageFromResource(assets.Icon)
	logo.FillMode = canvas.ImageFillContain
	logo.SetMinSize(fyne.NewSquareSize(96))
	title := widget.NewRichText(&widget.TextSegment{Text: "Review a diffgate report",
		Style: widget.RichTextStyle{SizeName: theme.SizeNameHeadingText, Alignment: fyne.TextAlignCenter, TextStyle: fyne.TextStyle{Bold: true}}})
	intro := widget.NewRichText(
		&widget.TextSegment{Text: "Open the report.json a CI job wrote with diffgate run --report: see what the script changed, " +
			"allow the expected changes and download the allowlist.", Style: widget.RichTextStyle{Alignment: fyne.TextAlignCenter}},
		&widget.TextSegment{Text: "The report is read and evaluated in this tab; nothing is uploaded.",
			Style: widget.RichTextStyle{Alignment: fyne.TextAlignCenter, ColorName: style.Muted}})
	intro.Wrapping = fyne.TextWrapWord
	x.welcomeOpen = widget.NewButtonWithIcon("Open report…", theme.FolderOpenIcon(), x.PickReport)
	x.welcomeOpen.Importance = widget.HighImportance
	x.welcomeCompare = widget.NewButtonWithIcon("Compare two snapshots…", theme.ContentCopyIcon(), x.ShowCompare)
	x.welcomeDemo = widget.NewButtonWithIcon("Try the demo report", theme.MediaPlayIcon(), x.OpenDemo)
	x.named["welcome-open"] = x.welcomeOpen
	hint := func(text string) fyne.CanvasObject {
		t := widget.NewRichText(&widget.TextSegment{Text: text, Style: widget.RichTextStyle{
			ColorName: style.Muted, SizeName: theme.SizeNameCaptionText, Alignment: fyne.TextAlignCenter}})
		t.Wrapping = fyne.TextWrapWord
		return t
	}
	buttons := container.NewGridWithColumns(3, x.welcomeOpen, x.welcomeCompare, x.welcomeDemo)
	card := container.NewVBox(
		container.NewCenter(logo),
		title,
		intro,
		widget.NewSeparator(),
		buttons,
		hint("…or drop a report.json anywhere on this page."),
		hint("Only have snapshots? Compare a BEFORE and an AFTER manifest (diffgate snapshot, or the seed's snapshot.py JSON) with an allowlist."),
		hint("Link a report from CI: add ?report=path/to/report.json (same site) to this page's address."),
	)
	x.welcomeBg = canvas.NewRectangle(nil)
	x.welcomeBg.CornerRadius = 12
	x.welcomeBg.StrokeWidth = 1
	padded := container.New(layout.NewCustomPaddedLayout(28, 28, 36, 36), card)
	return container.NewCenter(container.New(widthLayout{720}, container.NewStack(x.welcomeBg, padded)))
}

// applyTheme colors the app's own rectangles and texts for the current
// theme variant (the browser's light or dark preference).
func (x *App) applyTheme() {
	th := fyne.CurrentApp().Settings().Theme()
	c := func(n fyne.ThemeColorName) color.Color { return style.Color(th, n) }
	x.headerBg.FillColor = c(theme.ColorNameHeaderBackground)
	x.nameText.Color = c(theme.ColorNameForeground)
	x.downloadText.Color = c(style.Muted)
	x.errBg.FillColor = style.Tint(c(style.FailColor), 0x26)
	x.errBg.StrokeColor = style.Tint(c(style.FailColor), 0xb0)
	x.welcomeBg.FillColor = c(theme.ColorNameMenuBackground)
	x.welcomeBg.StrokeColor = c(theme.ColorNameSeparator)
	for _, o := range []fyne.CanvasObject{x.headerBg, x.nameText, x.downloadText, x.errBg, x.welcomeBg} {
		o.Refresh()
	}
}

// PickReport asks the browser for a report file and opens it.
func (x *App) PickReport() {
	x.host.PickFile(ReportAccept, func(name string, data []byte, err error) {
		x.do(func() {
			if err != nil {
				x.Fail(fmt.Sprintf("Could not read %s: %v", name, err))
				return
			}
			x.LoadReport(name, data)
		})
	})
}

// OpenDemo shows the bundled demo report.
func (x *App) OpenDemo() { x.Show("demo report", review.DemoReport()) }

// LoadReport parses data as a diffgate.report/v1 JSON report and shows it;
// anything else shows an error in the error bar and keeps what was shown.
// It must run on the UI goroutine.
func (x *App) LoadReport(name string, data []byte) {
	defer func() {
		// A report the view cannot show must not take the page down.
		if p := recover(); p != nil {
			x.Fail(fmt.Sprintf("Could not show %s: %v", name, p))
		}
	}()
	r, err := report.Parse(data)
	if err != nil {
		if errors.Is(err, report.ErrFormat) {
			if _, merr := snapshot.Parse(data); merr == nil {
				x.Fail(name + " is a snapshot manifest, not a report: use Compare snapshots… to compare two manifests")
				return
			}
		}
		x.Fail(fmt.Sprintf("Could not open %s: %v", name, err))
		return
	}
	x.Show(name, r)
}

// Show shows r under the name source. It must run on the UI goroutine.
func (x *App) Show(source string, r *report.Report) {
	x.setSource(source)
	x.view.SetReport(r)
	if len(x.body.Objects) != 1 || x.body.Objects[0] != x.view {
		x.body.Objects = []fyne.CanvasObject{x.view}
		x.body.Refresh()
	}
	x.downloads.Show()
	x.clearError()
	x.view.NextViolation(1)
	x.view.FocusChanges()
	x.updateTitle()
	x.publish()
}

// ShowError shows err in the error bar (and as window.diffgate.error).
func (x *App) ShowError(err error) { x.Fail(err.Error()) }

// Fail shows msg in the error bar (and as window.diffgate.error).
func (x *App) Fail(msg string) {
	x.errMsg = msg
	x.errText.Segments = []widget.RichTextSegment{
		&widget.TextSegment{Text: msg, Style: widget.RichTextStyle{TextStyle: fyne.TextStyle{Bold: true}, Inline: false}},
	}
	x.errText.Refresh()
	x.errBar.Show()
	x.setSource(x.source)
	x.content.Refresh()
	x.publish()
}

// Loading says in the header that name is being read.
func (x *App) Loading(name string) {
	x.sourceText.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: "Loading " + name + "…",
		Style: widget.RichTextStyle{ColorName: style.Muted, Inline: true}}}
	x.sourceText.Refresh()
}

// ClearError hides the error bar.
func (x *App) ClearError() {
	x.clearError()
	x.publish()
}

func (x *App) clearError() {
	x.errMsg = ""
	x.errBar.Hide()
	x.content.Refresh()
}

// Error is the message in the error bar ("" when hidden).
func (x *App) Error() string { return x.errMsg }

func (x *App) setSource(s string) {
	x.source = s
	if s == "" {
		x.sourceText.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: "review in the browser",
			Style: widget.RichTextStyle{ColorName: style.Muted, Inline: true}}}
	} else {
		x.sourceText.Segments = []widget.RichTextSegment{
			&widget.TextSegment{Text: s, Style: widget.RichTextStyle{TextStyle: fyne.TextStyle{Bold: true}, Inline: true}},
		}
	}
	x.sourceText.Refresh()
}

func (x *App) updateTitle() {
	r := x.view.Report()
	if r == nil {
		x.win.SetTitle("diffgate review")
		return
	}
	x.win.SetTitle(fmt.Sprintf("diffgate: %s %s", strings.ToUpper(r.Verdict), x.source))
}

// DownloadAllowlist downloads the draft allowlist as allowlist.txt.
func (x *App) DownloadAllowlist() {
	r := x.view.Report()
	if r == nil {
		return
	}
	data := AllowlistFile(x.source, r, x.view.Draft())
	if err := x.host.Download(AllowlistFileName, "text/plain;charset=utf-8", data); err != nil {
		x.Fail("Could not download the allowlist: " + err.Error())
	}
}

func (x *App) export(r *report.Report, f review.Format) {
	var buf bytes.Buffer
	if err := f.Write(r, &buf); err != nil {
		x.Fail("Could not export the report: " + err.Error())
		return
	}
	if err := x.host.Download(f.FileName(r), mimeType(f), buf.Bytes()); err != nil {
		x.Fail("Could not download the report: " + err.Error())
	}
}

// Status is the current status.
func (x *App) Status() Status {
	s := Status{Source: x.source, Error: x.errMsg, Compare: x.cmp != nil, Reasons: []string{}, Allowlist: []string{}}
	if r := x.view.Report(); r != nil {
		n := r.Count()
		s.Verdict = r.Verdict
		s.Reasons = append(s.Reasons, r.Reasons...)
		s.Added, s.Removed, s.Changed = n.Added, n.Removed, n.Changed
		s.Violations, s.Allowed, s.Risky = n.Violations, n.Allowed, n.Risky
		s.Allowlist = append(s.Allowlist, r.Allowlist...)
		if i := x.view.Selected(); i >= 0 && i < len(r.Changes) {
			s.Selected = r.Changes[i].Path
		}
	}
	return s
}

// Publish sends the status to the host if it changed; the js host calls it
// periodically to catch selection changes.
func (x *App) Publish() { x.publish() }

func (x *App) publish() {
	s := x.Status()
	s.Seq = x.last.Seq
	if x.published && equalStatus(s, x.last) {
		return
	}
	s.Seq++
	x.last = s
	x.published = true
	x.host.Publish(s)
}

func equalStatus(a, b Status) bool {
	return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b)
}

// mimeType is the media type of an export format.
func mimeType(f review.Format) string {
	switch f {
	case review.JSON:
		return "application/json"
	case review.HTML:
		return "text/html;charset=utf-8"
	case review.Markdown:
		return "text/markdown;charset=utf-8"
	}
	return "application/octet-stream"
}

// widthLayout gives its objects a fixed width and the height they need at
// that width (wrapped text grows taller as it gets narrower).
type widthLayout struct{ width float32 }

func (l widthLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

func (l widthLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	h := float32(0)
	for _, o := range objs {
		o.Resize(fyne.NewSize(l.width, o.MinSize().Height))
		h = max(h, o.MinSize().Height)
	}
	return fyne.NewSize(l.width, h)
}
