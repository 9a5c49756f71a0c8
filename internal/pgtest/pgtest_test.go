package pgtest

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

func TestMain(m *testing.M) { Main(m) }

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Each test gets its own empty database on one server, behind a password, and it is dropped afterwards.
func TestStartGivesEachTestItsOwnDatabase(t *testing.T) {
	var first string
	t.Run("first", func(t *testing.T) {
		first = Start(t)
		db := open(t, first)
		if _, err := db.ExecContext(t.Context(), "CREATE TABLE marker (x INT)"); err != nil {
			t.Fatal(err)
		}
	})
	second := Start(t)
	if second == first || Password(second) == "" || !strings.HasPrefix(second, "postgres://postgres:") {
		t.Fatalf("second URL %q (first %q): want another database behind a password", second, first)
	}
	db := open(t, second)
	var tables int
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM pg_tables WHERE tablename = 'marker'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Error("the second database holds the first test's table")
	}
	var dropped bool
	name := first[strings.LastIndex(first, "/")+1 : strings.Index(first, "?")]
	if err := db.QueryRowContext(context.Background(), "SELECT NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&dropped); err != nil {
		t.Fatal(err)
	}
	if !dropped {
		t.Errorf("database %s outlived its test", name)
	}
	// The password is required: without it the server refuses the connection.
	noPassword := strings.Replace(second, ":"+Password(second)+"@", "@", 1)
	if err := open(t, noPassword).PingContext(t.Context()); err == nil {
		t.Error("connected without the password")
	}
}
