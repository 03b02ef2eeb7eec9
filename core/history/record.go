//go:build !js

package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

// MaxContent is the largest file content kept in the contents store.
const MaxContent = 1 << 20

// Run is one recorded gated run.
type Run struct {
	// ID is the run's number in the database (set by Record).
	ID int64
	// Report is the run's full report: verdict, process outcome, changes.
	Report *report.Report
	// ScriptText is the script's content as it was run.
	ScriptText []byte
	// AllowlistVersion is the approved allowlist version the run used (0: none).
	AllowlistVersion int
	// Hash is the run's link in the tamper-evident chain (set by Record).
	Hash string
	// Decision is the latest reviewer decision ("approve", "reject" or "").
	Decision string
	// DecisionNote is the note of the latest decision.
	DecisionNote string
	// DecidedAt is when the latest decision was made.
	DecidedAt time.Time
	// ApprovedVersion is the workspace's allowlist version the latest
	// decision approved (ApproveRun); 0 for a rejection or an approval
	// recorded without it.
	ApprovedVersion int
}

// runRow holds a runs row's columns exactly as stored (and hashed).
type runRow struct {
	workspace, scriptPath, scriptSHA string
	scriptText                       string
	args, allowlist                  string // encodeList
	allowlistVersion                 int64
	startedAt, finishedAt            string // RFC 3339
	verdict                          string
	reasons                          string // encodeList
	exitCode                         int64
	signal                           string
	timedOut, cancelled              bool
	timeout                          string
	leftovers                        string // encodeLeftovers
	stdoutHead, stdoutTail           string
	stderrHead, stderrTail           string
	added, removed, changed, viol    int64
	extra                            string // encodeExtra; "" when none
}

// changeRow holds a changes row's columns exactly as stored (and hashed).
type changeRow struct {
	path, kind, aspects string
	before, after       sql.NullString // encodeEntry; NULL when absent
	allowed             bool
	rule, risk          string
	textDiff            string
	diffNote            string // diff.Change.DiffNote
	linksInside         int64  // diff.Change.LinksInside
	// renamedTo, renamedFrom, similarity and renameDiff are a rename's
	// fields (diff.Change), "" and 0 for any other change.
	renamedTo, renamedFrom string
	similarity             int64
	renameDiff             string
}

// renamed reports whether the row carries a rename's fields.
func (c *changeRow) renamed() bool {
	return c.renamedTo != "" || c.renamedFrom != "" || c.similarity != 0 || c.renameDiff != ""
}

const timeLayout = time.RFC3339Nano

func formatTime(t time.Time) string { return t.Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeLayout, s) }

func newRunRow(r *Run) (*runRow, error) {
	rep := r.Report
	if rep == nil {
		return nil, errors.New("no report")
	}
	if rep.Verdict != report.Pass && rep.Verdict != report.Fail {
		return nil, fmt.Errorf("verdict %q, want pass or fail", rep.Verdict)
	}
	if r.AllowlistVersion < 0 {
		return nil, fmt.Errorf("allowlist version %d", r.AllowlistVersion)
	}
	c := rep.Count()
	p := &rep.Process
	return &runRow{
		workspace: rep.Workspace, scriptPath: rep.Script.Path, scriptSHA: rep.Script.SHA256,
		scriptText: string(r.ScriptText),
		args:       string(encodeList(rep.Script.Args)), allowlist: string(encodeList(rep.Allowlist)),
		allowlistVersion: int64(r.AllowlistVersion),
		startedAt:        formatTime(rep.StartedAt), finishedAt: formatTime(rep.FinishedAt),
		verdict: rep.Verdict, reasons: string(encodeList(rep.Reasons)),
		exitCode: int64(p.ExitCode), signal: p.Signal, timedOut: p.TimedOut, cancelled: p.Cancelled,
		timeout: p.Timeout, leftovers: string(encodeLeftovers(p.Leftovers)),
		stdoutHead: p.StdoutHead, stdoutTail: p.StdoutTail, stderrHead: p.StderrHead, stderrTail: p.StderrTail,
		added: int64(c.Added), removed: int64(c.Removed), changed: int64(c.Changed), viol: int64(c.Violations),
		extra: string(encodeExtra(rep)),
	}, nil
}

