//go:build !js

package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"

	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/internal/quote"
)

// Kinds of chain links: what a link stands for.
const (
	linkRun       = "run"
	linkAllowlist = "allowlist"
	linkDecision  = "decision"
)

// ErrInGatedRun is wrapped by every write to the history (recording a run,
// approving an allowlist, deciding on a run) from a process inside a gated
// run: a script must not approve its own allowlist or rewrite the record.
var ErrInGatedRun = errors.New("refused inside a gated run (a gated script must not write the history)")

// refuseInGatedRun returns ErrInGatedRun, wrapped with what, when the
// calling process runs inside a gated run (see proc.InGatedRun).
func refuseInGatedRun(what string) error {
	if proc.InGatedRun() {
		return fmt.Errorf("%s: %w", what, ErrInGatedRun)
	}
	return nil
}

// allowlistRow holds an allowlists row's columns exactly as stored (and hashed).
type allowlistRow struct {
	id              int64
	workspace       string
	version         int64
	entries         string // encodeList
	note, createdAt string
	approvedBy      string // "" before migration 0011: hashed only when set
}

func (r *allowlistRow) digest() []byte {
	var e enc
	e.str("diffgate.history.allowlist/v1")
	e.str(r.workspace)
	e.int(r.version)
	e.str(r.entries)
	e.str(r.note)
	e.str(r.createdAt)
	if r.approvedBy != "" {
		e.str(r.approvedBy)
	}
	s := sha256.Sum256(e.b)
	return s[:]
}

// decisionRow holds a decisions row's columns exactly as stored (and hashed).
type decisionRow struct {
	id, runID                 int64
	decision, note, decidedAt string
	// allowlistVersion is the version an approval approved (0: none
	// recorded); hashed only when set, so older decisions keep their links.
	allowlistVersion int64
}

func (r *decisionRow) digest() []byte {
	var e enc
	e.str("diffgate.history.decision/v1")
	e.int(r.runID)
	e.str(r.decision)
	e.str(r.note)
	e.str(r.decidedAt)
	if r.allowlistVersion != 0 {
		e.int(r.allowlistVersion)
	}
	s := sha256.Sum256(e.b)
	return s[:]
}

const allowlistRowColumns = "id, workspace, version, entries, note, created_at, approved_by"

func scanAllowlistRow(sc interface{ Scan(...any) error }) (*allowlistRow, error) {
	var r allowlistRow
	err := sc.Scan(&r.id, &r.workspace, &r.version, &r.entries, &r.note, &r.createdAt, &r.approvedBy)
	return &r, err
}

func loadDecisionRow(ctx context.Context, q querier, id int64) (*decisionRow, error) {
	r := decisionRow{id: id}
	err := q.QueryRowContext(ctx, "SELECT run_id, decision, note, decided_at, allowlist_version FROM decisions WHERE id = ?", id).
		Scan(&r.runID, &r.decision, &r.note, &r.decidedAt, &r.allowlistVersion)
	return &r, err
}

// loadDecisionRowV1 reads a decision of a database older than migration
// 0008 (no allowlist_version: its digest is that of version 0).
func loadDecisionRowV1(ctx context.Context, q querier, id int64) (*decisionRow, error) {
	r := decisionRow{id: id}
	err := q.QueryRowContext(ctx, "SELECT run_id, decision, note, decided_at FROM decisions WHERE id = ?", id).
		Scan(&r.runID, &r.decision, &r.note, &r.decidedAt)
	return &r, err
}

// nextLink returns the hash of a new link for digest, chained to the last link.
func nextLink(ctx context.Context, tx *sqlTx, digest []byte) (string, error) {
	var prev string
	err := tx.QueryRowContext(ctx, "SELECT hash FROM chain ORDER BY seq DESC LIMIT 1").Scan(&prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	return chainHash(prev, digest), nil
}

// addLink appends a link (from nextLink) for row ref of the given kind.
func addLink(ctx context.Context, tx *sqlTx, kind string, ref int64, hash string) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO chain (kind, ref, hash) VALUES (?, ?, ?)", kind, ref, hash)
	return err
}

