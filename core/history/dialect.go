//go:build !js

package history

import (
	"context"
	"database/sql"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The history's SQL is written once, in SQLite's dialect (? parameters,
// INSERT OR IGNORE, INSERT OR REPLACE). sqlDB and sqlTx run it on either
// store: on PostgreSQL each statement is rewritten (see pgRebind) before
// it reaches the driver. Everything else database/sql offers passes
// through unchanged.

// sqlDB is the store's connection pool.
type sqlDB struct {
	*sql.DB
	pg bool
}

// sqlTx is one transaction of a sqlDB.
type sqlTx struct {
	*sql.Tx
	pg bool
}

func (d *sqlDB) q(query string) string {
	if d.pg {
		return pgRebind(query)
	}
	return query
}

func (t *sqlTx) q(query string) string {
	if t.pg {
		return pgRebind(query)
	}
	return query
}

func (d *sqlDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return d.DB.QueryRowContext(ctx, d.q(query), args...)
}

func (d *sqlDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.DB.QueryContext(ctx, d.q(query), args...)
}

func (d *sqlDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.DB.ExecContext(ctx, d.q(query), args...)
}

func (d *sqlDB) BeginTx(ctx context.Context, opts *sql.TxOptions) (*sqlTx, error) {
	tx, err := d.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &sqlTx{Tx: tx, pg: d.pg}, nil
}

func (t *sqlTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, t.q(query), args...)
}

func (t *sqlTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(ctx, t.q(query), args...)
}

func (t *sqlTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.q(query), args...)
}

func (t *sqlTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.Tx.PrepareContext(ctx, t.q(query))
}

// insertID runs an INSERT of one row into a table whose key is id and
// returns the new row's id (SQLite: its rowid; PostgreSQL: RETURNING id).
func (t *sqlTx) insertID(ctx context.Context, query string, args ...any) (int64, error) {
	if t.pg {
		var id int64
		err := t.QueryRowContext(ctx, query+" RETURNING id", args...).Scan(&id)
		return id, err
	}
	res, err := t.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

var (
	pgCache   sync.Map // SQLite statement → PostgreSQL statement
	orIgnore  = regexp.MustCompile(`(?s)^\s*INSERT OR IGNORE INTO`)
	orReplace = regexp.MustCompile(`(?s)^\s*INSERT OR REPLACE INTO\s+(\w+)\s*\(([^)]*)\)`)
)

// pgRebind rewrites a statement of the history's SQLite dialect for
// PostgreSQL: ? and ?N parameters become $N (outside string literals),
// INSERT OR IGNORE becomes ON CONFLICT DO NOTHING, and INSERT OR REPLACE
// an upsert on the table's first column (its key).
func pgRebind(query string) string {
	if out, ok := pgCache.Load(query); ok {
		return out.(string)
	}
	var b strings.Builder
	n, inStr := 0, false
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'':
			inStr = !inStr
			b.WriteByte(c)
		case c == '?' && !inStr:
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j > i+1 {
				b.WriteString("$" + query[i+1:j])
				i = j - 1
			} else {
				n++
				b.WriteString("$" + strconv.Itoa(n))
			}
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	switch {
	case orIgnore.MatchString(out):
		out = orIgnore.ReplaceAllString(out, "INSERT INTO") + " ON CONFLICT DO NOTHING"
	case orReplace.MatchString(out):
		m := orReplace.FindStringSubmatch(out)
		cols := strings.Split(m[2], ",")
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		var set []string
		for _, c := range cols[1:] {
			set = append(set, c+" = EXCLUDED."+c)
		}
		out = "INSERT INTO" + strings.TrimPrefix(strings.TrimSpace(out), "INSERT OR REPLACE INTO") +
			" ON CONFLICT (" + cols[0] + ") DO UPDATE SET " + strings.Join(set, ", ")
	}
	pgCache.Store(query, out)
	return out
}