func newChangeRow(c *diff.Change) (changeRow, error) {
	row := changeRow{path: c.Path, kind: string(c.Kind), allowed: c.Allowed, rule: c.Rule,
		risk: string(c.Risk), textDiff: c.TextDiff, diffNote: c.DiffNote, linksInside: int64(c.LinksInside),
		renamedTo: c.RenamedTo, renamedFrom: c.RenamedFrom, similarity: int64(c.Similarity), renameDiff: c.RenameDiff}
	switch c.Kind {
	case diff.Added, diff.Removed, diff.Changed:
	default:
		return row, fmt.Errorf("change %q: kind %q", c.Path, c.Kind)
	}
	if len(c.Aspects) > 0 {
		as := make([]string, len(c.Aspects))
		for i, a := range c.Aspects {
			if a == "" || strings.Contains(string(a), ",") {
				return row, fmt.Errorf("change %q: aspect %q", c.Path, a)
			}
			as[i] = string(a)
		}
		row.aspects = strings.Join(as, ",")
	}
	for _, side := range []struct {
		e   *snapshot.Entry
		dst *sql.NullString
	}{{c.Before, &row.before}, {c.After, &row.after}} {
		if side.e == nil {
			continue
		}
		*side.dst = sql.NullString{String: string(encodeEntry(side.e)), Valid: true}
	}
	return row, nil
}

// canon computes the SHA-256 of a run's canonical encoding: a version tag,
// every runs column (but id and hash) in schema order, then each change's
// columns in order, then the number of changes. Strings are length-prefixed,
// so the encoding is unambiguous.
type canon struct {
	h hash.Hash
	e enc
	n uint64
}

func newCanon(r *runRow) *canon {
	c := &canon{h: sha256.New()}
	e := &c.e
	e.str("diffgate.history.run/v1")
	e.str(r.workspace)
	e.str(r.scriptPath)
	e.str(r.scriptSHA)
	e.str(r.scriptText)
	e.str(r.args)
	e.str(r.allowlist)
	e.int(r.allowlistVersion)
	e.str(r.startedAt)
	e.str(r.finishedAt)
	e.str(r.verdict)
	e.str(r.reasons)
	e.int(r.exitCode)
	e.str(r.signal)
	e.bool(r.timedOut)
	e.str(r.timeout)
	e.bool(r.cancelled)
	e.str(r.leftovers)
	e.str(r.stdoutHead)
	e.str(r.stdoutTail)
	e.str(r.stderrHead)
	e.str(r.stderrTail)
	e.int(r.added)
	e.int(r.removed)
	e.int(r.changed)
	e.int(r.viol)
	if r.extra != "" { // hashed only when set: older runs keep their hashes
		e.str(r.extra)
	}
	c.flush()
	return c
}

func (c *canon) change(ch *changeRow) {
	e := &c.e
	e.str(ch.path)
	kind := ch.kind
	if ch.diffNote != "" {
		// The note rides with the kind, whose values are fixed words: the
		// encoding stays unambiguous and changes without a note (all of
		// them before migration 5) keep their hashes.
		kind += "/" + ch.diffNote
	}
	if ch.renamed() {
		// So do a rename's fields, after a NUL (in no kind or note), each
		// length-prefixed: changes without them (all of them before
		// migration 10) keep their hashes.
		var r enc
		r.str(ch.renamedTo)
		r.str(ch.renamedFrom)
		r.int(ch.similarity)
		r.str(ch.renameDiff)
		kind += "\x00" + string(r.b)
	}
	e.str(kind)
	e.str(ch.aspects)
	for _, s := range []sql.NullString{ch.before, ch.after} {
		e.bool(s.Valid)
		if s.Valid {
			e.str(s.String)
		}
	}
	e.bool(ch.allowed)
	e.str(ch.rule)
	if ch.linksInside == 0 {
		e.str(ch.risk)
	} else {
		// The count rides with the risk, a fixed word, as the note rides
		// with the kind: changes without one (all of them before
		// migration 6) keep their hashes.
		e.str(ch.risk + "#" + strconv.FormatInt(ch.linksInside, 10))
	}
	e.str(ch.textDiff)
	c.n++
	if len(e.b) >= 64<<10 {
		c.flush()
	}
}

func (c *canon) flush() {
	c.h.Write(c.e.b)
	c.e.b = c.e.b[:0]
}

func (c *canon) sum() []byte {
	c.e.uint(c.n)
	c.flush()
	return c.h.Sum(nil)
}

// chainHash links a run's content digest to the previous run's hash.
func chainHash(prev string, digest []byte) string {
	h := sha256.New()
	h.Write([]byte("diffgate.history.chain/v1\x00"))
	h.Write([]byte(prev))
	h.Write([]byte{0})
	h.Write(digest)
	return hex.EncodeToString(h.Sum(nil))
}

// blob returns s as a non-nil []byte, so it binds as a BLOB (never NULL).
func blob(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}

func nullBlob(s string, ok bool) any {
	if !ok {
		return nil
	}
	return blob(s)
}

