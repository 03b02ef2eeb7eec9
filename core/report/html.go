package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/textdiff"
	"github.com/diffgate/diffgate/internal/quote"
)

// The HTML report's colours (light scheme). The stylesheet takes them from
// here, and the browser test looks for these exact colours in a screenshot.
const (
	colorPass       = "#1a7f37" // banner of a passing report
	colorFail       = "#cf222e" // banner of a failing report
	colorAddedRow   = "#dafbe1" // background of a violating added row
	colorRemovedRow = "#ffebe9" // background of a violating removed row
	colorChangedRow = "#fff8c5" // background of a violating changed row
	colorAllowedRow = "#f6f8fa" // background of an allowed row (any kind)
	colorDiffAdd    = "#ccffd8" // a "+" line of a text diff
	colorDiffDel    = "#ffd7d5" // a "-" line of a text diff
	colorBlockedRow = "#fbefff" // background of a blocked action's row
	colorOutsideRow = "#fff1e5" // background of a change outside the workspace
	colorAddWord    = "#8ce99a" // the changed words of a "+" line
	colorDelWord    = "#ffa19a" // the changed words of a "-" line
)

// palette is the set of colours the stylesheet uses, as CSS custom
// properties (--name: value).
type palette [][2]string

var lightPalette = palette{
	{"bg", "#ffffff"}, {"surface", "#f6f8fa"}, {"text", "#1f2328"}, {"muted", "#59636e"},
	{"border", "#d1d9e0"}, {"pass", colorPass}, {"fail", colorFail}, {"on-banner", "#ffffff"},
	{"added-row", colorAddedRow}, {"added-accent", "#1a7f37"},
	{"removed-row", colorRemovedRow}, {"removed-accent", "#cf222e"},
	{"changed-row", colorChangedRow}, {"changed-accent", "#9a6700"},
	{"allowed-row", colorAllowedRow}, {"allowed-text", "#59636e"},
	{"diff-add", colorDiffAdd}, {"diff-del", colorDiffDel}, {"diff-add-word", colorAddWord}, {"diff-del-word", colorDelWord}, {"diff-hunk", "#ddf4ff"}, {"diff-meta", "#eaeef2"},
	{"risk", "#bc4c00"}, {"code-bg", "#f6f8fa"}, {"badge-bg", "#eaeef2"},
	{"blocked-row", colorBlockedRow}, {"blocked-accent", "#8250df"},
	{"outside-row", colorOutsideRow}, {"outside-accent", "#bc4c00"},
}

var darkPalette = palette{
	{"bg", "#0d1117"}, {"surface", "#151b23"}, {"text", "#e6edf3"}, {"muted", "#9198a1"},
	{"border", "#3d444d"}, {"pass", "#238636"}, {"fail", "#da3633"}, {"on-banner", "#ffffff"},
	{"added-row", "#12301d"}, {"added-accent", "#3fb950"},
	{"removed-row", "#3a1619"}, {"removed-accent", "#f85149"},
	{"changed-row", "#33290f"}, {"changed-accent", "#d29922"},
	{"allowed-row", "#151b23"}, {"allowed-text", "#9198a1"},
	{"diff-add", "#1a4a29"}, {"diff-del", "#5c1e22"}, {"diff-add-word", "#2b7a3f"}, {"diff-del-word", "#9c2f35"}, {"diff-hunk", "#0c2d6b"}, {"diff-meta", "#262c36"},
	{"risk", "#db6d28"}, {"code-bg", "#151b23"}, {"badge-bg", "#262c36"},
	{"blocked-row", "#2a1d45"}, {"blocked-accent", "#a371f7"},
	{"outside-row", "#3a220f"}, {"outside-accent", "#db6d28"},
}

func (p palette) css() string {
	var b strings.Builder
	for _, kv := range p {
		fmt.Fprintf(&b, "--%s:%s;", kv[0], kv[1])
	}
	return b.String()
}

// Bounds of the HTML report's diffs, so that a 5,000-change run stays a page
// a browser opens at once (see docs/reports.md: a few MiB).
const (
	htmlAddedLines = 10       // lines an added file's content shows
	htmlDiffMax    = 16 << 10 // one diff, at most (CutDiff: the first hunks)
	htmlDiffBudget = 2 << 20  // all diffs together; violations' first
	// htmlDetailed is how many changes (violations first) show their
	// metadata and diff; the rest are one row each, so that the page of a
	// 5,000-change run stays small enough to open at once.
	htmlDetailed = 500
)

