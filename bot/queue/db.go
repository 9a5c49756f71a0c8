package queue

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Dialect names the database engine behind a DB.
type Dialect string

const (
	// SQLite is the embedded default (one process).
	SQLite Dialect = "sqlite"
	// Postgres is PostgreSQL, shared by several replicas.
	Postgres Dialect = "postgres"
)

// DB is the queue's database, shared with the bot's own tables. Statements are written once with `?`
// placeholders; on PostgreSQL they are rewritten to `$1, $2, ...` (see Rebind). Write SQL that both
// engines accept (ON CONFLICT, RETURNING, ||, CASE) and branch on Dialect only for schemas.
type DB struct {
	db      *sql.DB
	dialect Dialect
	name    string   // what errors and logs call the database: a path, or host/dbname (never a password)
	rebound sync.Map // query text → PostgreSQL text
}

// Dialect is the engine behind the database.
func (d *DB) Dialect() Dialect { return d.dialect }

// String names the database for logs: the SQLite path, or postgres://host/dbname without credentials.
func (d *DB) String() string { return d.name }

func (d *DB) q(query string) string {
	if d.dialect != Postgres {
		return query
	}
	if v, ok := d.rebound.Load(query); ok {
		return v.(string)
	}
	out := Rebind(query)
	d.rebound.Store(query, out)
	return out
}

// ExecContext runs a statement.
func (d *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.db.ExecContext(ctx, d.q(query), args...)
}

// QueryContext runs a query.
func (d *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.db.QueryContext(ctx, d.q(query), args...)
}

// QueryRowContext runs a query expected to return at most one row.
func (d *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return d.db.QueryRowContext(ctx, d.q(query), args...)
}

// BeginTx starts a transaction. Keep it short: on SQLite the queue shares its single connection.
func (d *DB) BeginTx(ctx context.Context, opts *sql.TxOptions) (*Tx, error) {
	tx, err := d.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &Tx{tx: tx, db: d}, nil
}

// Tx is a transaction on a DB; its statements are rebound like the DB's.
type Tx struct {
	tx *sql.Tx
	db *DB
}

// ExecContext runs a statement in the transaction.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.db.q(query), args...)
}

// QueryContext runs a query in the transaction.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.db.q(query), args...)
}

// QueryRowContext runs a query in the transaction expected to return at most one row.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.db.q(query), args...)
}

// Commit commits the transaction.
func (t *Tx) Commit() error { return t.tx.Commit() }

// Rollback aborts the transaction (a no-op after Commit).
func (t *Tx) Rollback() error { return t.tx.Rollback() }

// schemaLock is the PostgreSQL advisory lock key held while tables are created: replicas starting
// together would otherwise race in CREATE TABLE IF NOT EXISTS (it is not atomic with respect to itself).
const schemaLock int64 = 0x636174626f740001

// CreateTables runs the dialect's DDL (several statements; each must be idempotent: IF NOT EXISTS). what
// names the tables in errors.
func (d *DB) CreateTables(ctx context.Context, what, sqlite, postgres string) error {
	if d.dialect != Postgres {
		if _, err := d.db.ExecContext(ctx, sqlite); err != nil {
			return fmt.Errorf("create %s in %s: %w", what, d.name, err)
		}
		return nil
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create %s in %s: %w", what, d.name, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", schemaLock); err != nil {
		return fmt.Errorf("create %s in %s: lock: %w", what, d.name, err)
	}
	for _, stmt := range statements(postgres) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create %s in %s: %w", what, d.name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create %s in %s: %w", what, d.name, err)
	}
	return nil
}

// statements splits DDL at semicolons (DDL here has no semicolons inside literals).
func statements(ddl string) []string {
	var out []string
	for s := range strings.SplitSeq(ddl, ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Rebind rewrites `?` placeholders as PostgreSQL's `$1, $2, ...`. A `?` inside a string literal ('...'),
// a quoted identifier ("...") or a -- comment is left alone.
func Rebind(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch c {
		case '\'', '"':
			end := closing(query, i+1, c)
			b.WriteString(query[i:end])
			i = end - 1
		case '-':
			if i+1 < len(query) && query[i+1] == '-' {
				end := strings.IndexByte(query[i:], '\n')
				if end < 0 {
					end = len(query) - i
				}
				b.WriteString(query[i : i+end])
				i += end - 1
				continue
			}
			b.WriteByte(c)
		case '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// closing returns the index just past the quote q that closes a literal starting at from (a doubled quote
// is an escaped one); len(s) when unterminated.
func closing(s string, from int, q byte) int {
	for i := from; i < len(s); i++ {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(s)
}
