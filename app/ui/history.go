package ui

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/diffgate/diffgate/app/style"
	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/report"
)

// History is the seam between the app and the run history. core/history
// (SQLite, desktop only) implements it; its signatures use only core and
// standard types, so that package need not import the app. MemoryHistory is
// the stand-in used until then (and in tests).
type History interface {
	// Record stores a finished run and returns its id. res carries what a
	// history may keep besides the report: the script text, the kept
	// contents (res.Contents, may be nil) and the after-manifest (a hash
	// cache for the next run). A report opened from a file comes as
	// &gate.Result{Report: r}.
	Record(res *gate.Result) (id int64, err error)
	// Runs lists the ids of the most recent runs, newest first.
	Runs(limit int) ([]int64, error)
	// Report loads a stored run.
	Report(id int64) (*report.Report, error)
	// Approve saves allowlist as a new version of the run's workspace
	// allowlist, with the reviewer's note, as the decision on run id.
	Approve(id int64, allowlist []string, note string) error
	// Reject records that the reviewer rejected run id.
	Reject(id int64, note string) error
	// Allowlist returns the workspace's latest approved allowlist; nil (and
	// no error) when there is none.
	Allowlist(workspace string) ([]string, error)
}

// DecisionReader is optionally implemented by a History to show each run's
// decision ("approved", "rejected" or "") in the History tab.
type DecisionReader interface {
	Decision(id int64) (string, error)
}

// ErrNoRun is returned for an unknown run id.
var ErrNoRun = errors.New("no such run")

// MemoryHistory is an in-memory History: it lasts as long as the app.
type MemoryHistory struct {
	mu        sync.Mutex
	runs      []*memRun
	allowlist map[string][]string
}

type memRun struct {
	id       int64
	r        *report.Report
	decision string
	note     string
	at       time.Time
}

// NewMemoryHistory returns an empty history.
func NewMemoryHistory() *MemoryHistory {
	return &MemoryHistory{allowlist: map[string][]string{}}
}

// Record implements History.
func (h *MemoryHistory) Record(res *gate.Result) (int64, error) {
	if res == nil || res.Report == nil {
		return 0, errors.New("record: no report")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	id := int64(len(h.runs) + 1)
	h.runs = append(h.runs, &memRun{id: id, r: res.Report})
	return id, nil
}

// Runs implements History.
func (h *MemoryHistory) Runs(limit int) ([]int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ids []int64
	for i := len(h.runs) - 1; i >= 0 && (limit <= 0 || len(ids) < limit); i-- {
		ids = append(ids, h.runs[i].id)
	}
	return ids, nil
}

func (h *MemoryHistory) run(id int64) (*memRun, error) {
	if id < 1 || int(id) > len(h.runs) {
		return nil, fmt.Errorf("run %d: %w", id, ErrNoRun)
	}
	return h.runs[id-1], nil
}

// Report implements History.
func (h *MemoryHistory) Report(id int64) (*report.Report, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, err := h.run(id)
	if err != nil {
		return nil, err
	}
	return m.r, nil
}

// Approve implements History.
func (h *MemoryHistory) Approve(id int64, allowlist []string, note string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, err := h.run(id)
	if err != nil {
		return err
	}
	m.decision, m.note, m.at = "approved", note, time.Now()
	h.allowlist[m.r.Workspace] = append([]string{}, allowlist...)
	return nil
}

// Reject implements History.
func (h *MemoryHistory) Reject(id int64, note string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, err := h.run(id)
	if err != nil {
		return err
	}
	m.decision, m.note, m.at = "rejected", note, time.Now()
	return nil
}

// Allowlist implements History.
func (h *MemoryHistory) Allowlist(workspace string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok := h.allowlist[workspace]
	if !ok {
		return nil, nil
	}
	return append([]string{}, a...), nil
}

// Decision implements DecisionReader.
func (h *MemoryHistory) Decision(id int64) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, err := h.run(id)
	if err != nil {
		return "", err
	}
	return m.decision, nil
}

// historyTab lists past runs; selecting one opens it in the review tab.
type historyTab struct {
	hist   History
	open   func(id int64, r *report.Report)
	ids    []int64
	cache  map[int64]*report.Report
	list   *widget.List
	status *widget.Label
	root   fyne.CanvasObject
}

const historyLimit = 200