//go:embed report.css
var reportCSS string

//go:embed report.html.tmpl
var reportTemplate string

// htmlTmpl parses the page's template on first use: every diffgate
// process (the supervisor of a contained run too) would otherwise pay for
// it at start.
var htmlTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{"chunks": chunks}).Parse(reportTemplate))
})

// htmlChunk is one table of a list of changes. A long list is split into
// tables of htmlChunkSize changes, each in a block the browser lays out only
// when it comes into view (content-visibility: auto), so that the page of a
// 5,000-change run opens at once. Height estimates the block's height until
// it is laid out (contain-intrinsic-size).
type htmlChunk struct {
	Rows        []htmlRow
	First, Last bool
	Height      int
	// Rule and Risk say whether the list has these columns: one that
	// would be empty in every row is left out. Cols counts the columns.
	Rule, Risk bool
	Cols       int
}

// htmlChunkSize is the number of changes in one table of the HTML report.
const htmlChunkSize = 40

// htmlRow is one change of a chunk. A detailed change is a <tbody> of its
// own (its row and the row of its metadata and diff, filtered together); a
// run of brief changes (one row each) shares one <tbody class="brief">,
// opened at RunStart and closed at RunEnd, so that the thousands of brief
// rows of a long list cost the browser a row element each and no more.
type htmlRow struct {
	*htmlChange
	RunStart, RunEnd bool
}

// chunks splits cs into htmlChunks.
func chunks(cs []htmlChange) []htmlChunk {
	var out []htmlChunk
	rule, risk := false, false
	for i := range cs {
		rule = rule || cs[i].Rule != ""
		risk = risk || cs[i].Risk != ""
	}
	cols := 3
	for _, on := range []bool{rule, risk} {
		if on {
			cols++
		}
	}
	for i := 0; i < len(cs); i += htmlChunkSize {
		c := htmlChunk{Rows: chunkRows(cs[i:min(i+htmlChunkSize, len(cs))]), First: i == 0, Last: i+htmlChunkSize >= len(cs),
			Rule: rule, Risk: risk, Cols: cols}
		for _, r := range c.Rows {
			c.Height += r.height()
		}
		out = append(out, c)
	}
	return out
}

// chunkRows makes the rows of one chunk, marking where each run of brief
// changes starts and ends.
func chunkRows(cs []htmlChange) []htmlRow {
	rows := make([]htmlRow, len(cs))
	for i := range cs {
		brief := cs[i].Brief
		rows[i] = htmlRow{htmlChange: &cs[i],
			RunStart: brief && (i == 0 || !cs[i-1].Brief),
			RunEnd:   brief && (i == len(cs)-1 || !cs[i+1].Brief)}
	}
	return rows
}

// height estimates the height of a change's rows in pixels.
func (h *htmlChange) height() int {
	px := 40
	if h.Brief {
		return px
	}
	px += 28
	switch {
	case h.Diff != "" && h.DiffOpen:
		px += 30 + 18*h.DiffLines
	case h.Diff != "":
		px += 26
	case h.DiffNote != "":
		px += 22
	}
	return px
}

// stylesheet is the report's complete CSS: the palettes, then report.css.
var stylesheet = template.CSS(":root{color-scheme:light dark;" + lightPalette.css() + "}\n" +
	"@media (prefers-color-scheme: dark){:root{" + darkPalette.css() + "}}\n" + reportCSS)

// WriteHTML writes the report as one self-contained HTML page (inline CSS,
// no scripts, no external assets): a PASS/FAIL banner (id "verdict", class
// "banner pass" or "banner fail") with the reasons and counts, the run's
// summary, the blocked actions and changes outside the workspace, the
// violations and then the allowed changes as colour-coded rows (long lists
// with folders rolled up into one row each: RollUpList)
// (class "row added|removed|changed", plus "allowed"; attributes data-kind
// and data-allowed) each with its before/after metadata and text diff (the
// changed words of each edited line marked, changed whitespace shown) in
// folds that open and close with CSS only (a checkbox and its label, no
// <details>: see report.css), and the process: its status, leftovers and
// output. It follows the reader's light or dark colour scheme; the filters
// use CSS only (sibling selectors, no :has()). Long lists of changes are
// split into tables that the browser lays out only when they come into
// view, and brief rows share a <tbody>, so that a 5,000-change page opens
// at once.
func (r *Report) WriteHTML(w io.Writer) error {
	return htmlTmpl().Execute(w, r.htmlView())
}

