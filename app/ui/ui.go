// Package ui is the desktop window of diffgate: a Run tab that puts a script
// through the filesystem gate, a Review tab (app/review) and a History tab.
// Domain logic lives in core; this package only wires widgets to it.
package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/assets"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/report"
)

// Options configure the window.
type Options struct {
	Flags Flags
	Log   zerolog.Logger
	// History remembers runs and decisions; nil means a MemoryHistory.
	History History
	// Runner runs the gate; nil means gate.Run.
	Runner Runner
	// DemoDir is where the demo is copied ("" = the system temp dir).
	DemoDir string

	// do runs a function on the UI goroutine; fyne.Do unless a test
	// supplies its own event loop.
	do func(func())
}

// UI is the window's content and state.
type UI struct {
	// Tabs is the window content: Run, Review, History.
	Tabs *container.AppTabs

	app  fyne.App
	win  fyne.Window
	log  zerolog.Logger
	hist History
	opts Options

	run                              *runTab
	review                           *review.View
	reviewID                         int64
	history                          *historyTab
	runItem, reviewItem, historyItem *container.TabItem

	demoData *assets.Demo

	exitCode int
	do       func(func())
	// onRunDone, when set, is called after a run ends (screenshot mode).
	onRunDone func(r *report.Report, err error)
}

// Create builds the window and its content: it sets the theme and icon, the tabs,
// the shortcuts (Ctrl+R run, Alt+1..3 tabs) and the drop target, preloads
// the last workspace or the demo, and starts --screenshot or --report mode.
func Create(a fyne.App, w fyne.Window, opts Options) *UI {
	u := &UI{app: a, win: w, log: opts.Log, hist: opts.History, opts: opts, do: opts.do}
	if u.do == nil {
		u.do = fyne.Do
	}
	if u.hist == nil {
		u.hist = NewMemoryHistory()
	}
	runner := opts.Runner
	if runner == nil {
		runner = gate.Run
	}
	a.Settings().SetTheme(style.Theme{})
	a.SetIcon(assets.Icon)
	w.SetIcon(assets.Icon)

	u.run = newRunTab(u, runner)
	u.review = review.New(nil, review.Options{
		OnApprove:      u.approve,
		OnReject:       u.reject,
		Export:         u.export,
		OnDraftChanged: func([]string) { u.updateTitle() },
	})
	u.history = newHistoryTab(u.hist, u.openRun)

	u.runItem = container.NewTabItemWithIcon("Run", theme.MediaPlayIcon(), u.run.root)
	u.reviewItem = container.NewTabItemWithIcon("Review", theme.VisibilityIcon(), u.emptyReview())
	u.historyItem = container.NewTabItemWithIcon("History", theme.HistoryIcon(), u.history.root)
	u.Tabs = container.NewAppTabs(u.runItem, u.reviewItem, u.historyItem)
	u.Tabs.OnSelected = func(t *container.TabItem) {
		if t == u.historyItem {
			u.history.reload()
		}
	}

	u.shortcuts()
	w.SetOnDropped(func(_ fyne.Position, uris []fyne.URI) {
		u.Tabs.Select(u.runItem)
		u.run.dropped(uris)
	})
	a.Lifecycle().SetOnStopped(func() {
		if u.demoData != nil {
			u.demoData.Remove()
		}
	})

	w.SetContent(u.Tabs)
	w.Resize(fyne.NewSize(1400, 900))
	w.SetMaster()
	u.preload()
	return u
}

// ExitCode is the process exit status after the window closed (non-zero
// when --screenshot failed).
func (u *UI) ExitCode() int { return u.exitCode }

// Review is the review view.
func (u *UI) Review() *review.View { return u.review }

func (u *UI) emptyReview() fyne.CanvasObject {
	msg := widget.NewRichTextFromMarkdown("## Nothing to review yet\n\nRun a script in the **Run** tab, or open a past run in **History**.")
	return container.NewCenter(msg)
}

// demo makes a fresh copy of the bundled demo (a run changes the copy, so
// every "Load demo" starts clean) and removes the previous one.
func (u *UI) demo() (*assets.Demo, error) {
	d, err := assets.NewDemo(u.opts.DemoDir)
	if err != nil {
		return nil, err
	}
	if u.demoData != nil {
		u.demoData.Remove()
	}
	u.demoData = d
	return d, nil
}