func newHistoryTab(h History, open func(int64, *report.Report)) *historyTab {
	t := &historyTab{hist: h, open: open, cache: map[int64]*report.Report{}}
	t.status = widget.NewLabel("")
	t.list = widget.NewList(func() int { return len(t.ids) }, newHistoryRow, t.updateRow)
	t.list.OnSelected = func(i widget.ListItemID) {
		if i < len(t.ids) {
			if r := t.load(t.ids[i]); r != nil {
				t.open(t.ids[i], r)
			}
		}
		t.list.UnselectAll()
	}
	refresh := widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), t.reload)
	refresh.Importance = widget.LowImportance
	title := widget.NewRichTextFromMarkdown("### Run history")
	t.root = container.NewBorder(container.NewBorder(nil, nil, nil, refresh, title), t.status, nil, nil, t.list)
	t.reload()
	return t
}

func (t *historyTab) reload() {
	ids, err := t.hist.Runs(historyLimit)
	if err != nil {
		t.status.SetText("Cannot read the history: " + err.Error())
		return
	}
	t.ids = ids
	t.cache = map[int64]*report.Report{}
	switch len(ids) {
	case 0:
		t.status.SetText("No runs yet. Runs you start in the Run tab are listed here.")
	default:
		t.status.SetText(fmt.Sprintf("%d runs. Select one to review it again.", len(ids)))
	}
	t.list.Refresh()
}

func (t *historyTab) load(id int64) *report.Report {
	if r, ok := t.cache[id]; ok {
		return r
	}
	r, err := t.hist.Report(id)
	if err != nil {
		t.status.SetText(err.Error())
		return nil
	}
	t.cache[id] = r
	return r
}

type historyRow struct {
	widget.BaseWidget
	box                                   fyne.CanvasObject
	verdict, when, what, counts, decision *widget.RichText
}

func newHistoryRow() fyne.CanvasObject {
	mk := func() *widget.RichText {
		return widget.NewRichText(&widget.TextSegment{Style: widget.RichTextStyleInline})
	}
	r := &historyRow{verdict: mk(), when: mk(), what: mk(), counts: mk(), decision: mk()}
	r.what.Truncation = fyne.TextTruncateEllipsis
	left := container.NewHBox(container.NewGridWrap(fyne.NewSize(60, 30), r.verdict), container.NewGridWrap(fyne.NewSize(150, 30), r.when))
	right := container.NewHBox(container.NewGridWrap(fyne.NewSize(240, 30), r.counts), container.NewGridWrap(fyne.NewSize(100, 30), r.decision))
	r.box = container.NewBorder(nil, nil, left, right, r.what)
	r.ExtendBaseWidget(r)
	return r
}

func (r *historyRow) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(r.box) }

func setSeg(t *widget.RichText, text string, c fyne.ThemeColorName, bold bool) {
	s := t.Segments[0].(*widget.TextSegment)
	s.Text, s.Style.ColorName, s.Style.TextStyle.Bold = text, c, bold
	t.Refresh()
}

func (t *historyTab) updateRow(i widget.ListItemID, o fyne.CanvasObject) {
	row := o.(*historyRow)
	if i >= len(t.ids) {
		return
	}
	id := t.ids[i]
	r := t.load(id)
	if r == nil {
		setSeg(row.what, fmt.Sprintf("run %d (unreadable)", id), style.Muted, false)
		return
	}
	setSeg(row.verdict, verdictWord(r.Verdict), style.VerdictColor(r.Verdict), true)
	setSeg(row.when, r.StartedAt.Local().Format("2006-01-02 15:04:05"), style.Muted, false)
	setSeg(row.what, filepath.Base(r.Script.Path)+"  in  "+r.Workspace, "", false)
	n := r.Count()
	counts := fmt.Sprintf("%d changes", len(r.Changes))
	if n.Violations > 0 {
		counts += fmt.Sprintf(", %d violations", n.Violations)
	}
	setSeg(row.counts, counts, style.Muted, false)
	dec := ""
	if d, ok := t.hist.(DecisionReader); ok {
		dec, _ = d.Decision(id)
	}
	c := fyne.ThemeColorName(style.Muted)
	switch dec {
	case "approved":
		c = style.PassColor
	case "rejected":
		c = style.FailColor
	}
	setSeg(row.decision, dec, c, dec != "")
}

func verdictWord(v string) string {
	if v == report.Pass {
		return "PASS"
	}
	return "FAIL"
}
