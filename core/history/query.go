//go:build !js

package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

// Decisions a reviewer can make on a run.
const (
	Approve = "approve"
	Reject  = "reject"
)

// Summary is one line of the run list.
type Summary struct {
	ID        int64
	StartedAt time.Time
	Workspace string
	Script    string
	// ScriptLine names the script in one line (report.Script.Line): for
	// inline code, sh -c 'CODE'.
	ScriptLine string
	Verdict    string
	// Added, Removed and Changed count the changes per kind; Violations
	// counts those the allowlist did not allow.
	Added, Removed, Changed, Violations int
	// Decision is the latest reviewer decision ("" if none);
	// ApprovedVersion the allowlist version it approved (0: none recorded).
	Decision        string
	ApprovedVersion int
	// Stage is a staged run's stage state (report.StagePending, ...); ""
	// for a direct run.
	Stage string
	// Contained says how the run was contained: ContainedYes, ContainedNo
	// (asked for, a layer missing), ContainedOff, or "" for a run recorded
	// before containment existed.
	Contained string
	// Blocked and Outside count the run's blocked actions and changes
	// outside the workspace (findings that fail a run as violations do).
	Blocked, Outside int
}

// Values of Summary.Contained.
const (
	ContainedYes = "yes"
	ContainedNo  = "NO"
	ContainedOff = "off"
)

// containedOf says how a report's run was contained (Summary.Contained).
func containedOf(c *report.Containment) string {
	switch {
	case c == nil:
		return ""
	case c.Mode == "off" || c.Mode == "":
		return ContainedOff
	case c.Contained:
		return ContainedYes
	}
	return ContainedNo
}

// Filter selects runs for List and Count; zero fields select everything.
type Filter struct {
	// Workspace selects runs of this workspace (its absolute path, as stored).
	Workspace string
	// Verdict selects "pass" or "fail" runs.
	Verdict string
	// Limit caps List's result (newest first); 0 means no limit.
	Limit int
}

func (f *Filter) where() (string, []any) {
	var conds []string
	var args []any
	if f.Workspace != "" {
		conds = append(conds, "workspace = ?")
		args = append(args, blob(f.Workspace))
	}
	if f.Verdict != "" {
		conds = append(conds, "verdict = ?")
		args = append(args, f.Verdict)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// List returns the runs the filter selects, newest first.
func (db *DB) List(ctx context.Context, f Filter) ([]Summary, error) {
	f.Workspace = db.ws(f.Workspace)
	where, args := f.where()
	q := `SELECT id, started_at, workspace, script_path, verdict, added, removed, changed, violations,
		coalesce((SELECT decision FROM decisions d WHERE d.run_id = runs.id ORDER BY d.id DESC LIMIT 1), ''),
		coalesce((SELECT allowlist_version FROM decisions d WHERE d.run_id = runs.id ORDER BY d.id DESC LIMIT 1), 0),
		extra, coalesce((SELECT event FROM stage_events e WHERE e.run_id = runs.id ORDER BY e.id DESC LIMIT 1), ''), args
		FROM runs` + where + " ORDER BY id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", dbError(err))
	}
	defer rows.Close()
	var out []Summary
	for rows.Next() {
		var s Summary
		var started, event string
		var extra, args []byte
		if err := rows.Scan(&s.ID, &started, &s.Workspace, &s.Script, &s.Verdict,
			&s.Added, &s.Removed, &s.Changed, &s.Violations, &s.Decision, &s.ApprovedVersion, &extra, &event, &args); err != nil {
			return nil, fmt.Errorf("list runs: %w", dbError(err))
		}
		s.ScriptLine = s.Script
		if len(extra) > 0 {
			var rep report.Report
			if decodeExtra(extra, &rep) == nil {
				if rep.Script.Inline {
					rep.Script.Path = s.Script
					if rep.Script.Args, err = decodeList(args); err == nil {
						s.ScriptLine = rep.Script.Line()
					}
				}
				if rep.Stage != nil {
					s.Stage = report.StagePending
					if event != "" && event != EventApplying {
						s.Stage = event
					}
				}
				s.Contained, s.Blocked, s.Outside = containedOf(rep.Containment), len(rep.Blocked), len(rep.Outside)
			}
		}
		if s.StartedAt, err = parseTime(started); err != nil {
			return nil, fmt.Errorf("run %d: started_at: %v", s.ID, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", dbError(err))
	}
	return out, nil
}

// Count returns how many runs the filter selects (Limit is ignored).
func (db *DB) Count(ctx context.Context, f Filter) (int, error) {
	f.Workspace = db.ws(f.Workspace)
	where, args := f.where()
	var n int
	if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM runs"+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count runs: %w", dbError(err))
	}
	return n, nil
}

