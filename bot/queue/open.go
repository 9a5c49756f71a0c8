package queue

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// IsPostgres reports whether dsn names a PostgreSQL database (a postgres:// or postgresql:// URL) rather
// than a SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Describe names the database dsn opens, for logs and errors: the SQLite path, or
// postgres://host/dbname without user, password or parameters.
func Describe(dsn string) string {
	if !IsPostgres(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	host := u.Host
	if host == "" {
		host = u.Query().Get("host") // a unix socket directory
	}
	return "postgres://" + host + "/" + strings.TrimPrefix(u.Path, "/")
}

func openSQLite(path string) (*DB, error) {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(NORMAL)", "busy_timeout(10000)", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open queue database %s: %w", path, err)
	}
	// One connection: SQLite serializes writers anyway, and one connection never sees SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	return &DB{db: db, dialect: SQLite, name: path}, nil
}

// openPostgres connects through pgx's database/sql driver and checks the server answers.
func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	name := Describe(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("queue database %s: %w", name, redact(err, dsn))
	}
	db := stdlib.OpenDB(*cfg)
	// Workers, heartbeats, webhook handlers and the announcer share the pool; a claim holds a connection
	// for ~1 ms, and a process's claims take turns (see Claim). With 16 connections a 500-delivery burst
	// (8 workers) waited for one 1,336 times, 112 s together; with 32, 600 times, 15 s. A replica opens at
	// most 32: PostgreSQL's default max_connections (100) holds three.
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to queue database %s: %w", name, redact(err, dsn))
	}
	return &DB{db: db, dialect: Postgres, name: name}, nil
}

// redacted is an error whose message had the database password removed; errors.Is and errors.As still see
// the original.
type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

// redact removes dsn and its password (as written and decoded) from err's message.
func redact(err error, dsn string) error {
	secrets := []string{dsn}
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			secrets = append(secrets, pw)
		}
	}
	// The password as written (percent-encoded), even when the URL does not parse.
	if _, rest, ok := strings.Cut(dsn, "://"); ok {
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
				secrets = append(secrets, pw)
				if dec, err := url.PathUnescape(pw); err == nil {
					secrets = append(secrets, dec)
				}
			}
		}
	}
	msg := err.Error()
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	if msg == err.Error() {
		return err
	}
	return &redacted{msg: msg, err: err}
}