type htmlView struct {
	Title     string
	CSS       template.CSS
	Pass      bool
	Reasons   []string
	Counts    Counts
	Workspace string
	Script    string
	SHA256    string
	Args      []string
	Allowlist []string
	Started   string
	Finished  string
	Duration  string
	Status    string
	StatusOK  bool
	Leftovers []Leftover
	// Stage is the stage line of a staged run.
	Stage string
	// Contain is the containment line, ContainOK false when not contained.
	Contain   string
	ContainOK bool
	// Granted is what the run was granted (containment.grants), DroppedEnv
	// the variables it dropped; "" when none.
	Granted, DroppedEnv string
	// Blocking is set when containment was requested: the blocked actions
	// are a group of their own (Blocked), or BlockedNote says they could
	// not be observed.
	Blocking    bool
	BlockedNote string
	Blocked     []htmlBlocked
	// BlockedDropped says how many blocked actions, by kind, are beyond
	// the list's bound ("" for none).
	BlockedDropped string
	// Watching is set when paths outside the workspace were watched: the
	// changes there (Outside), the watch's summary and what it could not
	// watch.
	Watching bool
	Watch    string
	Outside  []htmlOutside
	// NetworkLine and Network are the requests through the gate's proxy
	// (--net-allow); NetworkDropped counts those beyond the list's bound.
	NetworkLine    string
	Network        []htmlNetwork
	NetworkDropped int
	Unwatchable    []Unwatchable
	// Violations and Allowed are the rows of the changes (a rolled-up
	// folder is one row: RollUpList), ViolationCount and AllowedCount
	// count the changes.
	Violations     []htmlChange
	Unreadable     []diff.Unknown
	Allowed        []htmlChange
	ViolationCount int
	AllowedCount   int
	Stdout         string
	Stderr         string
	// StdoutLong and StderrLong say the output fills its box (outputLong).
	StdoutLong, StderrLong bool
	Schema                 string
	Review                 *htmlReview
	// Brief counts the changes shown as one row only (past htmlDetailed).
	Brief int
	// Diffs says how many content changes have a text diff and why the
	// others do not ("" when all do).
	Diffs string
}

// htmlReview is the report's Review, shown in a section of its own.
type htmlReview struct {
	Decision   string
	Note       string
	Verdict    string
	Pass       bool
	Reasons    []string
	Allowlist  []string
	Violations int
}

type htmlChange struct {
	ID      string
	Kind    string
	Label   string
	Path    string
	Detail  string
	Rule    string
	Risk    string
	Allowed bool
	Aspects string
	Summary string
	Meta    []MetaRow
	// Diff is the text diff as HTML (diffHTML), DiffLines its lines.
	Diff      template.HTML
	DiffLines int
	DiffLabel string
	DiffNote  string
	DiffOpen  bool
	// Brief leaves out the metadata and the diff (past htmlDetailed, or
	// a rolled-up folder).
	Brief bool
	// Folder is set for a rolled-up folder's row: Path is the folder,
	// Detail its counts, Rule up to 3 of its rules.
	Folder bool
}

// htmlBlocked is one blocked action's row.
type htmlBlocked struct {
	Kind, Label, Target, Process, Op string
	Count                            int
}

// htmlNetwork is one request through the proxy's row.
type htmlNetwork struct {
	Method, Target, Out, In, Process, Reason string
	Allowed                                  bool
}

// htmlOutside is one change outside the workspace's row.
type htmlOutside struct {
	Kind, Label, Path, Detail string
}