// Workspaces lists the workspaces that have runs, the most recently run
// first, at most limit of them (0: all); one query, grouped by the index on
// (workspace, id).
func (db *DB) Workspaces(ctx context.Context, limit int) ([]string, error) {
	q := "SELECT workspace FROM runs GROUP BY workspace ORDER BY max(id) DESC"
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := db.sql.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", dbError(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ws []byte
		if err := rows.Scan(&ws); err != nil {
			return nil, fmt.Errorf("list workspaces: %w", dbError(err))
		}
		out = append(out, string(ws))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list workspaces: %w", dbError(err))
	}
	return out, nil
}

// Latest returns the id of the newest run (0 if there is none).
func (db *DB) Latest(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := db.sql.QueryRowContext(ctx, "SELECT max(id) FROM runs").Scan(&id); err != nil {
		return 0, fmt.Errorf("latest run: %w", dbError(err))
	}
	return id.Int64, nil
}

const runColumns = `workspace, script_path, script_sha256, script_text, args, allowlist, allowlist_version,
	started_at, finished_at, verdict, reasons, exit_code, signal, timed_out, timeout, cancelled, leftovers,
	stdout_head, stdout_tail, stderr_head, stderr_tail, added, removed, changed, violations, extra, hash`

const changeColumns = `path, kind, aspects, before, after, allowed, rule, risk, text_diff, diff_note, links_inside,
	renamed_to, renamed_from, similarity, rename_diff`

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// loadRunRow reads a runs row and its stored hash.
func loadRunRow(ctx context.Context, q querier, id int64) (*runRow, string, error) {
	var r runRow
	var hash string
	err := q.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE id = ?", id).Scan(
		&r.workspace, &r.scriptPath, &r.scriptSHA, &r.scriptText, &r.args, &r.allowlist, &r.allowlistVersion,
		&r.startedAt, &r.finishedAt, &r.verdict, &r.reasons, &r.exitCode, &r.signal, &r.timedOut, &r.timeout,
		&r.cancelled, &r.leftovers, &r.stdoutHead, &r.stdoutTail, &r.stderrHead, &r.stderrTail,
		&r.added, &r.removed, &r.changed, &r.viol, &r.extra, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("run %d: %w", id, dbError(err))
	}
	return &r, hash, nil
}

// eachChange calls fn with every change row of run id, in order.
func eachChange(ctx context.Context, q querier, id int64, fn func(*changeRow) error) error {
	rows, err := q.QueryContext(ctx, "SELECT "+changeColumns+" FROM changes WHERE run_id = ? ORDER BY seq", id)
	if err != nil {
		return fmt.Errorf("run %d: changes: %w", id, dbError(err))
	}
	defer rows.Close()
	var c changeRow
	for rows.Next() {
		c = changeRow{}
		if err := rows.Scan(&c.path, &c.kind, &c.aspects, &c.before, &c.after, &c.allowed,
			&c.rule, &c.risk, &c.textDiff, &c.diffNote, &c.linksInside, &c.renamedTo, &c.renamedFrom, &c.similarity, &c.renameDiff); err != nil {
			return fmt.Errorf("run %d: changes: %w", id, dbError(err))
		}
		if err := fn(&c); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("run %d: changes: %w", id, dbError(err))
	}
	return nil
}

// Get returns a run with its full report, rebuilt from the database alone,
// and its latest decision. An unknown id gives an error wrapping ErrNotFound.
func (db *DB) Get(ctx context.Context, id int64) (*Run, error) {
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // one consistent snapshot
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", id, dbError(err))
	}
	defer tx.Rollback()
	row, hash, err := loadRunRow(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	run, err := row.toRun()
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", id, err)
	}
	run.ID, run.Hash = id, hash
	if st := run.Report.Stage; st != nil {
		if err := stageState(ctx, tx, id, st); err != nil {
			return nil, err
		}
	}
	run.Report.Changes = make([]diff.Change, 0, row.added+row.removed+row.changed)
	err = eachChange(ctx, tx, id, func(c *changeRow) error {
		ch, err := c.toChange()
		if err != nil {
			return fmt.Errorf("run %d: change %q: %w", id, c.path, err)
		}
		run.Report.Changes = append(run.Report.Changes, ch)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var decided string
	err = tx.QueryRowContext(ctx, "SELECT decision, note, decided_at, allowlist_version FROM decisions WHERE run_id = ? ORDER BY id DESC LIMIT 1", id).
		Scan(&run.Decision, &run.DecisionNote, &decided, &run.ApprovedVersion)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("run %d: decision: %w", id, dbError(err))
	default:
		run.DecidedAt, _ = parseTime(decided)
	}
	return run, nil
}