// keptContent is one content to store.
type keptContent struct {
	sha      string
	size     int
	encoding string
	data     []byte
}

// Record stores a run: its report (changes included) and script text, the
// before and after contents of its changed files that contents returns (up
// to MaxContent each; contents may be nil), and, when cache is not nil, the
// cache's file entries as the workspace's hash cache. Everything goes in one
// transaction; r.ID and r.Hash are set on success.
func (db *DB) Record(ctx context.Context, r *Run, contents func(sha string) ([]byte, bool), cache *snapshot.Manifest) (int64, error) {
	start := time.Now()
	if err := refuseInGatedRun("record run"); err != nil {
		return 0, err
	}
	rec, err := db.prepareRecord(ctx, r, contents, cache)
	if err != nil {
		return 0, err
	}
	var id int64
	var chain string
	err = db.write(ctx, "record run", func(tx *sqlTx) error {
		var err error
		id, chain, err = rec.insert(ctx, tx)
		return err
	})
	if err != nil {
		return 0, err
	}
	r.ID, r.Hash = id, chain
	if rec.teamCache != nil {
		db.keepTeamCache(ctx, rec, id)
	}
	db.log.Debug().Int64("run", id).Int("changes", len(rec.rows)).Int("contents", len(rec.kept)).
		Int("cache_entries", rec.cacheN).Dur("took", time.Since(start)).Msg("run recorded")
	return id, nil
}

// runRecord is a run made ready for Record's transaction.
type runRecord struct {
	row     *runRow
	rows    []changeRow
	digest  []byte // the run's digest for the hash chain
	kept    []keptContent
	cacheWS string // the workspace's path, for a team store's local caches
	// cacheBlob is the hash cache to store with the run; teamCache, a team
	// store's, kept in the local caches instead; cacheN its entries.
	cacheBlob, teamCache []byte
	cacheN               int
}

// prepareRecord does everything costly before the transaction, so that
// other writers wait only for the inserts: the rows, the chain's digest,
// the contents to keep and the encoded hash cache.
func (db *DB) prepareRecord(ctx context.Context, r *Run, contents func(sha string) ([]byte, bool), cache *snapshot.Manifest) (*runRecord, error) {
	row, err := newRunRow(r)
	if err != nil {
		return nil, fmt.Errorf("record run: %w", err)
	}
	rec := &runRecord{row: row, cacheWS: row.workspace} // a team store's caches stay on this machine, under the path
	row.workspace = db.ws(row.workspace)
	changes := r.Report.Changes
	rec.rows = make([]changeRow, len(changes))
	cn := newCanon(row)
	for i := range changes {
		if rec.rows[i], err = newChangeRow(&changes[i]); err != nil {
			return nil, fmt.Errorf("record run: %w", err)
		}
		cn.change(&rec.rows[i])
	}
	rec.digest = cn.sum()
	if rec.kept, err = db.collectContents(ctx, changes, contents); err != nil {
		return nil, fmt.Errorf("record run: %w", err)
	}
	if cache != nil && !cache.Seed && !db.caches().cacheUnchanged(rec.cacheWS, cache) {
		rec.cacheBlob, rec.cacheN = encodeCache(cache)
	}
	if db.pg {
		rec.teamCache, rec.cacheBlob = rec.cacheBlob, nil
	}
	return rec, nil
}

// insert is Record's transaction: the run and its link in the chain, its
// changes, its contents and its hash cache. It returns the run's id and
// hash.
func (rec *runRecord) insert(ctx context.Context, tx *sqlTx) (id int64, chain string, err error) {
	if chain, err = nextLink(ctx, tx, rec.digest); err != nil {
		return 0, "", err
	}
	if id, err = insertRun(ctx, tx, rec.row, chain); err != nil {
		return 0, "", err
	}
	if err := addLink(ctx, tx, linkRun, id, chain); err != nil {
		return 0, "", err
	}
	if err := insertChanges(ctx, tx, id, rec.rows); err != nil {
		return 0, "", err
	}
	if err := insertContents(ctx, tx, rec.kept); err != nil {
		return 0, "", err
	}
	if rec.cacheBlob != nil {
		if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO hash_cache (workspace, run_id, entries, data) VALUES (?, ?, ?, ?)",
			blob(rec.row.workspace), id, rec.cacheN, rec.cacheBlob); err != nil {
			return 0, "", err
		}
	}
	return id, chain, nil
}

