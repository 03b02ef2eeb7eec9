//go:build !js

package history

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/diffgate/diffgate/internal/bytesize"
	"github.com/jackc/pgx/v5/pgconn"
)

// The text store keeps compressed, content-addressed copies of each
// workspace's small text files, so that a later run whose before-snapshot
// reuses a file's hash (and so never reads it) can still diff it. Each
// workspace's copies are bounded by a budget; the least recently used go
// first. The table is created on first use.

// MaxText is the largest file the text store keeps.
const MaxText = 256 << 10

// DefaultTextBudget bounds the text store per workspace.
const DefaultTextBudget = 256 << 20

// EnvTextBudget overrides DefaultTextBudget: bytes, or with a K, M or G
// suffix (powers of 1024); 0 keeps nothing.
const EnvTextBudget = "DIFFGATE_TEXT_BUDGET"

// TextBudget returns the per-workspace budget of the text store: the value
// of EnvTextBudget when set, else DefaultTextBudget.
func TextBudget() (int64, error) {
	v := strings.TrimSpace(os.Getenv(EnvTextBudget))
	if v == "" {
		return DefaultTextBudget, nil
	}
	n, ok := bytesize.Parse(v)
	if !ok {
		return 0, fmt.Errorf("%s=%q: want a size in bytes, e.g. 256M", EnvTextBudget, os.Getenv(EnvTextBudget))
	}
	return n, nil
}

const textStoreSchema = `CREATE TABLE IF NOT EXISTS text_store (
    id        INTEGER PRIMARY KEY,
    workspace BLOB    NOT NULL,
    sha256    TEXT    NOT NULL, -- hex SHA-256 of the uncompressed content
    size      INTEGER NOT NULL, -- uncompressed
    stored    INTEGER NOT NULL, -- length of data: what the budget counts
    encoding  TEXT    NOT NULL CHECK (encoding IN ('raw', 'deflate')),
    data      BLOB    NOT NULL,
    used      INTEGER NOT NULL, -- LRU clock of the workspace: higher is newer
    UNIQUE (workspace, sha256)
);
CREATE INDEX IF NOT EXISTS text_store_lru ON text_store (workspace, used);
-- Contents the store has no copy of for want of budget: evicted, or not
-- kept by the run that read them. A later diff says "budget", not "not kept".
CREATE TABLE IF NOT EXISTS text_missed (
    workspace BLOB NOT NULL,
    sha256    TEXT NOT NULL,
    PRIMARY KEY (workspace, sha256)
) WITHOUT ROWID;
-- The bytes a workspace's store holds (sum of stored), as of the store's
-- LRU clock: a store whose max(used) differs was written by a diffgate
-- that kept no total, and is summed again.
CREATE TABLE IF NOT EXISTS text_totals (
    workspace BLOB    PRIMARY KEY,
    total     INTEGER NOT NULL,
    clock     INTEGER NOT NULL
) WITHOUT ROWID`

// TextStats describes one KeepTexts.
type TextStats struct {
	// Added and AddedBytes count the new copies (stored, compressed bytes).
	Added      int
	AddedBytes int64
	// Evicted counts the copies removed to stay within the budget.
	Evicted int
	// Total is the workspace's stored bytes afterwards.
	Total int64
	Took  time.Duration
}

