package queue

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/pgtest"
)

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1": "SELECT 1",
		"UPDATE jobs SET a = ?, b = ? WHERE id = ?":             "UPDATE jobs SET a = $1, b = $2 WHERE id = $3",
		"SELECT '?', 'it''s ?', x FROM t WHERE y = ?":           "SELECT '?', 'it''s ?', x FROM t WHERE y = $1",
		`SELECT "odd?name" FROM t WHERE a IN (?,?,?)`:           `SELECT "odd?name" FROM t WHERE a IN ($1,$2,$3)`,
		"SELECT a -- why?\nFROM t WHERE b = ?":                  "SELECT a -- why?\nFROM t WHERE b = $1",
		"SELECT 'unterminated ?":                                "SELECT 'unterminated ?",
		"error = 'lease ' || attempts || ' times' WHERE id = ?": "error = 'lease ' || attempts || ' times' WHERE id = $1",
	} {
		if got := Rebind(in); got != want {
			t.Errorf("Rebind(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDescribeAndRedactHideThePassword(t *testing.T) {
	for dsn, want := range map[string]string{
		"/var/lib/catalogbot/queue.db":                                  "/var/lib/catalogbot/queue.db",
		"postgres://bot:s3cr%40t@db.internal:5432/catalogbot?sslmode=x": "postgres://db.internal:5432/catalogbot",
		"postgresql://bot:s3cret@/catalogbot?host=/run/postgresql":      "postgres:///run/postgresql/catalogbot",
	} {
		if got := Describe(dsn); got != want {
			t.Errorf("Describe(%q) = %q, want %q", dsn, got, want)
		}
	}
	cause := errors.New(`cannot parse "postgres://bot:s3cr%40t@db:x/q": s3cr@t`)
	err := redact(cause, "postgres://bot:s3cr%40t@db:x/q")
	if strings.Contains(err.Error(), "s3cr") || !errors.Is(err, cause) {
		t.Errorf("redacted error %q (wraps the cause: %v)", err, errors.Is(err, cause))
	}
	// A URL that does not parse: its error names neither the URL nor the password.
	_, err = Open(context.Background(), "postgres://bot:hunter2hunter2@db.internal:notaport/catalogbot")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Open of an invalid URL: %v", err)
	}
}

// A wrong password is refused by a real server; the error names the database, never the password.
func TestOpenPostgresWrongPasswordDoesNotLeakIt(t *testing.T) {
	dsn := pgtest.Start(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("postgres", "wrong-"+pgtest.Password(dsn))
	_, err = Open(context.Background(), u.String())
	if err == nil {
		t.Fatal("opened with a wrong password")
	}
	if strings.Contains(err.Error(), pgtest.Password(dsn)) || !strings.Contains(err.Error(), Describe(dsn)) {
		t.Errorf("error %q: want the database named and no password", err)
	}
	q := open(t, dsn)
	if q.DB().Dialect() != Postgres || q.DB().String() != Describe(dsn) || strings.Contains(q.DB().String(), pgtest.Password(dsn)) {
		t.Errorf("DB %s (%s)", q.DB(), q.DB().Dialect())
	}
}