// insertRun inserts the run's row, hashed chain, and returns its id.
func insertRun(ctx context.Context, tx *sqlTx, row *runRow, chain string) (int64, error) {
	return tx.insertID(ctx, `INSERT INTO runs (workspace, script_path, script_sha256, script_text,
			args, allowlist, allowlist_version, started_at, finished_at, verdict, reasons, exit_code, signal,
			timed_out, timeout, cancelled, leftovers, stdout_head, stdout_tail, stderr_head, stderr_tail,
			added, removed, changed, violations, extra, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		blob(row.workspace), blob(row.scriptPath), row.scriptSHA, blob(row.scriptText),
		blob(row.args), blob(row.allowlist), row.allowlistVersion, row.startedAt, row.finishedAt,
		row.verdict, blob(row.reasons), row.exitCode, row.signal, row.timedOut, row.timeout, row.cancelled,
		blob(row.leftovers), blob(row.stdoutHead), blob(row.stdoutTail), blob(row.stderrHead), blob(row.stderrTail),
		row.added, row.removed, row.changed, row.viol, blob(row.extra), chain)
}

// insertContents stores the kept contents, each once.
func insertContents(ctx context.Context, tx *sqlTx, kept []keptContent) error {
	if len(kept) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, "INSERT OR IGNORE INTO contents (sha256, size, encoding, data) VALUES (?, ?, ?, ?)")
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, k := range kept {
		if _, err := stmt.ExecContext(ctx, k.sha, k.size, k.encoding, k.data); err != nil {
			return err
		}
	}
	return nil
}

// keepTeamCache keeps the hash cache of a team store's run id on this
// machine (its file entries are this machine's): only an optimisation, a
// failure is logged.
func (db *DB) keepTeamCache(ctx context.Context, rec *runRecord, id int64) {
	c := db.caches()
	if c == nil {
		return
	}
	if err := c.write(ctx, "hash cache", func(tx *sqlTx) error {
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO hash_cache (workspace, run_id, entries, data) VALUES (?, ?, ?, ?)",
			blob(rec.cacheWS), id, rec.cacheN, rec.teamCache)
		return err
	}); err != nil {
		db.log.Warn().Err(err).Msg("hash cache not kept")
	}
}

// collectContents fetches, checks and compresses the changed files'
// contents that the store lacks.
func (db *DB) collectContents(ctx context.Context, changes []diff.Change, contents func(string) ([]byte, bool)) ([]keptContent, error) {
	if contents == nil {
		return nil, nil
	}
	seen := map[string]bool{}
	var out []keptContent
	for i := range changes {
		for _, e := range []*snapshot.Entry{changes[i].Before, changes[i].After} {
			if e == nil || e.Type != snapshot.File || e.SHA256 == "" || e.Size > MaxContent || seen[e.SHA256] {
				continue
			}
			seen[e.SHA256] = true
			data, ok := contents(e.SHA256)
			if !ok || len(data) > MaxContent {
				continue
			}
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != e.SHA256 {
				continue // not the content it claims to be: never store under a wrong key
			}
			var have int
			err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM contents WHERE sha256 = ?", e.SHA256).Scan(&have)
			if err != nil {
				return nil, dbError(err)
			}
			if have > 0 {
				continue
			}
			k := keptContent{sha: e.SHA256, size: len(data), encoding: "raw", data: data}
			if z := deflate(data, 6); len(z) < len(data) {
				k.encoding, k.data = "deflate", z
			}
			if k.data == nil {
				k.data = []byte{}
			}
			out = append(out, k)
		}
	}
	return out, nil
}

// insertChanges writes the change rows of run id. The rename columns
// (migration 10) are written only for a run with a rename, so that a run
// without one records alike into a database of an older schema (tests
// build those with the current code).
func insertChanges(ctx context.Context, tx *sqlTx, id int64, rows []changeRow) error {
	if len(rows) == 0 {
		return nil
	}
	renames := slices.ContainsFunc(rows, func(c changeRow) bool { return c.renamed() })
	cols, marks := "", ""
	if renames {
		cols, marks = ", renamed_to, renamed_from, similarity, rename_diff", ", ?, ?, ?, ?"
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO changes (run_id, seq, path, kind, aspects,
		before, after, allowed, rule, risk, text_diff, diff_note, links_inside`+cols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`+marks+`)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i := range rows {
		c := &rows[i]
		args := []any{id, i, blob(c.path), c.kind, c.aspects,
			nullBlob(c.before.String, c.before.Valid), nullBlob(c.after.String, c.after.Valid), c.allowed, blob(c.rule), c.risk,
			blob(c.textDiff), c.diffNote, c.linksInside}
		if renames {
			args = append(args, blob(c.renamedTo), blob(c.renamedFrom), c.similarity, blob(c.renameDiff))
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}
