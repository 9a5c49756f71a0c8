package bot

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/pgtest"
)

// queue.databaseURLEnv names a variable; the URL (with its password) is never accepted in bot.yaml, and no
// error repeats it.
func TestQueueDatabaseURLConfig(t *testing.T) {
	const url = "postgres://bot:pa55word@db.internal/catalogbot"
	base := "publicURL: https://x\ngithub: {appID: 1, privateKeyFile: k}\n"
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		yaml string
		ok   bool
	}{
		"variable":             {base + "queue: {databaseURLEnv: CATALOGBOT_DATABASE_URL}\n", true},
		"URL in bot.yaml":      {base + "queue: {databaseURLEnv: \"" + url + "\"}\n", false},
		"neither path nor URL": {base + "queue: {path: \"\"}\n", false},
		"path only (SQLite)":   {base + "queue: {path: /var/lib/catalogbot/q.db}\n", true},
	} {
		file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(file, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(file)
		if (err == nil) != tc.ok || (err != nil && (diag.CategoryOf(err) != diag.Usage || strings.Contains(err.Error(), "pa55word"))) {
			t.Errorf("%s: %v", name, err)
		}
	}

	cfg := DefaultConfig()
	if dsn, err := cfg.QueueDSN(); err != nil || dsn != cfg.Queue.Path {
		t.Errorf("without databaseURLEnv: %q, %v; want the SQLite path", dsn, err)
	}
	cfg.Queue.DatabaseURLEnv = "TEST_QUEUE_URL"
	t.Setenv("TEST_QUEUE_URL", "")
	if _, err := cfg.QueueDSN(); err == nil || diag.CategoryOf(err) != diag.Usage {
		t.Errorf("empty variable: %v", err)
	}
	t.Setenv("TEST_QUEUE_URL", "mysql://bot:pa55word@db/catalogbot")
	if _, err := cfg.QueueDSN(); err == nil || strings.Contains(err.Error(), "pa55word") {
		t.Errorf("not a PostgreSQL URL: %v", err)
	}
	t.Setenv("TEST_QUEUE_URL", url+"\n")
	if dsn, err := cfg.QueueDSN(); err != nil || dsn != url {
		t.Errorf("QueueDSN = %q, %v", dsn, err)
	}
}

// Serve on PostgreSQL: the logs name the database as host/dbname and never contain the password, nor does
// the error when the password is wrong.
func TestServeOnPostgresNeverLogsThePassword(t *testing.T) {
	dsn := pgtest.Start(t)
	password := pgtest.Password(dsn)
	gh := githubtest.New(t)
	dir := t.TempDir()
	t.Setenv("TEST_SERVE_SECRET", testSecret)
	t.Setenv("TEST_SERVE_TOKEN", "ghp_servetoken123")
	t.Setenv("TEST_DATABASE_URL", dsn)
	cfg := DefaultConfig()
	cfg.PublicURL = publicURL
	cfg.Webhook.SecretEnv = []string{"TEST_SERVE_SECRET"}
	cfg.GitHub = GitHubConfig{APIURL: gh.URL, TokenEnv: "TEST_SERVE_TOKEN", Repository: repoFull}
	cfg.Git.CacheDir = filepath.Join(dir, "git")
	cfg.Queue.Path = filepath.Join(dir, "unused", "queue.db")
	cfg.Queue.DatabaseURLEnv = "TEST_DATABASE_URL"
	cfg.Queue.ShutdownGrace = 0
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	base, logs, stop := startServe(t, cfg, slog.LevelDebug)
	deadline := time.Now().Add(10 * time.Second)
	for !ready(base) {
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 10s:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	out := logs.String()
	if strings.Contains(out, password) || !strings.Contains(out, `"queue":"`+queue.Describe(dsn)+`"`) {
		t.Errorf("logs must name %s and not contain the password:\n%s", queue.Describe(dsn), out)
	}
	if _, err := os.Stat(filepath.Join(dir, "unused")); err == nil {
		t.Error("Serve created the SQLite directory though the queue is on PostgreSQL")
	}

	u, _ := url.Parse(dsn)
	u.User = url.UserPassword("postgres", "not-"+password)
	t.Setenv("TEST_DATABASE_URL", u.String())
	logs = &syncBuffer{}
	err := Serve(context.Background(), cfg, logs, slog.LevelDebug, nil)
	if err == nil || diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("Serve with a wrong password: %v, want a usage error", err)
	}
	if msg := err.Error() + logs.String(); strings.Contains(msg, password) || !strings.Contains(msg, queue.Describe(dsn)) {
		t.Errorf("error %q must name the database and not contain the password", err)
	}
}

// startServe runs Serve on a loopback port; stop cancels it and fails the test on Serve's error or when
// it does not stop within 15 s.
func startServe(t *testing.T, cfg *Config, level slog.Level) (base string, logs *syncBuffer, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	logs = &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg, logs, level, ln) }()
	return "http://" + ln.Addr().String(), logs, func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("Serve did not stop")
		}
	}
}

func ready(base string) bool {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) == "ready"
}