// appendLink chains digest, standing for row ref of the given kind.
func appendLink(ctx context.Context, tx *sqlTx, kind string, ref int64, digest []byte) error {
	h, err := nextLink(ctx, tx, digest)
	if err != nil {
		return err
	}
	return addLink(ctx, tx, kind, ref, h)
}

// errBrokenLink says that a row does not hold its place in the chain.
var errBrokenLink = errors.New("it does not match the history's hash chain (altered behind diffgate's back; see diffgate history verify)")

// checkLink checks one row's link: it is in the chain, and its hash is that
// of digest chained to the link before it.
func checkLink(ctx context.Context, q querier, kind string, ref int64, digest []byte) error {
	var seq int64
	var stored string
	err := q.QueryRowContext(ctx, "SELECT seq, hash FROM chain WHERE kind = ? AND ref = ?", kind, ref).Scan(&seq, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		return errBrokenLink
	}
	if err != nil {
		return dbError(err)
	}
	var prev string
	err = q.QueryRowContext(ctx, "SELECT hash FROM chain WHERE seq < ? ORDER BY seq DESC LIMIT 1", seq).Scan(&prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return dbError(err)
	}
	if chainHash(prev, digest) != stored {
		return errBrokenLink
	}
	return nil
}

// adoptIntoChain is the Go half of migration 0002: it appends the
// allowlists and then the decisions that an older database holds to the
// chain (the SQL half has put its runs there).
func adoptIntoChain(ctx context.Context, tx *sqlTx) error {
	// The columns of migration 0002's time (approved_by came with 0010).
	rows, err := tx.QueryContext(ctx, "SELECT id, workspace, version, entries, note, created_at FROM allowlists ORDER BY id")
	if err != nil {
		return err
	}
	var als []*allowlistRow
	for rows.Next() {
		var r allowlistRow
		err := rows.Scan(&r.id, &r.workspace, &r.version, &r.entries, &r.note, &r.createdAt)
		if err != nil {
			rows.Close()
			return err
		}
		als = append(als, &r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range als {
		if err := appendLink(ctx, tx, linkAllowlist, r.id, r.digest()); err != nil {
			return err
		}
	}
	var ids []int64
	rows, err = tx.QueryContext(ctx, "SELECT id FROM decisions ORDER BY id")
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		d, err := loadDecisionRowV1(ctx, tx, id) // migration 0002: before 0008's column
		if err != nil {
			return err
		}
		if err := appendLink(ctx, tx, linkDecision, id, d.digest()); err != nil {
			return err
		}
	}
	return nil
}

// Broken describes the first link of the chain that does not hold.
type Broken struct {
	// Link is the position (from 1) of the broken link in the chain; 0 for
	// a row that is not in the chain at all.
	Link int64
	// What names the row: "run 3", "allowlist version 2 of /ws",
	// "decision 4 on run 3".
	What string
	// RunID is the run concerned (the run, or the run decided on); 0 for
	// an allowlist.
	RunID int64
	// Reason says what is wrong, in one line.
	Reason string
}

type link struct {
	seq, ref   int64
	kind, hash string
}

// Verify recomputes the hash chain over every run, approved allowlist and
// decision, in the order they were written, and returns the first broken
// link, or nil when the chain is intact. A row edited, inserted or deleted
// behind diffgate's back (except the newest link deleted with its row)
// breaks the chain at or after it.
func (db *DB) Verify(ctx context.Context) (*Broken, error) {
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", dbError(err))
	}
	defer tx.Rollback()
	links, err := readChain(ctx, tx)
	if err != nil {
		return nil, err
	}
	w := &chainWalk{ctx: ctx, tx: tx}
	for _, l := range links {
		if b, err := w.check(l); b != nil || err != nil {
			return b, err
		}
	}
	if b, err := unchained(ctx, tx); b != nil || err != nil {
		return b, err
	}
	if db.pg {
		return pgGuards(ctx, tx)
	}
	return nil, nil
}

