// Package pgtest gives tests real PostgreSQL databases: one server per test binary (initdb and postgres
// from the system's installation, run as the postgres user when the tests run as root, listening on
// loopback with password authentication) and a fresh database per test.
//
// A package using it calls Main from TestMain, which stops the server and removes its directory after
// the tests:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Without PostgreSQL installed, Start skips the test with a message in capitals, unless
// CATALOGBOT_REQUIRE_POSTGRES=1, then it fails. CATALOGBOT_POSTGRES_DSN names an existing server (a
// superuser URL) to create the databases on instead of starting one.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Environment variables.
const (
	RequireEnv = "CATALOGBOT_REQUIRE_POSTGRES"
	DSNEnv     = "CATALOGBOT_POSTGRES_DSN"
)

var (
	mainActive atomic.Bool
	mu         sync.Mutex
	shared     *cluster // started on first use
	startErr   error    // why it could not start (sticky: one attempt per binary)
	skipReason string   // set when PostgreSQL is not installed
	seq        atomic.Int64
)

// cluster is the server the databases are created on.
type cluster struct {
	admin  *sql.DB
	base   *url.URL // the admin URL; a test's URL is it with another path
	server *server  // nil for an existing server (DSNEnv)
}

// Main runs the tests of a binary (call it from TestMain) and stops the server Start started, if any.
func Main(m *testing.M) {
	mainActive.Store(true)
	code := m.Run()
	mu.Lock()
	if shared != nil {
		shared.close()
		shared = nil
	}
	mu.Unlock()
	os.Exit(code)
}

// Start returns the URL (postgres://user:password@127.0.0.1:port/t_...) of a new, empty database that
// only this test uses; it is dropped when the test ends.
func Start(tb testing.TB) string {
	tb.Helper()
	c := get(tb)
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := c.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u := *c.base
	u.Path = "/" + name
	return u.String()
}

// Password returns the password in a URL Start returned ("" when none), for tests that must not leak it.
func Password(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}

func get(tb testing.TB) *cluster {
	tb.Helper()
	if !mainActive.Load() {
		tb.Fatal("pgtest: call pgtest.Main(m) from the package's TestMain (it stops the server after the tests)")
	}
	mu.Lock()
	defer mu.Unlock()
	if shared == nil && startErr == nil && skipReason == "" {
		shared, skipReason, startErr = connect()
	}
	switch {
	case skipReason != "" && os.Getenv(RequireEnv) == "1":
		tb.Fatalf("pgtest: %s, and %s=1", skipReason, RequireEnv)
	case skipReason != "":
		tb.Skipf("POSTGRESQL TESTS SKIPPED: %s (set %s or install postgresql)", skipReason, DSNEnv)
	case startErr != nil:
		tb.Fatalf("pgtest: %v", startErr)
	}
	return shared
}

// connect opens the admin connection to DSNEnv's server or to a server it starts; skip says why there is
// no server to start.
func connect() (c *cluster, skip string, err error) {
	dsn := os.Getenv(DSNEnv)
	var srv *server
	if dsn == "" {
		bin, err := findBinaries()
		if err != nil {
			return nil, err.Error(), nil
		}
		if srv, err = startServer(bin); err != nil {
			return nil, "", err
		}
		dsn = srv.dsn
	}
	base, err := url.Parse(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("%s is not a URL", DSNEnv) // the URL may hold a password: not quoted
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("%s: not a PostgreSQL URL", DSNEnv)
	}
	admin := stdlib.OpenDB(*cfg)
	admin.SetMaxOpenConns(2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		if srv != nil {
			srv.stop()
		}
		return nil, "", fmt.Errorf("connect to postgres at %s: %w", base.Host, err)
	}
	return &cluster{admin: admin, base: base, server: srv}, "", nil
}

func (c *cluster) close() {
	c.admin.Close()
	if c.server != nil {
		c.server.stop()
	}
}
