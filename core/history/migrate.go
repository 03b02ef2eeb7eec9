//go:build !js

package history

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one numbered schema step, migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded schema steps in order; migrations[i] has
// version i+1, and PRAGMA user_version holds the last one applied.
var migrations = mustLoadMigrations(migrationFS)

func mustLoadMigrations(fsys fs.FS) []migration {
	ms, err := loadMigrations(fsys)
	if err != nil {
		panic(err)
	}
	return ms
}

// migrationHooks hold the Go half of a migration, run in its transaction
// after its SQL, for what SQL alone cannot compute.
var migrationHooks = map[int]func(context.Context, *sqlTx) error{
	2: adoptIntoChain,
}

// loadMigrations reads migrations/NNNN_name.sql, checking they are numbered
// 1, 2, 3, ... without gaps.
func loadMigrations(fsys fs.FS) ([]migration, error) { return loadMigrationsIn(fsys, "migrations") }

// loadMigrationsIn reads dir/NNNN_name.sql (see loadMigrations).
func loadMigrationsIn(fsys fs.FS, dir string) ([]migration, error) {
	names, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for i, name := range names { // fs.Glob returns sorted names
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || len(num) != 4 {
			return nil, fmt.Errorf("history: migration %s: name must be NNNN_name.sql", name)
		}
		if v != i+1 {
			return nil, fmt.Errorf("history: migration %s: want version %d", name, i+1)
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(data)})
	}
	return out, nil
}

// migrate applies the migrations the database lacks, up to version target,
// each in its own transaction together with the user_version update. A
// database newer than the code is refused and left alone.
func (db *DB) migrate(ctx context.Context, target int) error {
	if db.pg {
		return db.migratePG(ctx)
	}
	for _, m := range migrations[:target] {
		applied := false
		err := db.write(ctx, "migrate to schema "+strconv.Itoa(m.version), func(tx *sqlTx) error {
			applied = false
			var cur int
			if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
				return err
			}
			if cur > len(migrations) {
				return newerError(cur)
			}
			if cur >= m.version {
				return nil
			}
			if cur != m.version-1 {
				return fmt.Errorf("schema version %d, expected %d", cur, m.version-1)
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			if hook := migrationHooks[m.version]; hook != nil {
				if err := hook(ctx, tx); err != nil {
					return fmt.Errorf("%s: %w", m.name, err)
				}
			}
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
				return err
			}
			applied = true
			return nil
		})
		if err != nil {
			return err
		}
		if applied {
			db.log.Info().Str("path", db.path).Str("migration", m.name).Msg("history schema migrated")
		}
	}
	return nil
}

// SchemaVersion returns the database's schema version (PRAGMA user_version).
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	if db.pg {
		return db.pgSchemaVersion(ctx)
	}
	var v int
	err := db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}
