// Package ui is the desktop window of diffgate: a Run tab that puts a script
// through the filesystem gate, a Review tab (app/review) and a History tab.
// Domain logic lives in core; this package only wires widgets to it.
package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/app/keys"
	"github.com/diffgate/diffgate/app/review"
	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/assets"
	"github.com/diffgate/diffgate/core/history"
	"github.com/diffgate/diffgate/core/pipeline"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/oneline"
)

// Options configure the window.
type Options struct {
	Flags Flags
	Log   zerolog.Logger
	// DBPath is the history database; "" means history.DefaultPath()
	// ($DIFFGATE_DB, else the user's configuration directory). When it
	// cannot be opened the app says so and works without history.
	DBPath string
	// Runner runs the gate; nil means pipeline.GateRun.
	Runner Runner
	// DemoDir is where the demo is copied ("" = the system temp dir).
	DemoDir string
	// StageBase holds the stages of staged runs ("" = the user's cache
	// directory, as for the CLI).
	StageBase string
	// StageMechanism forces a staged run's mechanism (pipeline.StageOverlay or
	// pipeline.StageCopy; "" probes), as run --stage-mechanism does.
	StageMechanism pipeline.StageMechanism
	// Granularity is the timestamp granularity the snapshots assume for
	// hash reuse (0: the default, 2 s); tests make it small rather than
	// wait for their files to age.
	Granularity time.Duration
	// ScreenSize, called on the main thread once the app has started,
	// is the usable area of the screen the window opens on, in pixels
	// (zero when unknown); the window is fitted to it (WindowSize). Nil
	// keeps a size that fits the smallest supported screen, 1024×700.
	ScreenSize func() fyne.Size

	// do runs a function on the UI goroutine; fyne.Do unless a test
	// supplies its own event loop.
	do func(func())
	// folderOpener is the command that shows a folder in the file
	// manager; nil means the platform's (xdg-open, open, explorer).
	folderOpener func(dir string) *exec.Cmd
}

// UI is the window's content and state.
type UI struct {
	// Tabs is the window content: Run, Review, History.
	Tabs *container.AppTabs

	app  fyne.App
	win  fyne.Window
	log  zerolog.Logger
	opts Options
	// hist is the run history; nil when it could not be opened (histErr
	// says why) and the app works without it.
	hist       *History
	histErr    error
	notice     *fyne.Container
	noticeText string
	closed     bool

	run                              *runTab
	review                           *review.View
	reviewID                         int64
	history                          *historyTab
	runItem, reviewItem, historyItem *container.TabItem

	demoData *assets.Demo
	// demoRuns are the staged runs of the demo's copy: their stages are
	// discarded (and recorded so) when the copy goes, so no demo run waits
	// in the History to be applied to a folder that is gone.
	demoRuns []int64
	// contents are the sources of the reviewed report's contents (Load
	// full diff).
	contents contentsPtr

	keys  *keys.Map
	openN int           // generation of the report being opened
	sheet dialog.Dialog // the cheat sheet while it is open

	exitCode int
	do       func(func())
	// onRunDone, when set, is called after a run ends (screenshot mode).
	onRunDone func(r *report.Report, err error)
}

