//go:build !js

package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/diffgate/diffgate/internal/quote"
)

// Allowlist is one approved version of a workspace's allowlist.
type Allowlist struct {
	// Workspace is the workspace's absolute path.
	Workspace string
	// Version counts approvals per workspace, from 1.
	Version int
	// Entries are the allowlist entries (policy syntax), in order.
	Entries []string
	// Note is the approver's note.
	Note string
	// CreatedAt is when the version was approved.
	CreatedAt time.Time
	// ApprovedBy is who approved it: the user name on the machine that
	// approved it, or on a team store the database role ("" for versions
	// approved before diffgate recorded it).
	ApprovedBy string
}

// scanAllowlist reads an allowlists row (allowlistRowColumns) and decodes it.
func scanAllowlist(sc interface{ Scan(...any) error }) (*Allowlist, *allowlistRow, error) {
	r, err := scanAllowlistRow(sc)
	if err != nil {
		return nil, nil, err
	}
	a := Allowlist{Workspace: r.workspace, Version: int(r.version), Note: r.note, ApprovedBy: r.approvedBy}
	if a.Entries, err = decodeList([]byte(r.entries)); err != nil {
		return nil, nil, fmt.Errorf("allowlist %s version %d: %w", a.Workspace, a.Version, err)
	}
	if a.CreatedAt, err = parseTime(r.createdAt); err != nil {
		return nil, nil, fmt.Errorf("allowlist %s version %d: %w", a.Workspace, a.Version, err)
	}
	return &a, r, nil
}

// checkedAllowlist reads one allowlists row and checks its link in the hash
// chain: an allowlist that a run would use must be one diffgate approved.
func (db *DB) checkedAllowlist(ctx context.Context, query string, args ...any) (*Allowlist, error) {
	a, r, err := scanAllowlist(db.sql.QueryRowContext(ctx, "SELECT "+allowlistRowColumns+" FROM allowlists "+query, args...))
	if err != nil {
		return nil, err
	}
	if err := checkLink(ctx, db.sql, linkAllowlist, r.id, r.digest()); err != nil {
		return nil, fmt.Errorf("version %d: %w", a.Version, err)
	}
	return a, nil
}

// LatestAllowlist returns the workspace's newest approved allowlist, or nil
// (and no error) when none was approved. An allowlist that does not hold
// its place in the hash chain is refused with an error.
func (db *DB) LatestAllowlist(ctx context.Context, workspace string) (*Allowlist, error) {
	workspace = db.ws(workspace)
	a, err := db.checkedAllowlist(ctx, "WHERE workspace = ? ORDER BY version DESC LIMIT 1", blob(workspace))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("allowlist of %s: %w", workspace, dbError(err))
	}
	return a, nil
}