// preload fills the Run tab: flags first, then the last used workspace and
// script, else the demo (a first-time user just presses Run).
func (u *UI) preload() {
	f := u.opts.Flags
	switch {
	case f.Screenshot != "":
		u.startScreenshot(f.Screenshot)
		return
	case f.Workspace != "" || f.Script != "":
		u.run.setInputs(f.Workspace, f.Script, nil)
	default:
		prefs := u.app.Preferences()
		ws, sc := first(prefs.StringList(prefWorkspaces)), first(prefs.StringList(prefScripts))
		if exists(ws) && exists(sc) {
			u.run.setInputs(ws, sc, nil)
		} else {
			u.run.loadDemo()
		}
	}
	if f.Report != "" {
		u.openReportFile(f.Report)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func exists(p string) bool {
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}

// openReportFile shows a JSON report from disk in the review tab.
func (u *UI) openReportFile(path string) {
	data, err := os.ReadFile(path)
	var r *report.Report
	if err == nil {
		r, err = report.Parse(data)
	}
	if err != nil {
		dialog.ShowError(err, u.win)
		return
	}
	u.reviewID = 0
	u.showReview(r)
}

// showResult records a finished run and opens it for review.
func (u *UI) showResult(res *gate.Result) {
	r := res.Report
	id, err := u.hist.Record(res)
	if err != nil {
		u.log.Warn().Err(err).Msg("record run in history")
	}
	u.reviewID = id
	u.showReview(r)
}

// openRun reopens a run from the history.
func (u *UI) openRun(id int64, r *report.Report) {
	u.reviewID = id
	u.showReview(r)
}

// updateTitle puts the verdict of the report under review in the title.
func (u *UI) updateTitle() {
	r := u.review.Report()
	if r == nil {
		u.win.SetTitle("diffgate")
		return
	}
	u.win.SetTitle(fmt.Sprintf("diffgate: %s %s", strings.ToUpper(r.Verdict), filepath.Base(r.Script.Path)))
}

func (u *UI) showReview(r *report.Report) {
	u.review.SetReport(r)
	u.updateTitle()
	if u.reviewItem.Content != u.review {
		u.reviewItem.Content = u.review
		u.Tabs.Refresh()
	}
	u.Tabs.Select(u.reviewItem)
	u.review.NextViolation(1)
	u.review.FocusChanges()
}

func (u *UI) approve(r *report.Report, allowlist []string, note string) error {
	if u.reviewID == 0 {
		id, err := u.hist.Record(&gate.Result{Report: r})
		if err != nil {
			return err
		}
		u.reviewID = id
	}
	if err := u.hist.Approve(u.reviewID, allowlist, note); err != nil {
		return err
	}
	// The next run of this workspace starts from the approved allowlist.
	if abs, _ := filepath.Abs(u.run.workspace.Text); abs == r.Workspace {
		u.run.allow.SetEntries(allowlist)
		u.run.setAllowHint("The allowlist you approved for this workspace.")
	}
	return nil
}

func (u *UI) reject(r *report.Report, note string) error {
	if u.reviewID == 0 {
		id, err := u.hist.Record(&gate.Result{Report: r})
		if err != nil {
			return err
		}
		u.reviewID = id
	}
	return u.hist.Reject(u.reviewID, note)
}

func (u *UI) export(r *report.Report, f review.Format) {
	saveFile(u.win, f.FileName(r), string(f), "Export report as "+f.Label(), func(path string) error {
		file, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := f.Write(r, file); err != nil {
			file.Close()
			return err
		}
		return file.Close()
	})
}

// shortcuts: Ctrl+R runs, Alt+1..3 switch tabs; keys no widget claims go
// to the review view (up/down, n/p, Enter) while it is shown.
func (u *UI) shortcuts() {
	c := u.win.Canvas()
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyR, Modifier: fyne.KeyModifierShortcutDefault}, func(fyne.Shortcut) {
		u.Tabs.Select(u.runItem)
		u.run.start()
	})
	for i, item := range []*container.TabItem{u.runItem, u.reviewItem, u.historyItem} {
		item := item
		c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.Key1 + fyne.KeyName(rune(i)), Modifier: fyne.KeyModifierAlt}, func(fyne.Shortcut) {
			u.Tabs.Select(item)
		})
	}
	c.SetOnTypedKey(func(ev *fyne.KeyEvent) {
		if u.Tabs.Selected() == u.reviewItem && u.reviewItem.Content == u.review {
			u.review.TypedKey(ev)
		}
	})
	c.SetOnTypedRune(func(r rune) {
		if u.Tabs.Selected() == u.reviewItem && u.reviewItem.Content == u.review {
			u.review.TypedRune(r)
		}
	})
}

// framed draws o on the input background with a rounded border.
func framed(o fyne.CanvasObject) fyne.CanvasObject {
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	bg.CornerRadius = theme.InputRadiusSize()
	return container.NewStack(bg, container.NewPadded(o))
}

// callout is a tinted box with an accent color.
func callout(o fyne.CanvasObject, c fyne.ThemeColorName) fyne.CanvasObject {
	bg := canvas.NewRectangle(style.Tint(theme.Color(c), 0x22))
	bg.CornerRadius = 6
	bg.StrokeColor = style.Tint(theme.Color(c), 0x80)
	bg.StrokeWidth = 1
	return container.NewStack(bg, container.NewPadded(o))
}

func newFormLayout() fyne.Layout { return layout.NewFormLayout() }