// Create builds the window and its content: it sets the theme and icon, the
// tabs, the menu and the keys (keys.go: Ctrl+R run, Ctrl+O open a report,
// Alt+1..3 tabs, ? the cheat sheet, from every field) and the drop target,
// preloads the last workspace or the demo, and starts --screenshot or
// --report mode.
func Create(a fyne.App, w fyne.Window, opts Options) *UI {
	u := &UI{app: a, win: w, log: opts.Log, opts: opts, do: opts.do}
	if u.do == nil {
		u.do = fyne.Do
	}
	u.hist, u.histErr = OpenHistory(opts.DBPath, opts.Log)
	if u.histErr != nil {
		u.log.Warn().Err(u.histErr).Msg("history unavailable")
	}
	runner := opts.Runner
	if runner == nil {
		runner = pipeline.GateRun
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
		OnApply:        u.applyStage,
		OnDiscard:      u.discardStage,
		OpenFolder:     u.openFolder,
		LoadContents:   u.loadContents,
		Do:             u.do,
		OnViewed:       u.viewed,
		BannerAction:   u.rerunButton,
	})
	u.history = newHistoryTab(u)

	u.runItem = container.NewTabItemWithIcon("Run", theme.MediaPlayIcon(), u.run.root)
	u.reviewItem = container.NewTabItemWithIcon("Review", theme.VisibilityIcon(), u.emptyReview())
	u.historyItem = container.NewTabItemWithIcon("History", theme.HistoryIcon(), u.history.root)
	u.Tabs = container.NewAppTabs(u.runItem, u.reviewItem, u.historyItem)
	u.Tabs.OnSelected = func(t *container.TabItem) {
		if t == u.historyItem {
			u.history.refresh()
		}
	}

	u.keys = u.keyMap()
	u.keys.Install(w.Canvas())
	w.SetMainMenu(u.mainMenu())
	w.SetOnDropped(func(_ fyne.Position, uris []fyne.URI) { u.dropped(uris) })
	a.Lifecycle().SetOnStopped(u.Close)

	u.notice = container.NewVBox()
	if u.histErr != nil {
		u.showNotice("History unavailable: " + oneline.Flat(u.histErr.Error()) + ". Runs are not recorded until this is fixed; the file was left as it is.")
	}
	w.SetContent(container.NewBorder(u.notice, nil, nil, nil, u.Tabs))
	w.Resize(WindowSize(fyne.Size{})) // fitted to the screen once started (fitScreen)
	a.Lifecycle().SetOnStarted(u.fitScreen)
	w.SetMaster()
	u.preload()
	return u
}

// fitScreen sizes the window to the screen it opens on (Options.ScreenSize).
func (u *UI) fitScreen() {
	if u.opts.ScreenSize == nil {
		return
	}
	px := u.opts.ScreenSize()
	scale := u.win.Canvas().Scale()
	if scale <= 0 {
		scale = 1
	}
	u.win.Resize(WindowSize(fyne.NewSize(px.Width/scale, px.Height/scale)))
}

// Close releases what the window holds: the history database and the
// demo copy. The app calls it when it stops.
func (u *UI) Close() {
	if u.closed {
		return
	}
	u.closed = true
	keys.Uninstall(u.win.Canvas())
	u.discardDemoRuns() // while the history is open
	if u.hist != nil {
		if err := u.hist.Close(); err != nil {
			u.log.Warn().Err(err).Msg("close history")
		}
	}
	if u.demoData != nil {
		u.demoData.Remove()
	}
}

// HistoryError is why the history is unavailable (nil when it is open).
func (u *UI) HistoryError() error { return u.histErr }

// Notice is the message shown above the tabs ("" when none).
func (u *UI) Notice() string {
	if len(u.notice.Objects) == 0 {
		return ""
	}
	return u.noticeText
}

// showNotice shows a warning strip above the tabs, with a close button.
func (u *UI) showNotice(text string) {
	u.noticeText = text
	msg := widget.NewLabel(text)
	msg.Wrapping = fyne.TextWrapWord
	msg.Importance = widget.WarningImportance
	msg.TextStyle.Bold = true
	closeBtn := widget.NewButtonWithIcon("", theme.WindowCloseIcon(), func() {
		u.notice.Objects = nil
		u.notice.Refresh()
	})
	closeBtn.Importance = widget.LowImportance
	icon := widget.NewIcon(style.Colored(theme.WarningIcon(), theme.ColorNameWarning))
	row := container.NewBorder(nil, nil, container.NewCenter(icon), container.NewCenter(closeBtn), msg)
	u.notice.Objects = []fyne.CanvasObject{container.NewPadded(callout(row, theme.ColorNameWarning))}
	u.notice.Refresh()
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

// demoDiscardTimeout bounds the discard of the demo's stages on exit.
const demoDiscardTimeout = 10 * time.Second

// discardDemoRuns discards the stages of the demo runs still pending, on
// the UI goroutine (at exit, or when a fresh copy replaces the demo).
func (u *UI) discardDemoRuns() {
	runs := u.demoRuns
	u.demoRuns = nil
	if u.hist == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), demoDiscardTimeout)
	defer cancel()
	for _, id := range runs {
		if err := pipeline.Discard(ctx, u.hist.db, id, u.opts.StageBase); err != nil {
			u.log.Debug().Err(err).Int64("run", id).Msg("demo stage") // applied or discarded by the reviewer
		}
	}
}

// isDemoWorkspace reports whether ws is a copy of the bundled demo.
func isDemoWorkspace(ws string) bool {
	return filepath.Base(ws) == "workspace" && strings.HasPrefix(filepath.Base(filepath.Dir(ws)), "diffgate-demo-")
}