// KeepTexts stores the contents texts yields (by SHA-256) that the
// workspace's store lacks, marks the hashes in used (contents a run looked
// up) as recently used, and evicts the least recently used copies beyond
// budget. Contents over MaxText, or not matching their hash, are skipped.
// The hashes overBudget yields (contents a run could not keep for its
// budget), and those evicted, are remembered as missed for want of budget
// (see TextMissed) until a copy is stored.
func (db *DB) KeepTexts(ctx context.Context, workspace string, texts func(yield func(sha string, data []byte) bool), overBudget func(yield func(sha string) bool), used []string, budget int64) (TextStats, error) {
	if db.pg {
		if c := db.caches(); c != nil {
			return c.KeepTexts(ctx, workspace, texts, overBudget, used, budget)
		}
		return TextStats{}, nil
	}
	start := time.Now()
	var st TextStats
	if err := refuseInGatedRun("keep texts"); err != nil {
		return st, err
	}
	// A run that offers nothing and used nothing changes nothing (a staged
	// no-op over a large tree: no scan of the store).
	offered, missed := offeredTexts(texts, overBudget, budget)
	if len(offered) == 0 && len(missed) == 0 && len(used) == 0 {
		st.Took = time.Since(start)
		return st, nil
	}
	have, err := db.storedTexts(ctx, workspace, offered, missed)
	if err != nil {
		return st, err
	}
	// Check and compress outside the transaction (other writers wait only
	// for the inserts), on every core.
	add := compressTexts(ctx, newTexts(offered, have))
	if err := ctx.Err(); err != nil {
		return st, err
	}
	ws := blob(workspace)
	err = db.write(ctx, "keep texts", func(tx *sqlTx) error {
		st = TextStats{}
		t := &textTx{ctx: ctx, tx: tx, ws: ws, st: &st}
		if err := t.begin(db.pg); err != nil {
			return err
		}
		if err := t.insert(add); err != nil {
			return err
		}
		if err := t.remember(missed, have); err != nil {
			return err
		}
		if err := t.touch(used); err != nil {
			return err
		}
		return t.evict(budget)
	})
	st.Took = time.Since(start)
	if err != nil {
		return st, err
	}
	db.log.Debug().Int("added", st.Added).Int64("added_bytes", st.AddedBytes).Int("evicted", st.Evicted).
		Int64("total", st.Total).Dur("took", st.Took).Msg("texts kept")
	return st, nil
}

// offeredTexts collects what a run offers the text store: the texts to add
// (within MaxText, under a well-formed hash; none without a budget) and the
// contents missed for the budget.
func offeredTexts(texts func(yield func(sha string, data []byte) bool), overBudget func(yield func(sha string) bool), budget int64) (offered []keptContent, missed []string) {
	if texts != nil && budget > 0 {
		texts(func(sha string, data []byte) bool {
			if len(data) <= MaxText && isHexSHA(sha) {
				offered = append(offered, keptContent{sha: sha, size: len(data), data: data})
			}
			return true
		})
	}
	if overBudget != nil {
		overBudget(func(sha string) bool {
			missed = append(missed, sha)
			return true
		})
	}
	return offered, missed
}

// newTexts returns the offered texts the store does not have, each once,
// and marks them in have.
func newTexts(offered []keptContent, have map[string]bool) []keptContent {
	var add []keptContent
	for _, k := range offered {
		if !have[k.sha] {
			have[k.sha] = true
			add = append(add, k)
		}
	}
	return add
}

// textTx is one KeepTexts transaction on a workspace's text store.
type textTx struct {
	ctx   context.Context
	tx    *sqlTx
	ws    []byte
	clock int64 // the run's use stamp: one more than the latest
	st    *TextStats
}

// begin makes the tables where needed, takes the run's clock and the
// bytes the store holds (its saved total when still current).
func (t *textTx) begin(pg bool) error {
	if !pg { // a team store has it from its first migration
		if _, err := t.tx.ExecContext(t.ctx, textStoreSchema); err != nil {
			return err
		}
	}
	if err := t.tx.QueryRowContext(t.ctx, "SELECT coalesce(max(used), 0) + 1 FROM text_store WHERE workspace = ?", t.ws).Scan(&t.clock); err != nil {
		return err
	}
	var at int64
	switch err := t.tx.QueryRowContext(t.ctx, "SELECT total, clock FROM text_totals WHERE workspace = ?", t.ws).Scan(&t.st.Total, &at); {
	case err == nil && at == t.clock-1:
	case err == nil || errors.Is(err, sql.ErrNoRows):
		if err := t.tx.QueryRowContext(t.ctx, "SELECT coalesce(sum(stored), 0) FROM text_store WHERE workspace = ?", t.ws).Scan(&t.st.Total); err != nil {
			return err
		}
	default:
		return err
	}
	return nil
}

