package bot

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// replica is one more bot process on the harness's database: its own HTTP handler, workers, clone cache
// and logs, the same GitHub and git remote.
type replica struct {
	bot  *Bot
	q    *queue.Queue
	srv  *httptest.Server
	logs *syncBuffer
}

// replica starts another bot on h's database; it stops when the test ends.
func (h *harness) replica() *replica {
	t := h.t
	t.Helper()
	cfg := *h.cfg
	cfg.Git.CacheDir = filepath.Join(t.TempDir(), "git")
	logs := &syncBuffer{}
	b, q, err := buildBot(&cfg, h.dbPath, h.gh.URL, h.git.Dir, logs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	r := &replica{bot: b, q: q, srv: httptest.NewServer(b.Handler()), logs: logs}
	t.Cleanup(func() {
		r.srv.Close()
		cancel()
		h.block.unblock()
		if err := <-done; err != nil {
			t.Errorf("replica: %v", err)
		}
		q.Close()
	})
	return r
}

// postTo sends a signed delivery to the bot at url and returns the status.
func postTo(t *testing.T, url, event, delivery string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/webhook", bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-Hub-Signature-256", signed(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Two bot replicas (two HTTP handlers, two worker pools, two clone caches) share one PostgreSQL database
// and one GitHub. Four repositories have one pull request each; every delivery (opened, then a
// synchronize of the same head) reaches both replicas at once, as a load balancer retrying would send it,
// while the first check of each is held in its images stage. Each delivery becomes one job (one replica
// answers 202, the other 200 duplicate); every pull request is checked and merged exactly once, at its
// head; both replicas execute jobs.
func TestTwoReplicasSharePostgres(t *testing.T) {
	// Two workers each: a replica whose workers are all busy leaves the next job to the other one.
	h := newHarness(t, withPostgres, func(h *harness) { h.cfg.Queue.Workers = 2 })
	other := h.replica()
	urls := []string{h.srv.URL, other.srv.URL}
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	repos := []string{repoFull, "octo/catalog-2", "octo/catalog-3", "octo/catalog-4"}
	for i, repo := range repos {
		if repo != repoFull {
			h.gh.AddRepo(repo)
			h.gh.SetRef(repo, "heads/main", main)
		}
		n := i + 1
		h.gh.AddPullRequest(repo, githubtest.PullRequest{Number: n, User: "alice", HeadSHA: head, BaseSHA: main,
			HeadRef: fmt.Sprintf("alice/change-%d", n), Title: fmt.Sprintf("Change %d", n)})
		h.git.SetPull(n, head)
	}

	h.block.block() // checks wait in their images stage until every delivery is in
	var mu sync.Mutex
	statuses := map[string][]int{} // delivery → the answers of both replicas
	var wg sync.WaitGroup
	for i, repo := range repos {
		n := i + 1
		edits := prEdits(n, "alice", head, main, map[string]any{"repository.full_name": repo,
			"repository.name": strings.TrimPrefix(repo, "octo/")})
		for _, file := range []string{"pull_request/opened.payload.json", "pull_request/synchronize.payload.json"} {
			body := payload(t, file, edits)
			delivery := fmt.Sprintf("replicas-%d-%s", n, filepath.Base(file))
			for _, url := range urls {
				wg.Go(func() {
					status := postTo(t, url, "pull_request", delivery, body)
					mu.Lock()
					statuses[delivery] = append(statuses[delivery], status)
					mu.Unlock()
				})
			}
		}
		wg.Wait() // the synchronize after the opened delivery, as GitHub orders them
	}
	h.block.unblock()
	h.waitIdle()

	for delivery, got := range statuses {
		accepted, dup := 0, 0
		for _, s := range got {
			switch s {
			case http.StatusAccepted:
				accepted++
			case http.StatusOK:
				dup++
			}
		}
		if accepted != 1 || dup != 1 {
			t.Errorf("delivery %s answered %v, want one 202 and one 200 duplicate", delivery, got)
		}
	}
	jobs, err := h.q.List(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	perDelivery := map[string]int{}
	for _, j := range jobs {
		if strings.HasPrefix(j.Delivery, "replicas-") {
			perDelivery[j.Delivery]++
		}
	}
	if len(perDelivery) != len(statuses) {
		t.Errorf("%d deliveries became jobs, want %d", len(perDelivery), len(statuses))
	}
	for d, n := range perDelivery {
		if n != 1 {
			t.Errorf("delivery %s became %d jobs", d, n)
		}
	}
	merges := map[string]int{}
	for _, r := range h.gh.Requests() {
		if r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/merge") {
			merges[r.Path]++
		}
	}
	for i, repo := range repos {
		n := i + 1
		if merged, at := h.gh.Merged(repo, n); !merged || at != head {
			t.Errorf("%s#%d: merged %v at %s, want merged at the head", repo, n, merged, at)
		}
		if path := fmt.Sprintf("/repos/%s/pulls/%d/merge", repo, n); merges[path] != 1 {
			t.Errorf("%s#%d: %d merge requests, want 1", repo, n, merges[path])
		}
		success := false
		for _, cr := range h.gh.CheckRuns(repo) {
			success = success || (cr.HeadSHA == head && cr.Conclusion == "success")
		}
		if !success {
			t.Errorf("%s#%d has no successful check run on its head", repo, n)
		}
	}
	done := []int{strings.Count(h.logs.String(), `"msg":"job done"`), strings.Count(other.logs.String(), `"msg":"job done"`)}
	if done[0] == 0 || done[1] == 0 {
		t.Errorf("jobs done per replica %v: want both replicas to work\nsecond replica logs:\n%s", done, other.logs.String())
	}
	t.Logf("jobs done per replica %v", done)
}

// TestWebhookBurstPostgres is the small burst of TestWebhookBurst with the queue on PostgreSQL.
func TestWebhookBurstPostgres(t *testing.T) {
	if os.Getenv("CATALOGBOT_BENCH_WEBHOOKS") == "1" {
		t.Skip("the benchmark chooses its backend with CATALOGBOT_BENCH_QUEUE")
	}
	t.Setenv("CATALOGBOT_BENCH_QUEUE", "postgres")
	TestWebhookBurst(t)
}