// Allowlist returns one version of the workspace's allowlist; an unknown
// version gives an error wrapping ErrNotFound. A version that does not hold
// its place in the hash chain is refused with an error.
func (db *DB) Allowlist(ctx context.Context, workspace string, version int) (*Allowlist, error) {
	workspace = db.ws(workspace)
	a, err := db.checkedAllowlist(ctx, "WHERE workspace = ? AND version = ?", blob(workspace), version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("allowlist of %s: version %d: %w", workspace, version, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("allowlist of %s: %w", workspace, dbError(err))
	}
	return a, nil
}

// Allowlists returns every version of the workspace's allowlist, oldest first.
func (db *DB) Allowlists(ctx context.Context, workspace string) ([]Allowlist, error) {
	workspace = db.ws(workspace)
	rows, err := db.sql.QueryContext(ctx, "SELECT "+allowlistRowColumns+
		" FROM allowlists WHERE workspace = ? ORDER BY version", blob(workspace))
	if err != nil {
		return nil, fmt.Errorf("allowlists of %s: %w", workspace, dbError(err))
	}
	defer rows.Close()
	var out []Allowlist
	for rows.Next() {
		a, _, err := scanAllowlist(rows)
		if err != nil {
			return nil, fmt.Errorf("allowlists of %s: %w", workspace, dbError(err))
		}
		out = append(out, *a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("allowlists of %s: %w", workspace, dbError(err))
	}
	return out, nil
}

// Approve stores entries as the workspace's next allowlist version, with the
// reviewer's note, and returns it. The workspace must be an absolute path;
// earlier versions stay readable.
func (db *DB) Approve(ctx context.Context, workspace string, entries []string, note string) (*Allowlist, error) {
	return db.approve(ctx, 0, workspace, entries, note)
}

// ApproveRun approves entries, as Approve does, and records on run runID
// that the reviewer approved it with that version, in one transaction:
// both are written or neither.
func (db *DB) ApproveRun(ctx context.Context, runID int64, workspace string, entries []string, note string) (*Allowlist, error) {
	if runID <= 0 {
		return nil, fmt.Errorf("approve run %d: %w", runID, ErrNotFound)
	}
	return db.approve(ctx, runID, workspace, entries, note)
}

func (db *DB) approve(ctx context.Context, runID int64, workspace string, entries []string, note string) (*Allowlist, error) {
	workspace = db.ws(workspace)
	if !filepath.IsAbs(workspace) && !(db.pg && workspace != "") {
		return nil, fmt.Errorf("approve allowlist: workspace %q is not an absolute path", workspace)
	}
	if err := refuseInGatedRun("approve allowlist"); err != nil {
		return nil, err
	}
	a := &Allowlist{Workspace: workspace, Entries: append([]string{}, entries...), Note: note, CreatedAt: time.Now().UTC().Round(0)}
	err := db.write(ctx, "approve allowlist", func(tx *sqlTx) error {
		if runID != 0 {
			var ws []byte
			err := tx.QueryRowContext(ctx, "SELECT workspace FROM runs WHERE id = ?", runID).Scan(&ws)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("run %d: %w", runID, ErrNotFound)
			}
			if err != nil {
				return err
			}
			if string(ws) != workspace {
				return fmt.Errorf("run %d is a run of %s, not of %s", runID, quote.Path(string(ws)), quote.Path(workspace))
			}
		}
		if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) + 1 FROM allowlists WHERE workspace = ?",
			blob(workspace)).Scan(&a.Version); err != nil {
			return err
		}
		by, err := db.approver(ctx, tx)
		if err != nil {
			return err
		}
		a.ApprovedBy = by
		r := allowlistRow{workspace: workspace, version: int64(a.Version), entries: string(encodeList(a.Entries)),
			note: note, createdAt: formatTime(a.CreatedAt), approvedBy: by}
		r.id, err = tx.insertID(ctx, "INSERT INTO allowlists (workspace, version, entries, note, created_at, approved_by) VALUES (?, ?, ?, ?, ?, ?)",
			blob(r.workspace), r.version, blob(r.entries), r.note, r.createdAt, r.approvedBy)
		if err != nil {
			return err
		}
		if err := appendLink(ctx, tx, linkAllowlist, r.id, r.digest()); err != nil {
			return err
		}
		if runID == 0 {
			return nil
		}
		return insertDecision(ctx, tx, &decisionRow{runID: runID, decision: Approve, note: note, allowlistVersion: int64(a.Version)})
	})
	if err != nil {
		return nil, err
	}
	db.log.Info().Str("workspace", workspace).Int("version", a.Version).Int("entries", len(entries)).Int64("run", runID).Msg("allowlist approved")
	return a, nil
}

// DiffAllowlists lists the entries b adds to a (in b's order) and those it
// removes (in a's order). A nil allowlist counts as empty.
func DiffAllowlists(a, b *Allowlist) (added, removed []string) {
	var ea, eb []string
	if a != nil {
		ea = a.Entries
	}
	if b != nil {
		eb = b.Entries
	}
	inA, inB := set(ea), set(eb)
	for _, e := range eb {
		if !inA[e] {
			added = append(added, e)
			inA[e] = true // report a duplicate once
		}
	}
	for _, e := range ea {
		if !inB[e] {
			removed = append(removed, e)
			inB[e] = true
		}
	}
	return added, removed
}

func set(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}