// insert stores the new texts, counting those not stored meanwhile by
// another run, and forgets them as missed.
func (t *textTx) insert(add []keptContent) error {
	if len(add) == 0 {
		return nil
	}
	stmt, err := t.tx.PrepareContext(t.ctx, `INSERT OR IGNORE INTO text_store (workspace, sha256, size, stored, encoding, data, used)
				VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, k := range add {
		r, err := stmt.ExecContext(t.ctx, t.ws, k.sha, k.size, len(k.data), k.encoding, k.data, t.clock)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			continue // stored meanwhile by another run
		}
		t.st.Added++
		t.st.AddedBytes += int64(len(k.data))
		t.st.Total += int64(len(k.data))
	}
	_, err = t.tx.ExecContext(t.ctx, `DELETE FROM text_missed WHERE workspace = ?1 AND sha256 IN
				(SELECT sha256 FROM text_store WHERE workspace = ?1 AND used = ?2)`, t.ws, t.clock)
	return err
}

// remember notes the missed contents the store does not have as missed
// for want of budget.
func (t *textTx) remember(missed []string, have map[string]bool) error {
	return t.execEach("INSERT OR IGNORE INTO text_missed (workspace, sha256) VALUES (?, ?)", missed, func(sha string) []any {
		if have[sha] {
			return nil
		}
		return []any{t.ws, sha}
	})
}

// touch marks the texts the run used as recently used.
func (t *textTx) touch(used []string) error {
	return t.execEach("UPDATE text_store SET used = ? WHERE workspace = ? AND sha256 = ?", used, func(sha string) []any {
		return []any{t.clock, t.ws, sha}
	})
}

// execEach runs query, prepared once, for each of shas with the arguments
// args returns (nil: none for that hash).
func (t *textTx) execEach(query string, shas []string, args func(sha string) []any) error {
	if len(shas) == 0 {
		return nil
	}
	stmt, err := t.tx.PrepareContext(t.ctx, query)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, sha := range shas {
		if a := args(sha); a != nil {
			if _, err := stmt.ExecContext(t.ctx, a...); err != nil {
				return err
			}
		}
	}
	return nil
}

// evict removes the least recently used texts until the rest fits the
// budget, noting them as missed, and saves the store's total.
func (t *textTx) evict(budget int64) error {
	if t.st.Total <= budget {
		return saveTotal(t.ctx, t.tx, t.ws, t.st.Total)
	}
	rows, err := t.tx.QueryContext(t.ctx, "SELECT id, stored FROM text_store WHERE workspace = ? ORDER BY used, id", t.ws)
	if err != nil {
		return err
	}
	var victims []int64
	for rows.Next() && t.st.Total > budget {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return err
		}
		victims = append(victims, id)
		t.st.Total -= n
	}
	rows.Close()
	for _, id := range victims {
		if _, err := t.tx.ExecContext(t.ctx, "INSERT OR IGNORE INTO text_missed (workspace, sha256) SELECT workspace, sha256 FROM text_store WHERE id = ?", id); err != nil {
			return err
		}
		if _, err := t.tx.ExecContext(t.ctx, "DELETE FROM text_store WHERE id = ?", id); err != nil {
			return err
		}
	}
	t.st.Evicted = len(victims)
	return saveTotal(t.ctx, t.tx, t.ws, t.st.Total)
}

// Text returns the workspace's stored copy of the content with this
// SHA-256; the error wraps ErrNotFound when there is none.
func (db *DB) Text(ctx context.Context, workspace, sha string) ([]byte, error) {
	if db.pg {
		if c := db.caches(); c != nil {
			return c.Text(ctx, workspace, sha)
		}
		return nil, fmt.Errorf("text %s: %w", sha, ErrNotFound)
	}
	var size int64
	var encoding string
	var data []byte
	err := db.sql.QueryRowContext(ctx, "SELECT size, encoding, data FROM text_store WHERE workspace = ? AND sha256 = ?",
		blob(workspace), sha).Scan(&size, &encoding, &data)
	if errors.Is(err, sql.ErrNoRows) || isNoTable(err) {
		return nil, fmt.Errorf("text %s: %w", sha, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("text %s: %w", sha, dbError(err))
	}
	return decodeStored("text", sha, encoding, data, size)
}

// TextMissed reports whether the workspace's store lacks the content with
// this SHA-256 for want of budget (evicted, or never kept by a run whose
// budget was spent).
func (db *DB) TextMissed(ctx context.Context, workspace, sha string) bool {
	if db.pg {
		c := db.caches()
		return c != nil && c.TextMissed(ctx, workspace, sha)
	}
	var n int
	err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM text_missed WHERE workspace = ? AND sha256 = ?", blob(workspace), sha).Scan(&n)
	return err == nil && n > 0
}

// isNoTable reports whether err is SQLite's "no such table" (the text
// store of a database that never stored a text).
func isNoTable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "42P01" // undefined_table
	}
	return err != nil && strings.Contains(err.Error(), "no such table")
}

// compressTexts checks each content against its hash (never store under a
// wrong key) and compresses it, in parallel; it returns the good ones.
func compressTexts(ctx context.Context, in []keptContent) []keptContent {
	workers := min(runtime.GOMAXPROCS(0), 8)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One compressor per worker: a new one per file costs more than
			// compressing a small file.
			var zbuf bytes.Buffer
			zw, _ := flate.NewWriter(&zbuf, flate.BestSpeed) // a valid level never fails
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(in) {
					return
				}
				k := &in[i]
				if sum := sha256.Sum256(k.data); hex.EncodeToString(sum[:]) != k.sha {
					k.sha = ""
					continue
				}
				k.encoding = "raw"
				zbuf.Reset()
				zw.Reset(&zbuf)
				zw.Write(k.data)
				zw.Close()
				if zbuf.Len() < len(k.data) {
					k.encoding, k.data = "deflate", bytes.Clone(zbuf.Bytes())
				}
				if k.data == nil {
					k.data = []byte{}
				}
			}
		}()
	}
	wg.Wait()
	out := in[:0]
	for _, k := range in {
		if k.sha != "" && k.encoding != "" {
			out = append(out, k)
		}
	}
	return out
}

// fewTexts is the number of contents up to which storedTexts looks each up
// rather than reading every SHA-256 the workspace's store holds.
const fewTexts = 2048

// storedTexts returns which of the offered and missed contents the
// workspace's text store holds (all it holds, for many).
func (db *DB) storedTexts(ctx context.Context, workspace string, offered []keptContent, missed []string) (map[string]bool, error) {
	have := map[string]bool{}
	ws := blob(workspace)
	if n := len(offered) + len(missed); n <= fewTexts {
		stmt, err := db.sql.PrepareContext(ctx, "SELECT 1 FROM text_store WHERE workspace = ? AND sha256 = ?")
		if isNoTable(err) {
			return have, nil
		}
		if err != nil {
			return nil, fmt.Errorf("text store: %w", dbError(err))
		}
		defer stmt.Close()
		look := func(sha string) error {
			var one int
			switch err := stmt.QueryRowContext(ctx, ws, sha).Scan(&one); {
			case err == nil:
				have[sha] = true
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("text store: %w", dbError(err))
			}
			return nil
		}
		for _, k := range offered {
			if err := look(k.sha); err != nil {
				return nil, err
			}
		}
		for _, sha := range missed {
			if err := look(sha); err != nil {
				return nil, err
			}
		}
		return have, nil
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT sha256 FROM text_store WHERE workspace = ?", ws)
	switch {
	case err == nil:
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return nil, fmt.Errorf("text store: %w", dbError(err))
			}
			have[s] = true
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("text store: %w", dbError(err))
		}
	case !isNoTable(err):
		return nil, fmt.Errorf("text store: %w", dbError(err))
	}
	return have, nil
}

// saveTotal records total as the bytes ws's text store holds, as of its
// clock now.
func saveTotal(ctx context.Context, tx *sqlTx, ws []byte, total int64) error {
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO text_totals (workspace, total, clock)
		SELECT ?1, ?2, coalesce(max(used), 0) FROM text_store WHERE workspace = ?1`, ws, total)
	return err
}