func (r *Report) htmlView() *htmlView {
	v := &htmlView{
		Pass:      r.Verdict == Pass,
		Reasons:   cleanAll(r.Reasons),
		Counts:    r.Count(),
		CSS:       stylesheet,
		Workspace: quote.Path(r.Workspace),
		Script:    quote.Path(r.Script.Path),
		SHA256:    r.Script.SHA256,
		Args:      quoteAll(r.Script.Args),
		Allowlist: quoteAll(r.Allowlist),
		Started:   fmtTime(r.StartedAt),
		Finished:  fmtTime(r.FinishedAt),
		Duration:  r.duration(),
		Status:    ProcessStatus(&r.Process),
		StatusOK:  processOK(&r.Process),
		Stdout:    outputText(r.Process.StdoutHead, r.Process.StdoutTail),
		Stderr:    outputText(r.Process.StderrHead, r.Process.StderrTail),
		Schema:    Schema,
		Diffs:     r.DiffCoverage().Summary(),
	}
	verdict := "FAIL"
	if v.Pass {
		verdict = "PASS"
	}
	v.StdoutLong, v.StderrLong = outputLong(v.Stdout), outputLong(v.Stderr)
	v.Title = "diffgate " + verdict + ": " + v.Workspace
	v.Review = r.htmlReview()
	v.addRun(r)
	v.addBlocked(r)
	v.addOutside(r)
	v.addNetwork(r)
	violations, allowed := r.splitChanges()
	v.ViolationCount, v.AllowedCount = len(violations), len(allowed)
	l := htmlLister{budget: htmlDiffBudget, notes: r.renameNotes()}
	v.Violations = l.list(violations)
	v.Allowed = l.list(allowed)
	v.Brief = max(0, l.n-htmlDetailed)
	return v
}

// outputLines is the number of lines of output that fill its box in the
// HTML (pre.output, at most 420 px high): a longer output ("long") is laid
// out only when it comes into view, as its box's height is known.
const outputLines = 24

// outputLong says whether out has more than outputLines lines.
func outputLong(out string) bool {
	return strings.Count(out, "\n") > outputLines
}

// htmlReview is the view of the reviewer's draft, nil for none.
func (r *Report) htmlReview() *htmlReview {
	rv := r.Review
	if rv == nil {
		return nil
	}
	h := &htmlReview{Decision: rv.Decision, Note: quote.Clean(rv.Note), Pass: rv.Verdict == Pass,
		Reasons: cleanAll(rv.Reasons), Allowlist: quoteAll(rv.Allowlist), Violations: rv.Violations}
	h.Verdict = "FAIL"
	if h.Pass {
		h.Verdict = "PASS"
	}
	return h
}

// addRun adds how the run went: its stage and containment lines, the
// processes left over and the entries the gate could not read.
func (v *htmlView) addRun(r *Report) {
	if st := r.Stage; st != nil {
		v.Stage = quote.Clean(st.Summary())
	}
	if c := r.Containment; c != nil {
		v.Contain, v.ContainOK = quote.Clean(c.Summary()), len(c.Missing()) == 0 && c.Mode != "off"
		v.Granted = quote.Clean(strings.TrimPrefix(c.GrantsLine(), "granted: "))
		v.DroppedEnv = quote.Clean(strings.Join(c.DroppedEnv, ", "))
	}
	for _, l := range r.Process.Leftovers {
		v.Leftovers = append(v.Leftovers, Leftover{PID: l.PID, Cmd: quote.Clean(l.Cmd)})
	}
	for _, u := range r.Unreadable {
		u.Path, u.Reason = quote.Path(u.Path), quote.Clean(u.Reason)
		v.Unreadable = append(v.Unreadable, u)
	}
}

// addBlocked adds the actions containment blocked (when it was requested,
// or some were recorded).
func (v *htmlView) addBlocked(r *Report) {
	if c := r.Containment; c != nil && c.Mode != "" && c.Mode != "off" || len(r.Blocked) > 0 {
		v.Blocking, v.BlockedNote = true, quote.Clean(r.Containment.NotObservable())
	}
	v.BlockedDropped = r.BlockedDroppedNote()
	for i := range r.Blocked {
		b := &r.Blocked[i]
		v.Blocked = append(v.Blocked, htmlBlocked{Kind: quote.Clean(b.Kind), Label: strings.ToUpper(quote.Clean(b.Kind)), Target: quote.Path(b.Target),
			Process: blockedProcess(b), Op: quote.Clean(b.Op), Count: max(b.Count, 1)})
	}
}

// addOutside adds the watch of the paths outside the workspace and the
// changes found there.
func (v *htmlView) addOutside(r *Report) {
	if w := r.Watch; w != nil || len(r.Outside) > 0 {
		v.Watching, v.Watch = true, quote.Clean(w.Summary())
		if w != nil {
			for _, u := range w.Unwatchable {
				v.Unwatchable = append(v.Unwatchable, Unwatchable{Path: quote.Path(u.Path), Reason: quote.Clean(u.Reason)})
			}
		}
	}
	for i := range r.Outside {
		o := &r.Outside[i]
		v.Outside = append(v.Outside, htmlOutside{Kind: string(o.Kind), Label: kindLabel(o.Kind),
			Path: quote.Path(o.Path), Detail: quote.Clean(o.Detail())})
	}
}

