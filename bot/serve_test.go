package bot

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Serve, as `catalogbot serve` runs it: token mode for one repository, secrets and token from the
// environment, a real listener; a delivery is checked and merged; cancelling the context (SIGTERM) stops
// it cleanly.
func TestServeTokenMode(t *testing.T) {
	h := newHarness(t)
	h.shutdown() // Serve runs its own bot on its own database
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(1, "alice", head, main)

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "remotes", "octo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.git.Dir, filepath.Join(dir, "remotes", "octo", "catalog")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_SERVE_SECRET", testSecret)
	t.Setenv("TEST_SERVE_TOKEN", "ghp_servetoken123")
	cfgFile := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(cfgFile, []byte(`publicURL: http://catalogbot.test
webhook:
  secretEnv: [TEST_SERVE_SECRET]
github:
  apiURL: `+h.gh.URL+`
  tokenEnv: TEST_SERVE_TOKEN
  repository: octo/catalog
git:
  cacheDir: `+filepath.Join(dir, "git")+`
  urlTemplate: `+filepath.Join(dir, "remotes")+`/{owner}/{repo}
queue:
  path: `+filepath.Join(dir, "state", "queue.db")+`
  workers: 2
  shutdownGrace: 1s
checks:
  progressInterval: 0s
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	base, logs, stop := startServe(t, cfg, slog.LevelInfo)
	h.srv.URL = base
	h.waitFor("readiness", func() bool { return strings.TrimSpace(h.get("/readyz")) == "ready" })
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
	h.waitFor("the merge", func() bool { merged, _ := h.gh.Merged(repoFull, 1); return merged })
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 1 || runs[0].Conclusion != "success" || runs[0].Updates < 3 {
		t.Errorf("check runs %+v: want one success with per-stage updates", runs)
	}
	stop()
	out := logs.String()
	if strings.Contains(out, "ghp_servetoken123") || strings.Contains(out, testSecret) {
		t.Error("the logs contain the token or the secret")
	}
	for _, want := range []string{`"msg":"catalogbot serving"`, `"auth":"token for octo/catalog"`, `"msg":"stopped"`} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
}