// readChain reads the chain's links in their order.
func readChain(ctx context.Context, tx *sqlTx) ([]link, error) {
	rows, err := tx.QueryContext(ctx, "SELECT seq, kind, ref, hash FROM chain ORDER BY seq")
	if err != nil {
		return nil, fmt.Errorf("verify: %w", dbError(err))
	}
	var links []link
	for rows.Next() {
		var l link
		if err := rows.Scan(&l.seq, &l.kind, &l.ref, &l.hash); err != nil {
			rows.Close()
			return nil, fmt.Errorf("verify: %w", dbError(err))
		}
		links = append(links, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("verify: %w", dbError(err))
	}
	return links, nil
}

// chainWalk checks the chain's links in order: each the next of the one
// before, each run the next run, each hash over the one before and the
// row's content.
type chainWalk struct {
	ctx     context.Context
	tx      *sqlTx
	prev    string // the hash of the link before
	prevSeq int64
	prevRun int64
}

// check checks the next link l: a *Broken when it does not hold.
func (w *chainWalk) check(l link) (*Broken, error) {
	b := &Broken{Link: l.seq}
	digest, stored, err := w.linkDigest(l, b)
	if err != nil {
		return nil, err
	}
	if b.Reason != "" {
		return b, nil
	}
	if l.seq != w.prevSeq+1 {
		b.Reason = fmt.Sprintf("chain link %d is missing (deleted)", w.prevSeq+1)
		if l.seq > w.prevSeq+2 {
			b.Reason = fmt.Sprintf("chain links %d to %d are missing (deleted)", w.prevSeq+1, l.seq-1)
		}
		return b, nil
	}
	if chainHash(w.prev, digest) != l.hash || (l.kind == linkRun && stored != l.hash) {
		b.Reason = "altered (its hash does not match its content)"
		if l.kind == linkRun {
			b.Reason = "the run or its changes were altered (its hash does not match its content)"
		}
		return b, nil
	}
	w.prev, w.prevSeq = l.hash, l.seq
	return nil, nil
}

// linkDigest reads the row l links to and returns its digest (and a run's
// own copy of its hash), naming the row in b; a row that is missing, or a
// link of an unknown kind, sets b.Reason.
func (w *chainWalk) linkDigest(l link, b *Broken) (digest []byte, stored string, err error) {
	if l.kind == linkRun {
		return w.runDigest(l, b)
	}
	k, ok := chainRows[l.kind]
	if !ok {
		b.What, b.Reason = fmt.Sprintf("chain link %d", l.seq), fmt.Sprintf("unknown kind %q", l.kind)
		return nil, "", nil
	}
	what, runID, digest, err := k.load(w.ctx, w.tx, l.ref)
	if errors.Is(err, sql.ErrNoRows) {
		b.What, b.Reason = fmt.Sprintf("%s %d", k.name, l.ref), k.missing
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("verify: %s %d: %w", k.name, l.ref, dbError(err))
	}
	b.What, b.RunID = what, runID
	return digest, "", nil
}

// chainRow reads the rows of a kind of link other than a run.
type chainRow struct {
	name    string // "decision": "decision 4" in errors
	missing string // the Reason when the row is gone
	// load reads row id: its name for Broken.What, the run it concerns
	// (0: none) and its digest.
	load func(ctx context.Context, q querier, id int64) (what string, runID int64, digest []byte, err error)
}

var chainRows = map[string]chainRow{
	linkAllowlist: {"allowlist", "the approved allowlist is missing (deleted)",
		func(ctx context.Context, q querier, id int64) (string, int64, []byte, error) {
			r, err := scanAllowlistRow(q.QueryRowContext(ctx, "SELECT "+allowlistRowColumns+" FROM allowlists WHERE id = ?", id))
			if err != nil {
				return "", 0, nil, err
			}
			return fmt.Sprintf("allowlist version %d of %s", r.version, quote.Path(r.workspace)), 0, r.digest(), nil
		}},
	linkDecision: {"decision", "the decision is missing (deleted)",
		func(ctx context.Context, q querier, id int64) (string, int64, []byte, error) {
			d, err := loadDecisionRow(ctx, q, id)
			if err != nil {
				return "", 0, nil, err
			}
			return fmt.Sprintf("decision %d on run %d", id, d.runID), d.runID, d.digest(), nil
		}},
	linkStage: {"stage event", "the stage event is missing (deleted)",
		func(ctx context.Context, q querier, id int64) (string, int64, []byte, error) {
			d, err := loadStageEventRow(ctx, q, id)
			if err != nil {
				return "", 0, nil, err
			}
			return fmt.Sprintf("stage event %d (%s) on run %d", id, d.event, d.runID), d.runID, d.digest(), nil
		}},
}

// runDigest is linkDigest of a run: its row and changes; a run missing,
// or runs missing before it, set b.Reason.
func (w *chainWalk) runDigest(l link, b *Broken) (digest []byte, stored string, err error) {
	b.What, b.RunID = fmt.Sprintf("run %d", l.ref), l.ref
	row, h, err := loadRunRow(w.ctx, w.tx, l.ref)
	if errors.Is(err, ErrNotFound) {
		b.Reason = fmt.Sprintf("run %d is missing (deleted)", l.ref)
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("verify: %w", err)
	}
	cn := newCanon(row)
	if err := eachChange(w.ctx, w.tx, l.ref, func(c *changeRow) error { cn.change(c); return nil }); err != nil {
		return nil, "", fmt.Errorf("verify: %w", err)
	}
	if l.ref > w.prevRun+1 {
		b.Reason = fmt.Sprintf("run %d is missing (deleted)", w.prevRun+1)
		if l.ref > w.prevRun+2 {
			b.Reason = fmt.Sprintf("runs %d to %d are missing (deleted)", w.prevRun+1, l.ref-1)
		}
		return nil, "", nil
	}
	w.prevRun = l.ref
	return cn.sum(), h, nil
}

// unchained returns the first row the chain does not know: inserted
// behind diffgate's back.
func unchained(ctx context.Context, tx *sqlTx) (*Broken, error) {
	for _, o := range []struct{ kind, query string }{
		{linkRun, "SELECT min(id) FROM runs WHERE id NOT IN (SELECT ref FROM chain WHERE kind = 'run')"},
		{linkAllowlist, "SELECT min(id) FROM allowlists WHERE id NOT IN (SELECT ref FROM chain WHERE kind = 'allowlist')"},
		{linkDecision, "SELECT min(id) FROM decisions WHERE id NOT IN (SELECT ref FROM chain WHERE kind = 'decision')"},
		{linkStage, "SELECT min(id) FROM stage_events WHERE id NOT IN (SELECT ref FROM chain WHERE kind = 'stage')"},
	} {
		var id sql.NullInt64
		if err := tx.QueryRowContext(ctx, o.query).Scan(&id); err != nil {
			return nil, fmt.Errorf("verify: %w", dbError(err))
		}
		if !id.Valid {
			continue
		}
		b := &Broken{Reason: "not in the hash chain (inserted behind diffgate's back)"}
		if err := nameUnchained(ctx, tx, o.kind, id.Int64, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return nil, nil
}

// nameUnchained names in b the row of kind and id that the chain does not
// know.
func nameUnchained(ctx context.Context, tx *sqlTx, kind string, id int64, b *Broken) error {
	if kind == linkRun {
		b.What, b.RunID = fmt.Sprintf("run %d", id), id
		return nil
	}
	what, runID, _, err := chainRows[kind].load(ctx, tx, id)
	if err != nil {
		return fmt.Errorf("verify: %w", dbError(err))
	}
	b.What, b.RunID = what, runID
	return nil
}