// addNetwork adds the requests through the gate's proxy.
func (v *htmlView) addNetwork(r *Report) {
	v.NetworkLine, v.NetworkDropped = quote.Clean(r.NetworkSummary()), r.NetworkDropped
	for i := range r.Network {
		q := &r.Network[i]
		v.Network = append(v.Network, htmlNetwork{Method: quote.Clean(q.Method), Target: quote.Path(q.Target()), Out: Size(q.BytesOut), In: Size(q.BytesIn),
			Process: blockedProcess(&Blocked{PID: q.PID, Cmd: q.Cmd}), Reason: quote.Clean(q.Reason), Allowed: q.Allowed})
	}
}

// htmlLister makes the rows of the lists of changes, numbering the
// changes shown one by one (n) and taking their diffs from budget.
type htmlLister struct {
	n, rows int
	budget  int
	notes   map[string]renameNote
}

// list makes the rows of cs (ranked): a rolled-up folder is one row with
// its counts and rules (RollUpList), without diffs.
func (l *htmlLister) list(cs []*diff.Change) []htmlChange {
	var out []htmlChange
	for _, row := range RollUpList(cs) {
		l.rows++
		if row.Folder == "" {
			l.n++
			h := newHTMLChange(row.Changes[0], l.n, &l.budget, l.notes)
			h.ID = fmt.Sprintf("change-%d", l.rows)
			out = append(out, h)
			continue
		}
		out = append(out, folderRow(&row, l.rows))
	}
	return out
}

// folderRow is the row of a rolled-up folder.
func folderRow(row *ListRow, n int) htmlChange {
	t := &row.Tally
	kind := "folder"
	switch t.Total() {
	case t.Added:
		kind = string(diff.Added)
	case t.Removed:
		kind = string(diff.Removed)
	case t.Changed:
		kind = string(diff.Changed)
	}
	rules := make([]string, len(row.Rules))
	for i, r := range row.Rules {
		rules[i] = quote.Path(r)
	}
	return htmlChange{ID: fmt.Sprintf("change-%d", n), Kind: kind, Label: "FOLDER", Path: quote.Path(row.Folder + "/"),
		Detail: t.String() + " (rolled up: the JSON report lists each)", Rule: strings.Join(rules, " "),
		Allowed: t.Violations == 0, Brief: true, Folder: true}
}

// blockedProcess names the process that tried a blocked action: "pid 4211
// curl example.com" (as clean one-line text).
func blockedProcess(b *Blocked) string {
	cmd := strings.ReplaceAll(quote.Clean(b.Cmd), "\n", " ")
	switch {
	case b.PID > 0 && cmd != "":
		return fmt.Sprintf("pid %d %s", b.PID, cmd)
	case b.PID > 0:
		return fmt.Sprintf("pid %d", b.PID)
	}
	return cmd
}

func cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ReplaceAll(quote.Clean(s), "\n", " ")
	}
	return out
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote.Path(s)
	}
	return out
}

// newHTMLChange makes the view of one change, its diff cut (an added file
// to its first lines, any diff to htmlDiffMax) and taken from budget; a diff
// the budget has no room for is left out, with a note saying so.
func newHTMLChange(c *diff.Change, n int, budget *int, notes map[string]renameNote) htmlChange {
	h := htmlChange{
		ID:       fmt.Sprintf("change-%d", n),
		Kind:     string(c.Kind),
		Label:    kindLabel(c.Kind),
		Path:     quote.Path(c.Path),
		Detail:   quote.Clean(detailWith(c, notes)),
		Rule:     quote.Path(c.Rule),
		Risk:     string(c.Risk),
		Allowed:  c.Allowed,
		Summary:  entrySummary(c.Before) + " → " + entrySummary(c.After),
		DiffOpen: !c.Allowed,
		Brief:    n > htmlDetailed,
	}
	if h.Brief {
		return h
	}
	h.Meta = MetaRows(c.Before, c.After, false)
	switch c.Kind {
	case diff.Added:
		h.Summary = entrySummary(c.After)
	case diff.Removed:
		h.Summary = entrySummary(c.Before)
	}
	aspects := make([]string, len(c.Aspects))
	for i, a := range c.Aspects {
		aspects[i] = string(a)
	}
	h.Aspects = strings.Join(aspects, ", ")
	h.DiffNote = DiffNoteText(c.DiffNote)
	h.DiffLabel = "text diff"
	td, from, why := diffToShow(c, notes)
	if from { // a rename with edits: what changed from the old file
		h.DiffLabel = "text diff from the old file"
	}
	if why != "" { // a rename's half: its content is shown once
		h.DiffNote = why
	}
	if td != "" {
		d := cleanDiff(td)
		if c.Kind == diff.Added && td == c.TextDiff {
			d = textdiff.HeadLines(d, htmlAddedLines)
		}
		d = textdiff.Cut(d, htmlDiffMax)
		if len(d) > *budget {
			h.DiffNote = "text diff left out to keep this report small; the JSON report has it"
		} else {
			*budget -= len(d)
			h.Diff, h.DiffLines = diffHTML(d)
		}
	}
	return h
}