func (r *runRow) toRun() (*Run, error) {
	rep := &report.Report{Schema: report.Schema, Verdict: r.verdict, Workspace: r.workspace,
		Script: report.Script{Path: r.scriptPath, SHA256: r.scriptSHA}}
	var err error
	if rep.Script.Args, err = decodeList([]byte(r.args)); err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	if rep.Allowlist, err = decodeList([]byte(r.allowlist)); err != nil {
		return nil, fmt.Errorf("allowlist: %w", err)
	}
	if rep.Reasons, err = decodeList([]byte(r.reasons)); err != nil {
		return nil, fmt.Errorf("reasons: %w", err)
	}
	if rep.StartedAt, err = parseTime(r.startedAt); err != nil {
		return nil, fmt.Errorf("started_at: %w", err)
	}
	if rep.FinishedAt, err = parseTime(r.finishedAt); err != nil {
		return nil, fmt.Errorf("finished_at: %w", err)
	}
	rep.Process = report.Process{ExitCode: int(r.exitCode), Signal: r.signal, TimedOut: r.timedOut,
		Timeout: r.timeout, Cancelled: r.cancelled, StdoutHead: r.stdoutHead, StdoutTail: r.stdoutTail,
		StderrHead: r.stderrHead, StderrTail: r.stderrTail}
	if rep.Process.Leftovers, err = decodeLeftovers([]byte(r.leftovers)); err != nil {
		return nil, fmt.Errorf("leftovers: %w", err)
	}
	if err := decodeExtra([]byte(r.extra), rep); err != nil {
		return nil, fmt.Errorf("extra: %w", err)
	}
	run := &Run{Report: rep, AllowlistVersion: int(r.allowlistVersion)}
	if r.scriptText != "" {
		run.ScriptText = []byte(r.scriptText)
	}
	return run, nil
}

func (c *changeRow) toChange() (diff.Change, error) {
	ch := diff.Change{Path: c.path, Kind: diff.Kind(c.kind), Aspects: []diff.Aspect{}, Allowed: c.allowed,
		Rule: c.rule, Risk: diff.Risk(c.risk), TextDiff: c.textDiff, DiffNote: c.diffNote, LinksInside: int(c.linksInside),
		RenamedTo: c.renamedTo, RenamedFrom: c.renamedFrom, Similarity: int(c.similarity), RenameDiff: c.renameDiff}
	if c.aspects != "" {
		for _, a := range strings.Split(c.aspects, ",") {
			ch.Aspects = append(ch.Aspects, diff.Aspect(a))
		}
	}
	for _, side := range []struct {
		src sql.NullString
		dst **snapshot.Entry
	}{{c.before, &ch.Before}, {c.after, &ch.After}} {
		if !side.src.Valid {
			continue
		}
		e, err := decodeEntry([]byte(side.src.String), c.path)
		if err != nil {
			return ch, err
		}
		*side.dst = e
	}
	return ch, nil
}

// Content returns a stored file content by its hex SHA-256, checked against
// the hash. Content not stored gives an error wrapping ErrNotFound.
func (db *DB) Content(ctx context.Context, sha string) ([]byte, error) {
	var size int64
	var encoding string
	var data []byte
	err := db.sql.QueryRowContext(ctx, "SELECT size, encoding, data FROM contents WHERE sha256 = ?", sha).Scan(&size, &encoding, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("content %s: %w", sha, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("content %s: %w", sha, dbError(err))
	}
	return decodeStored("content", sha, encoding, data, size)
}

// decodeStored returns a stored blob (a content or a kept text, what) by
// its encoding ("raw" or "deflate"), checked against its size and hex
// SHA-256.
func decodeStored(what, sha, encoding string, data []byte, size int64) ([]byte, error) {
	switch encoding {
	case "raw":
	case "deflate":
		var err error
		if data, err = inflate(data, size); err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, sha, err)
		}
	default:
		return nil, fmt.Errorf("%s %s: unknown encoding %q", what, sha, encoding)
	}
	if data == nil {
		data = []byte{}
	}
	if sum := sha256.Sum256(data); int64(len(data)) != size || hex.EncodeToString(sum[:]) != sha {
		return nil, fmt.Errorf("%s %s: stored data does not match its hash", what, sha)
	}
	return data, nil
}

// Decide records a reviewer's decision (Approve or Reject) on a run, with a note.
func (db *DB) Decide(ctx context.Context, runID int64, decision, note string) error {
	if decision != Approve && decision != Reject {
		return fmt.Errorf("decision %q: want %s or %s", decision, Approve, Reject)
	}
	if err := refuseInGatedRun("decide"); err != nil {
		return err
	}
	return db.write(ctx, "decide", func(tx *sqlTx) error {
		return insertDecision(ctx, tx, &decisionRow{runID: runID, decision: decision, note: note})
	})
}

// insertDecision writes decision d (its time is now) and its link.
func insertDecision(ctx context.Context, tx *sqlTx, d *decisionRow) error {
	if err := runExists(ctx, tx, d.runID); err != nil {
		return err
	}
	d.decidedAt = formatTime(time.Now().UTC())
	var err error
	d.id, err = tx.insertID(ctx, "INSERT INTO decisions (run_id, decision, note, decided_at, allowlist_version) VALUES (?, ?, ?, ?, ?)",
		d.runID, d.decision, d.note, d.decidedAt, d.allowlistVersion)
	if err != nil {
		return err
	}
	return appendLink(ctx, tx, linkDecision, d.id, d.digest())
}
