//go:build e2e

package smoke

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot"
	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/gitcache"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// testBot runs one check of the GitHub App (the bot `catalogbot serve` runs, in process) on the pull
// request testPipeline checks: a signed pull_request delivery made from GitHub's real payload, the
// fake GitHub that checks every request against GitHub's OpenAPI description, the repository as the git
// remote, and bot.yaml's smoke section naming the lane's kind cluster and the bundle image archives. The
// check run must conclude success with the smoke stage's installs and upgrade in its output.
func testBot(ctx context.Context, t *testing.T, l lane, archives []string) {
	repo, base, head := smokeRepo(t, l)
	if out, err := exec.Command("git", "-C", repo, "update-ref", "refs/pull/1/head", head).CombinedOutput(); err != nil {
		t.Fatalf("refs/pull/1/head: %v\n%s", err, out)
	}
	const full, secret = "octo/catalog", "lane-webhook-secret-5c0e"
	gh := githubtest.New(t)
	gh.AddRepo(full)
	gh.SetRef(full, "heads/main", base)
	gh.AddPullRequest(full, githubtest.PullRequest{Number: 1, User: "catalog-admin", HeadSHA: head, BaseRef: "main", BaseSHA: base})

	cfg := bot.DefaultConfig()
	cfg.PublicURL = "http://catalogbot.test"
	cfg.GitHub = bot.GitHubConfig{APIURL: gh.URL, TokenEnv: "CATALOGBOT_LANE_TOKEN", Repository: full}
	cfg.Git.CacheDir = t.TempDir()
	cfg.Queue.Path = filepath.Join(t.TempDir(), "queue.db")
	cfg.Queue.ShutdownGrace = 0
	cfg.Checks.SkipImages = true
	cfg.Checks.ProgressInterval = -1
	cfg.Timeouts.Stage = 8 * time.Minute
	cfg.Smoke = bot.SmokeConfig{KindCluster: clusterE2E, ImageArchives: archives}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("bot.yaml: %v", err)
	}
	q, err := queue.Open(ctx, cfg.Queue.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	clients, err := ghclient.New(ghclient.Config{APIURL: gh.URL, Token: "ghs_lane"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bot.New(ctx, bot.Options{Config: cfg, Secrets: [][]byte{[]byte(secret)}, GitHub: clients, Queue: q,
		Git:    &gitcache.Cache{Dir: cfg.Git.CacheDir, URL: func(string, string) string { return repo }},
		Logger: bot.NewLogger(os.Stderr, slog.LevelInfo), StatusToken: "lane-status-token-3f9a1c"})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("bot: %v", err)
		}
	}()
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()

	start := time.Now()
	body := githubtest.Payload(t, "pull_request/opened.payload.json", map[string]any{
		"number": 1, "pull_request.number": 1, "pull_request.state": "open", "pull_request.draft": false,
		"pull_request.user.login": "catalog-admin", "pull_request.head.sha": head, "pull_request.base.sha": base,
		"pull_request.base.ref": "main", "sender.login": "catalog-admin",
		"repository.full_name": full, "repository.name": "catalog", "repository.owner.login": "octo", "repository.default_branch": "main",
	})
	resp := githubtest.Deliver(t, srv.URL+"/webhook", "pull_request", body, secret)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("delivery: %s", resp.Status)
	}
	var run githubtest.CheckRun
	for {
		if runs := gh.CheckRuns(full); len(runs) > 0 && runs[len(runs)-1].Status == "completed" {
			run = runs[len(runs)-1]
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no completed check run: %v", ctx.Err())
		case <-time.After(time.Second):
		}
	}
	t.Logf("bot check took %s: %s %q\n%s", time.Since(start).Round(time.Second), run.Conclusion, run.Output.Title, run.Output.Text)
	if run.HeadSHA != head || run.Conclusion != "success" {
		t.Fatalf("check run on %s: conclusion %s, want success on %s", run.HeadSHA, run.Conclusion, head)
	}
	if text := run.Output.Summary + run.Output.Text; !strings.Contains(text, "2 of 2 changed packages reached CSV Succeeded, 1 of 1 upgraded from the base catalog") {
		t.Errorf("the check run does not report the smoke installs:\n%s", text)
	}
}