// demo makes a fresh copy of the bundled demo (a run changes the copy, so
// every "Load demo" starts clean) and removes the previous one.
func (u *UI) demo() (*assets.Demo, error) {
	d, err := assets.NewDemo(u.opts.DemoDir)
	if err != nil {
		return nil, err
	}
	if u.demoData != nil {
		u.discardDemoRuns()
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

// showResult opens a finished run (recorded in the history as run id, 0
// when it was not) for review.
func (u *UI) showResult(res *pipeline.GateResult, id int64) {
	u.reviewID = id
	if id > 0 && res.Report.Stage != nil && u.demoData != nil && res.Report.Workspace == u.demoData.Workspace {
		u.demoRuns = append(u.demoRuns, id)
	}
	u.contentsFor(res.Report, res)
	u.showReview(res.Report)
	if u.history != nil {
		u.history.refresh()
	}
}

// viewed keeps the reviewer's viewed marks with the run under review in
// the history (a report opened from a file keeps them for the session).
func (u *UI) viewed(_ *report.Report, paths []string, on bool) {
	if u.hist == nil || u.reviewID == 0 {
		return
	}
	id := u.reviewID
	u.hist.SetViewedLater(id, paths, on, func(err error) {
		u.log.Warn().Err(err).Int64("run", id).Msg("save viewed marks")
		u.do(func() {
			u.showNotice("Viewed marks of run " + fmt.Sprint(id) + " not saved: " + oneline.Flat(err.Error()) + ".")
		})
	})
}

// decisionText describes a run's latest review decision.
func decisionText(run *history.Run) (string, fyne.ThemeColorName) {
	when := run.DecidedAt.Local().Format("2006-01-02 15:04")
	var text string
	var c fyne.ThemeColorName
	switch run.Decision {
	case history.Approve:
		text, c = "Approved on "+when, style.PassColor
		if run.ApprovedVersion > 0 {
			text += fmt.Sprintf(", allowlist version %d", run.ApprovedVersion)
		}
	case history.Reject:
		text, c = "Rejected on "+when, style.FailColor
	default:
		return "", ""
	}
	if run.DecisionNote != "" {
		text += ": " + run.DecisionNote
	} else {
		text += "."
	}
	return text, c
}

func errNoHistory(cause error) error {
	if cause == nil {
		return errors.New("the history is unavailable")
	}
	return fmt.Errorf("the history is unavailable (%s)", oneline.Flat(cause.Error()))
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
	if rc := u.contents.Load(); rc == nil || rc.r != r {
		u.contentsFor(r, nil) // reopened from the history or a file
	}
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

// approve saves the reviewed allowlist as the workspace's next version
// and records the approval on the run under review.
func (u *UI) approve(r *report.Report, allowlist []string, note string) error {
	if u.hist == nil {
		u.run.approved(r.Workspace, allowlist, nil)
		u.review.SetDecision("Approved for this session only: "+errNoHistory(u.histErr).Error()+", so nothing was saved.", theme.ColorNameWarning)
		return nil
	}
	al, err := u.hist.Approve(u.reviewID, r.Workspace, allowlist, note)
	if al != nil {
		// The next run of this workspace starts from the approved allowlist.
		u.run.approved(r.Workspace, allowlist, al)
		u.history.refresh()
	}
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Approved: allowlist version %d of this workspace saved (%s).", al.Version, count.Of(len(allowlist), "entry"))
	if u.reviewID == 0 {
		msg += " The report itself is not in the history (it was opened from a file)."
	}
	u.review.SetDecision(msg, style.PassColor)
	return nil
}

// reject records that the reviewer rejected the run under review.
func (u *UI) reject(r *report.Report, note string) error {
	switch {
	case u.hist == nil:
		u.review.SetDecision("Rejected, for this session only: "+errNoHistory(u.histErr).Error()+".", theme.ColorNameWarning)
		return nil
	case u.reviewID == 0:
		u.review.SetDecision("Rejected. Not recorded: this report was opened from a file and is not in the history.", theme.ColorNameWarning)
		return nil
	}
	if err := u.hist.Reject(u.reviewID, note); err != nil {
		return err
	}
	u.review.SetDecision(fmt.Sprintf("Rejected: recorded on run %d.", u.reviewID), style.FailColor)
	u.history.refresh()
	return nil
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