// diffHTML renders a unified diff as the inside of a <pre>: one span per
// line classed for colouring ("dl add", "dl del", "dl ctx", "dl hunk",
// "dl file", "dl note", "dl cut"). In a changed line the words that changed
// (textdiff.Intraline) are spans of class "wd", and whitespace to make visible
// (textdiff.Pieces) spans of class "ws" whose data-ws holds its markers (· → \r),
// drawn over it by the stylesheet: the text itself stays as it is. A
// carriage return is never written into the page (a browser breaks the
// line there): in a changed line it is an empty "ws cr" span, its marker
// only; elsewhere it is left out.
func diffHTML(d string) (template.HTML, int) {
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	marks, _ := textdiff.Intraline(lines)
	var b strings.Builder
	b.Grow(len(d) * 5 / 4)
	inHunk := false
	for i, l := range lines {
		class := "ctx"
		switch {
		case strings.HasPrefix(l, "@@"):
			class, inHunk = "hunk", true
		case textdiff.IsCutLine(l):
			class = "cut"
		case strings.HasPrefix(l, `\`):
			class = "note"
		case !inHunk:
			class = "file" // the --- and +++ header lines
		case strings.HasPrefix(l, "+"):
			class = "add"
		case strings.HasPrefix(l, "-"):
			class = "del"
		}
		b.WriteString(`<span class="dl `)
		b.WriteString(class)
		b.WriteString(`">`)
		if class == "add" || class == "del" {
			b.WriteString(l[:1])
			for _, p := range textdiff.Pieces(l[1:], marks[i]) {
				writePiece(&b, p)
			}
		} else {
			writeText(&b, l)
		}
		b.WriteString("</span>")
	}
	return template.HTML(b.String()), len(lines)
}

// writePiece writes one textdiff.Piece of a changed line; a carriage return is an
// empty span of its own (class "cr") whose marker takes room of its own.
func writePiece(b *strings.Builder, p textdiff.Piece) {
	switch {
	case p.Space:
		for rest := p.Text; rest != ""; {
			part := rest
			if i := strings.IndexByte(rest, '\r'); i > 0 {
				part = rest[:i]
			} else if i == 0 {
				part = "\r"
			}
			rest = rest[len(part):]
			b.WriteString(`<span class="ws`)
			if p.Changed {
				b.WriteString(" wd")
			}
			if part == "\r" {
				b.WriteString(" cr")
			}
			b.WriteString(`" data-ws="`)
			b.WriteString(textdiff.VisibleSpace(part))
			b.WriteString(`">`)
			writeText(b, part) // nothing for "\r"
			b.WriteString("</span>")
		}
	case p.Changed:
		b.WriteString(`<span class="wd">`)
		writeText(b, p.Text)
		b.WriteString("</span>")
	default:
		writeText(b, p.Text)
	}
}

// cleanDiff is quote.Clean for a diff: carriage returns stay, as part of
// their lines (a CRLF -> LF change must show).
func cleanDiff(d string) string {
	if !strings.ContainsRune(d, '\r') {
		return quote.Clean(d)
	}
	parts := strings.Split(d, "\r")
	for i, p := range parts {
		parts[i] = quote.Clean(p)
	}
	return strings.Join(parts, "\r")
}

// writeText writes s escaped for HTML text, without carriage returns.
func writeText(b *strings.Builder, s string) {
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r", "")
	}
	b.WriteString(template.HTMLEscapeString(s))
}
